package cmd

import (
	"os"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/manual"
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

// Manual is what a command's man page says beyond its --help (see
// internal/manual).
type Manual = manual.Manual

// ManualEntry is one item of a man page's list: a name and what it means.
type ManualEntry = manual.Entry

// ManualOf returns the manual entries of c.
func ManualOf(c *cobra.Command) Manual { return manual.Of(c) }
