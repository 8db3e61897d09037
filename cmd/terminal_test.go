package cmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair and returns its terminal end.
func openPTY(t *testing.T) (tty *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	fd := int(ptm.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty
}

// TestIsTerminal checks that /dev/null, a character device, is not taken
// for a terminal (`logs >/dev/null` writes JSON, as to any file), and that
// a pseudo-terminal is.
func TestIsTerminal(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(null) {
		t.Errorf("%s is taken for a terminal", os.DevNull)
	}
	f, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("a plain file is taken for a terminal")
	}
	if tty := openPTY(t); !isTerminal(tty) {
		t.Errorf("the pseudo-terminal %s is not taken for a terminal", tty.Name())
	}
}

func TestTableWidth(t *testing.T) {
	tty := openPTY(t)
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 133}); err != nil {
		t.Fatal(err)
	}
	unsized := openPTY(t) // a terminal that reports no size
	env := func(columns string, stdout any, tty bool) *Env {
		e := &Env{StdoutTTY: tty, Getenv: func(k string) string {
			if k == "COLUMNS" {
				return columns
			}
			return ""
		}}
		if f, ok := stdout.(*os.File); ok {
			e.Stdout = f
		} else {
			e.Stdout = &bytes.Buffer{}
		}
		return e
	}
	tests := []struct {
		name string
		env  *Env
		want int
	}{
		{"COLUMNS wins over the terminal", env("100", tty, true), 100},
		{"COLUMNS for a pipe", env("120", nil, false), 120},
		{"the terminal's size", env("", tty, true), 133},
		{"a bad COLUMNS is ignored", env("wide", tty, true), 133},
		{"a zero COLUMNS is ignored", env("0", tty, true), 133},
		{"a terminal without a size", env("", unsized, true), 80},
		{"a terminal not a file", env("", nil, true), 80},
		{"a pipe has no limit", env("", nil, false), 0},
	}
	for _, tc := range tests {
		if got := tableWidth(tc.env); got != tc.want {
			t.Errorf("%s: width %d, want %d", tc.name, got, tc.want)
		}
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
		{[]string{"logs", "--format", "html", "--no-cache"}, ExitUsage, "> report.html"},
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
