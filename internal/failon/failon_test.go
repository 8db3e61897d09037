package failon

import (
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// TestMatch asks each value about four runs: no findings, spoofed only,
// violations only, and both.
func TestMatch(t *testing.T) {
	runs := []struct {
		spoofed    int64
		violations int
	}{{0, 0}, {2, 0}, {0, 3}, {2, 3}}
	for failOn, want := range map[string][4]bool{
		"":           {false, false, false, false},
		"spoofed":    {false, true, false, true},
		"violations": {false, false, true, true},
		"any":        {false, true, true, true},
	} {
		for i, r := range runs {
			if got, err := Match(failOn, r.spoofed, r.violations); err != nil || got != want[i] {
				t.Errorf("Match(%q, %d spoofed, %d violations) = %v, %v; want %v", failOn, r.spoofed, r.violations, got, err, want[i])
			}
		}
	}
}

func TestCheck(t *testing.T) {
	for _, v := range append([]string{""}, Values...) {
		if err := Check(v); err != nil {
			t.Errorf("Check(%q) = %v; want nil", v, err)
		}
	}
	err := Check("spoofd")
	if err == nil || fail.KindOf(err) != fail.Usage || err.Error() != `unknown --fail-on "spoofd": use spoofed, violations or any` {
		t.Errorf("Check(spoofd) = %v; want the usage error naming the values", err)
	}
}

// TestMatched says only what the value asked about, each count with its
// noun in agreement.
func TestMatched(t *testing.T) {
	say := func(failOn string, spoofed int64, violations int) string {
		return Matched(failOn, spoofed, "spoofed hit", "spoofed hits", violations)
	}
	if got := say("any", 2, 1); got != "2 spoofed hits and 1 conduct violation" {
		t.Errorf("any: %q", got)
	}
	if got := say("any", 1, 0); got != "1 spoofed hit" {
		t.Errorf("any, spoofed only: %q", got)
	}
	if got := say("spoofed", 3, 7); got != "3 spoofed hits" {
		t.Errorf("spoofed: %q", got)
	}
	if got := say("violations", 3, 2); got != "2 conduct violations" {
		t.Errorf("violations: %q", got)
	}
}
