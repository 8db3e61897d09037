package render

import (
	"fmt"
	"strconv"
	"strings"
)

// DefaultTop is how many addresses a table on a terminal lists when no
// number is asked for.
const DefaultTop = 20

// Top is how many addresses the table and Markdown list, as asked for
// (--top: a flag value), or not asked for.
type Top struct {
	n   int
	set bool
}

func (t *Top) String() string {
	if !t.set {
		return ""
	}
	return strconv.Itoa(t.n)
}

func (t *Top) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return fmt.Errorf("%q is not a number of addresses (0 lists all)", s)
	}
	t.n, t.set = n, true
	return nil
}

func (t *Top) Type() string { return "N" }

// For is the Options.Top of output to a terminal or not: the number asked
// for, else DefaultTop on a terminal and all (0) elsewhere.
func (t Top) For(terminal bool) int {
	switch {
	case t.set:
		return t.n
	case terminal:
		return DefaultTop
	}
	return 0
}
