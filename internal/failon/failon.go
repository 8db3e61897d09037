// Package failon is the rule of --fail-on: which findings of a run call
// for exit 1 (spoofed hits or verdicts, conduct violations, or either),
// and how to say what matched.
package failon

import (
	"strings"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/nouns"
)

// Values are the values --fail-on takes ("" is none of them: no exit 1
// for findings).
var Values = []string{"spoofed", "violations", "any"}

// Check returns a usage error for a value that is not "" or one of
// Values.
func Check(failOn string) error {
	_, err := Match(failOn, 0, 0)
	return err
}

// Match says whether failOn asks for exit 1 given the findings.
func Match(failOn string, spoofed int64, violations int) (bool, error) {
	switch failOn {
	case "":
		return false, nil
	case "spoofed":
		return spoofed > 0, nil
	case "violations":
		return violations > 0, nil
	case "any":
		return spoofed > 0 || violations > 0, nil
	}
	return false, fail.Usagef("unknown --fail-on %q: use spoofed, violations or any", failOn)
}

// Matched says what failOn matched, the spoofed findings counted by the
// nouns spoofedOne and spoofedMany: "2 spoofed hits and 1 conduct
// violation".
func Matched(failOn string, spoofed int64, spoofedOne, spoofedMany string, violations int) string {
	var what []string
	if failOn != "violations" && spoofed > 0 {
		what = append(what, nouns.Count(spoofed, spoofedOne, spoofedMany))
	}
	if failOn != "spoofed" && violations > 0 {
		what = append(what, nouns.Count(violations, "conduct violation", "conduct violations"))
	}
	return strings.Join(what, " and ")
}
