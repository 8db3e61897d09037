package cmd

import (
	"errors"

	"github.com/spf13/cobra"
)

// newEmitCmd is a placeholder until the command is built.
func newEmitCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:    "emit",
		Hidden: true,
		RunE: func(c *cobra.Command, _ []string) error {
			return errors.New("emit: not available in this build")
		},
	}
}
