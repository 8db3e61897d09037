package cmd

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"
)

// defaultColumns is the width of a terminal whose size cannot be read.
const defaultColumns = 80

// tableWidth returns the columns that a table printed to standard output
// may take: COLUMNS when it holds a positive number, else the terminal's
// width, else 80 on a terminal; 0 (no limit) when standard output is not
// a terminal and COLUMNS is not set.
func tableWidth(env *Env) int {
	if env.Getenv != nil {
		if n, err := strconv.Atoi(strings.TrimSpace(env.Getenv("COLUMNS"))); err == nil && n > 0 {
			return n
		}
	}
	if !env.StdoutTTY {
		return 0
	}
	if f, ok := env.Stdout.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return defaultColumns
}
