package cmd

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/stickyio"
)

// TestTableWidthOfTheRunsOutput: a table printed by a run is fit to the
// stream standard output is, though the run writes it through its output
// writer (tty.Width says the rest).
func TestTableWidthOfTheRunsOutput(t *testing.T) {
	f, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := &stickyio.Output{Ctx: context.Background(), W: f}
	if got := stream(out); got != f {
		t.Errorf("the stream of the run's output is %v, want the file itself", got)
	}
	if got := stream(f); got != f {
		t.Errorf("the stream of a file is %v, want the file", got)
	}
}

// TestLogsTableFitsTerminal: on an 80-column terminal the sample's table
// report has no wider line, keeps the budget violation's whole detail, and
// lists the addresses by hits; --top cuts the list and says so.
func TestLogsTableFitsTerminal(t *testing.T) {
	run := func(tty bool, columns string, extra ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		env := &Env{Stdout: &out, Stderr: &errb, StdoutTTY: tty, Now: func() time.Time { return fixedNow },
			Getenv: func(k string) string {
				switch k {
				case "COLUMNS":
					return columns
				case "HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME":
					return t.TempDir()
				}
				return ""
			}}
		args := append(append([]string{"logs", "--format", "table", "--no-cache"}, extra...), sampleArgs...)
		if code := Run(context.Background(), env, args); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		return out.String()
	}
	out := run(true, "")
	for i, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > 80 {
			t.Errorf("line %d is %d wide: %q", i+1, n, line)
		}
	}
	if !strings.Contains(out, "(line 53 of") {
		t.Errorf("the budget violation's detail is cut:\n%s", out)
	}
	first := strings.Index(out, "79.139.58.121") // 21 hits
	if second := strings.Index(out, "192.0.2.66"); first < 0 || second < first || strings.Index(out, "79.139.58.98") < second {
		t.Errorf("addresses not by hits:\n%s", out)
	}
	out = run(false, "", "--top", "2")
	if !strings.Contains(out, "4 more addresses with fewer hits are left out") || strings.Contains(out, "79.139.58.98 ") {
		t.Errorf("--top 2 lists more than 2 addresses, or does not say so:\n%s", out)
	}
	for _, line := range strings.Split(run(false, "60"), "\n") {
		if utf8.RuneCountInString(line) > 60 {
			t.Errorf("COLUMNS=60 to a pipe: line %q is wider", line)
		}
	}
}

// TestLogsHTMLNotToTerminal: the HTML page is for a file, never for a
// terminal; the default format on a terminal stays table.
func TestLogsHTMLNotToTerminal(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"logs", "--format", "html", "--no-cache"}, fail.ExitUsage, "> report.html"},
		{[]string{"logs", "--no-cache"}, 0, "ADDRESSES CLAIMING TO BE LOHISOFTBOT"},
	} {
		var out, errb bytes.Buffer
		env := &Env{Stdout: &out, Stderr: &errb, StdoutTTY: true, Now: func() time.Time { return fixedNow },
			Getenv: func(k string) string {
				if k == "HOME" || k == "XDG_CACHE_HOME" || k == "XDG_CONFIG_HOME" {
					return t.TempDir()
				}
				return ""
			}}
		code := Run(context.Background(), env, append(tc.args, sampleArgs...))
		if code != tc.code || !strings.Contains(out.String()+errb.String(), tc.want) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s%s", tc.args, code, tc.code, tc.want, errb.String(), out.String())
		}
		if strings.Contains(out.String(), "<html") || strings.Contains(out.String(), "<!DOCTYPE") {
			t.Errorf("%v: HTML written to a terminal", tc.args)
		}
	}
}
