package cmd

import (
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/manual"
	"github.com/spf13/cobra"
)

// Every help file of the manual belongs to a command of the program, and
// every command that says more than its one line says it from there.
func TestHelpFilesAndCommandsAgree(t *testing.T) {
	root := newRootCmd(&Env{})
	if unused := manual.Describe(root, manualValues(crawler.DefaultProfile())); len(unused) > 0 {
		t.Errorf("help files no command takes: %v", unused)
	}
	// Commands that say only their one line: groups and the trivial.
	short := map[string]bool{"lohibot-audit format": true, "lohibot-audit ips show": true, "lohibot-audit version": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := c.CommandPath()
		if strings.HasPrefix(path, "lohibot-audit completion") || path == "lohibot-audit help" {
			return
		}
		if (c.Long == "" && c.Example == "") != short[path] {
			t.Errorf("%s: Long %d bytes, Example %d bytes", path, len(c.Long), len(c.Example))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
