package cmd

import (
	"bytes"
	"fmt"
	"os"
	"testing"

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
