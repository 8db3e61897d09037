package cmd

import (
	"slices"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// complete asks the program, as a shell's completion script does, what
// follows args, and returns the offered words and the directive.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	code, out, errOut := runInMemory(t, "", append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %q: exit %d: %s", args, code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[:len(lines)-1], lines[len(lines)-1]
}

// Shell completion offers the values of --format, --fail-on, --log-format
// and --crawler, on every command that takes them.
func TestCompletionOffersFlagValues(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		want      []string
		directive string
	}{
		{[]string{"logs", "--format", ""}, []string{"table", "json", "yaml", "csv", "markdown", "html"}, ":4"},
		{[]string{"verify", "--format", ""}, []string{"table", "json", "yaml", "csv", "markdown"}, ":4"},
		{[]string{"robots", "test", "--format", ""}, []string{"text", "json"}, ":4"},
		{[]string{"ips", "show", "--format", ""}, []string{"table", "json", "yaml", "csv", "markdown"}, ":4"},
		{[]string{"logs", "--fail-on", ""}, []string{"spoofed", "violations", "any"}, ":4"},
		{[]string{"verify", "--fail-on", ""}, []string{"spoofed", "violations", "any"}, ":4"},
		{[]string{"logs", "--log-format", ""}, []string{"auto", "common", "combined", "vhost_combined", "json", "nginx:", "apache:", "syslog+", "container+"}, ":6"},
		{[]string{"watch", "--log-format", "syslog+"}, []string{"syslog+combined", "syslog+nginx:"}, ":6"},
		{[]string{"emit", "nftables", "--log-format", ""}, []string{"auto", "combined"}, ":6"},
		{[]string{"logs", "--crawler", ""}, []string{"lohisoftbot", "googlebot", "bingbot"}, ":0"},
		{[]string{"watch", "--crawler", ""}, []string{"lohisoftbot"}, ":0"},
		{[]string{"robots", "check", "--crawler", ""}, []string{"lohisoftbot", "googlebot"}, ":0"},
	} {
		got, directive := complete(t, tc.args...)
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q: offers %q, want %q among them", tc.args, got, w)
			}
		}
		if directive != tc.directive {
			t.Errorf("%q: directive %s, want %s", tc.args, directive, tc.directive)
		}
	}
	// The offered --format values are the ones the command takes.
	for _, args := range [][]string{{"logs"}, {"verify"}} {
		formats, _ := complete(t, append(args, "--format", "")...)
		for _, f := range formats {
			code, _, errOut := runInMemory(t, "", append(args, "--format", f, "--offline", "--no-cache", "-")...)
			if code == fail.ExitUsage && strings.Contains(errOut, "--format") {
				t.Errorf("%s --format %s, offered by completion, is refused: %s", args[0], f, errOut)
			}
		}
	}
}
