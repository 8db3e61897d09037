package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestConductFlagGivenOverrides checks SPEC §10's rule that a conduct flag
// overrides every crawler's promise when given, even at its default value,
// and only then.
func TestConductFlagGivenOverrides(t *testing.T) {
	for _, tt := range []struct {
		name                   string
		args                   []string
		budget, pause, backoff bool
		wantPages              int
		wantWindow             time.Duration
	}{
		{name: "none given", args: nil},
		{name: "budget at its default", args: []string{"--budget", "20"}, budget: true, wantPages: 20, wantWindow: 24 * time.Hour},
		{name: "window only", args: []string{"--budget-window", "1h"}, budget: true, wantPages: 20, wantWindow: time.Hour},
		{name: "pause at its default", args: []string{"--min-pause", "1s"}, pause: true},
		{name: "backoff", args: []string{"--min-backoff", "2m"}, backoff: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var o auditOptions
			fs := pflag.NewFlagSet("logs", pflag.ContinueOnError)
			addLogFlags(fs, &o)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			o.given = func(name string) bool { return flagGiven(fs, name) }
			ov := o.Flags.Overrides(o.given)
			if (ov.Budget != nil) != tt.budget || (ov.MinPause != nil) != tt.pause || (ov.MinBackoff != nil) != tt.backoff {
				t.Fatalf("overrides budget %v pause %v backoff %v, want %v %v %v", ov.Budget != nil, ov.MinPause != nil, ov.MinBackoff != nil, tt.budget, tt.pause, tt.backoff)
			}
			if tt.budget && (ov.Budget.Pages != tt.wantPages || ov.Budget.Window != tt.wantWindow) {
				t.Fatalf("budget %+v, want %d per %s", *ov.Budget, tt.wantPages, tt.wantWindow)
			}
		})
	}
}

// TestConfigFlagsAreGiven checks that a value from the config file counts
// as given for the conduct overrides, without counting as typed on the
// command line (emit refuses another target's flags only when typed).
func TestConfigFlagsAreGiven(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("budget: 20\nnft-table: inet mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := &Env{Stdin: strings.NewReader(""), Stdout: new(strings.Builder), Stderr: new(strings.Builder), Getenv: func(string) string { return "" }}
	root := newRootCmd(env)
	emitCmd, _, err := root.Find([]string{"emit"})
	if err != nil {
		t.Fatal(err)
	}
	if err := loadConfig(env, emitCmd, path); err != nil {
		t.Fatal(err)
	}
	fs := emitCmd.Flags()
	if !flagGiven(fs, "budget") || fs.Changed("budget") {
		t.Fatalf("budget from the config: given %v, changed %v; want given, not changed", flagGiven(fs, "budget"), fs.Changed("budget"))
	}
	if flagGiven(fs, "min-pause") {
		t.Fatal("min-pause, in neither the config nor the command line, counts as given")
	}
	if fs.Changed("nft-table") {
		t.Fatal("nft-table from the config counts as typed: a shared config would break emit cloudflare")
	}
}
