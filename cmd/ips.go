package cmd

import (
	"errors"

	"github.com/spf13/cobra"
)

// newIPsCmd is a placeholder until the command is built.
func newIPsCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:    "ips",
		Hidden: true,
		RunE: func(c *cobra.Command, _ []string) error {
			return errors.New("ips: not available in this build")
		},
	}
}
