package cmd

import (
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/lohisoft/lohibot-audit/internal/progress"
	"golang.org/x/term"
)

// defaultColumns is the width of a terminal whose size cannot be read.
const defaultColumns = 80

// tableWidth returns the columns that a table printed to standard output
// may take: COLUMNS when it holds a positive number, else the terminal's
// width, else 80 on a terminal; 0 (no limit) when standard output is not
// a terminal and COLUMNS is not set.
func tableWidth(env *Env) int { return termWidth(env, env.Stdout, env.StdoutTTY) }

// stderrWidth is tableWidth for standard error, where progress lines go.
func stderrWidth(env *Env) int { return termWidth(env, env.Stderr, env.StderrTTY) }

func termWidth(env *Env, w io.Writer, tty bool) int {
	if env.Getenv != nil {
		if n, err := strconv.Atoi(strings.TrimSpace(env.Getenv("COLUMNS"))); err == nil && n > 0 {
			return n
		}
	}
	if !tty {
		return 0
	}
	if f, ok := w.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return defaultColumns
}

// progressWanted says whether progress lines go to stderr: a terminal,
// not CI, not a dumb terminal, and no --no-progress.
func progressWanted(env *Env, o *auditOptions) bool {
	return env.StderrTTY && !o.NoProgress && env.Getenv("CI") == "" && env.Getenv("TERM") != "dumb"
}

// progressOptions draws progress lines to the width of standard error,
// asked at each redraw.
func progressOptions(env *Env) progress.Options {
	return progress.Options{Width: func() int { return stderrWidth(env) }}
}
