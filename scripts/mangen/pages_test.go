package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/cmd"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestWritePagesCoversEveryCommand checks that each runnable command has a
// page that names it and documents each of its flags.
func TestWritePagesCoversEveryCommand(t *testing.T) {
	dir := t.TempDir()
	when := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	if err := writePages(cmd.NewRootCommand(), dir, when); err != nil {
		t.Fatal(err)
	}
	var walk func(c *cobra.Command)
	checked := 0
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c.HasParent() {
			return
		}
		name := strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1"
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("no page for %q: %v", c.CommandPath(), err)
			return
		}
		page := string(b)
		if !strings.Contains(page, `.TH "LOHIBOT-AUDIT" "1" "Dec 2026"`) {
			t.Errorf("%s: header lacks the section or the date:\n%.200s", name, page)
		}
		c.NonInheritedFlags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			if !strings.Contains(page, `\fB--`+f.Name+`\fP`) {
				t.Errorf("%s does not document --%s", name, f.Name)
			}
		})
		checked++
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cmd.NewRootCommand())
	if checked < 8 {
		t.Errorf("checked %d pages, want every command (logs, verify, robots, emit, ips, ...)", checked)
	}
}

func TestPageDate(t *testing.T) {
	for _, tc := range []struct {
		date, epoch string
		want        string
		wantErr     bool
	}{
		{date: "2026-12-02", want: "2026-12-02"},
		{epoch: "1764633600", want: "2025-12-02"},
		{date: "2026-12-02", epoch: "0", want: "2026-12-02"},
		{date: "02/12/2026", wantErr: true},
		{epoch: "yesterday", wantErr: true},
	} {
		got, err := pageDate(tc.date, tc.epoch)
		if (err != nil) != tc.wantErr {
			t.Errorf("pageDate(%q, %q) error = %v, want error %v", tc.date, tc.epoch, err, tc.wantErr)
			continue
		}
		if err == nil && got.Format(time.DateOnly) != tc.want {
			t.Errorf("pageDate(%q, %q) = %s, want %s", tc.date, tc.epoch, got.Format(time.DateOnly), tc.want)
		}
	}
}
