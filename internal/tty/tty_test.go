package tty

import (
	"bytes"
	"fmt"
	"io"
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

// TestIs checks that /dev/null, a character device, is not taken for a
// terminal (`logs >/dev/null` writes JSON, as to any file), and that a
// pseudo-terminal is.
func TestIs(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if Is(null) {
		t.Errorf("%s is taken for a terminal", os.DevNull)
	}
	f, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if Is(f) {
		t.Error("a plain file is taken for a terminal")
	}
	if tty := openPTY(t); !Is(tty) {
		t.Errorf("the pseudo-terminal %s is not taken for a terminal", tty.Name())
	}
}

func TestWidth(t *testing.T) {
	tty := openPTY(t)
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 133}); err != nil {
		t.Fatal(err)
	}
	unsized := openPTY(t) // a terminal that reports no size
	columns := func(v string) func(string) string {
		return func(k string) string {
			if k == "COLUMNS" {
				return v
			}
			return ""
		}
	}
	pipe := &bytes.Buffer{}
	tests := []struct {
		name   string
		w      io.Writer
		isTTY  bool
		getenv func(string) string
		want   int
	}{
		{"COLUMNS wins over the terminal", tty, true, columns("100"), 100},
		{"COLUMNS for a pipe", pipe, false, columns("120"), 120},
		{"the terminal's size", tty, true, columns(""), 133},
		{"no environment", tty, true, nil, 133},
		{"a bad COLUMNS is ignored", tty, true, columns("wide"), 133},
		{"a zero COLUMNS is ignored", tty, true, columns("0"), 133},
		{"a terminal without a size", unsized, true, columns(""), 80},
		{"a terminal not a file", pipe, true, columns(""), 80},
		{"a pipe has no limit", pipe, false, columns(""), 0},
	}
	for _, tc := range tests {
		if got := Width(tc.w, tc.isTTY, tc.getenv); got != tc.want {
			t.Errorf("%s: width %d, want %d", tc.name, got, tc.want)
		}
	}
}
