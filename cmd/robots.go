package cmd

import (
	"errors"

	"github.com/spf13/cobra"
)

// newRobotsCmd is a placeholder until the command is built.
func newRobotsCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:    "robots",
		Hidden: true,
		RunE: func(c *cobra.Command, _ []string) error {
			return errors.New("robots: not available in this build")
		},
	}
}
