package cmd

import (
	"os"
	"time"

	"github.com/spf13/cobra"
)

// NewRootCommand returns the lohibot-audit command tree, for tools that
// document it (man pages) rather than run it. Its commands use the
// process's streams.
func NewRootCommand() *cobra.Command {
	return newRootCmd(&Env{
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Getenv: os.Getenv,
		Now:    time.Now,
	})
}
