package cmd

import (
	"errors"

	"github.com/spf13/cobra"
)

// newVerifyCmd is a placeholder until the command is built.
func newVerifyCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:    "verify",
		Hidden: true,
		RunE: func(c *cobra.Command, _ []string) error {
			return errors.New("verify: not available in this build")
		},
	}
}
