// Package tty answers what the program asks of the terminals it writes
// to: whether a stream is one, and how wide a line on it may be.
package tty

import (
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"
)

// DefaultColumns is the width of a terminal whose size cannot be read.
const DefaultColumns = 80

// Is reports whether f is a terminal. A character device that is not
// one, such as /dev/null, is not.
func Is(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// Width returns the columns a line written to w may take: COLUMNS (as
// getenv, which may be nil, says) when it holds a positive number, else
// the terminal's width when w is a terminal (isTTY) whose size can be
// read, else DefaultColumns on a terminal; 0 (no limit) when w is not a
// terminal and COLUMNS is not set.
func Width(w io.Writer, isTTY bool, getenv func(string) string) int {
	if getenv != nil {
		if n, err := strconv.Atoi(strings.TrimSpace(getenv("COLUMNS"))); err == nil && n > 0 {
			return n
		}
	}
	if !isTTY {
		return 0
	}
	if f, ok := w.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return DefaultColumns
}
