package cmd

import (
	"errors"

	"github.com/spf13/cobra"
)

func newLogsCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use: "logs",
		RunE: func(c *cobra.Command, _ []string) error {
			return errors.New("logs: not available in this build")
		},
	}
}
