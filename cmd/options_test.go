package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// TestTimeWindow checks --since and --until together through logs: a
// window that ends before it starts is a usage error, said before any
// input is read.
func TestTimeWindow(t *testing.T) {
	now := time.Date(2026, 12, 8, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		since, until string
		stderr       string // "" for a good window
	}{
		{since: "7d", until: "1d"},
		{since: "2026-12-01", until: "2026-12-02"},
		{since: "1d"},
		{until: "1d"},
		{since: "1d", until: "7d", stderr: "lohibot-audit: error: --since 2026-12-07T12:00:00Z is not before --until 2026-12-01T12:00:00Z: no request can be in that window\nlohibot-audit: hint: --since is where the window starts and --until where it ends: --since 7d --until 1d is from a week ago to a day ago\n"},
		{since: "2026-12-02", until: "2026-12-02", stderr: "lohibot-audit: error: --since 2026-12-02T00:00:00Z is not before --until 2026-12-02T00:00:00Z"},
		{since: "1w", until: "1d", stderr: `lohibot-audit: error: --since "1w" is neither an RFC 3339 time (2026-01-02T15:04:05Z) nor a duration back from now (24h, 7d)`},
	}
	for _, tc := range tests {
		t.Run(tc.since+".."+tc.until, func(t *testing.T) {
			since, until, err := audit.ParseWindow(tc.since, tc.until, now)
			if tc.stderr == "" {
				if err != nil || tc.since != "" && since.IsZero() || tc.until != "" && until.IsZero() {
					t.Fatalf("ParseWindow = %v, %v, %v; want a window", since, until, err)
				}
				return
			}
			// Through the command: exit 2 and no report, where a run that
			// read the (empty) stdin would write one.
			var out, errb bytes.Buffer
			env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Now: func() time.Time { return now }}
			code := Run(context.Background(), env, []string{"logs", "--offline", "--no-cache", "--since", tc.since, "--until", tc.until, "-"})
			if code != fail.ExitUsage || out.Len() != 0 || !strings.HasPrefix(errb.String(), tc.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing and %q", code, out.String(), errb.String(), tc.stderr)
			}
		})
	}
}

// TestIPListDefaultInHelp: --ip-list's default is "" (each crawler's own
// lists), and the help of every command that takes it still names the
// default crawler's list, the default SPEC documents.
func TestIPListDefaultInHelp(t *testing.T) {
	want := "(default: each crawler's own lists; LohiSoftBot's is https://lohisoft.com/bot/ips.json)"
	for _, args := range [][]string{{"logs"}, {"emit", "nftables"}, {"watch"}, {"verify"}, {"ips", "show"}, {"ips", "update"}} {
		code, out, errOut := runInMemory(t, "", append(args, "--help")...)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("%s --help: exit %d, no %q in:\n%s%s", strings.Join(args, " "), code, want, out, errOut)
		}
	}
}
