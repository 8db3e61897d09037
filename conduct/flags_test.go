package conduct

import (
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// TestFlagsCheck checks that each value that makes no sense is refused as
// a usage error naming the flag, its value and what is allowed, and that
// the defaults and the edges allowed pass.
func TestFlagsCheck(t *testing.T) {
	def := DefaultFlags()
	if err := def.Check(); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
	edge := Flags{Budget: 1, BudgetWindow: time.Nanosecond}
	if err := edge.Check(); err != nil {
		t.Fatalf("the least values allowed: %v", err)
	}
	for _, tc := range []struct {
		name string
		f    func(*Flags)
		want string
	}{
		{"budget", func(f *Flags) { f.Budget = 0 }, "--budget 0: give a number of pages of 1 or more, such as 20"},
		{"window", func(f *Flags) { f.BudgetWindow = 0 }, "--budget-window 0s: give a duration above 0, such as 24h"},
		{"pause", func(f *Flags) { f.MinPause = -time.Second }, "--min-pause -1s: give a duration of 0 or more, such as 1s"},
		{"backoff", func(f *Flags) { f.MinBackoff = -time.Minute }, "--min-backoff -1m0s: give a duration of 0 or more, such as 30s"},
		{"violations", func(f *Flags) { f.MaxViolations = -1 }, "--max-violations -1: give a number of 0 (list all) or more, such as 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := DefaultFlags()
			tc.f(&f)
			err := f.Check()
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if fail.KindOf(err) != fail.Usage {
				t.Fatalf("kind %d, want a usage error", fail.KindOf(err))
			}
		})
	}
}

// TestFlagsOverrides checks SPEC §10's rule: a flag given overrides every
// crawler's promise, even at its default value, and only then; without
// word of what was given, a value other than the default overrides.
func TestFlagsOverrides(t *testing.T) {
	def := DefaultFlags()
	p := crawler.DefaultProfile()
	if def.Budget != p.Conduct.Budget.Pages || def.BudgetWindow != p.Conduct.Budget.Window || def.MinPause != p.Conduct.MinPause {
		t.Fatalf("defaults %+v are not the default crawler's promises %+v", def, p.Conduct)
	}
	givenOnly := func(names ...string) func(string) bool {
		return func(n string) bool {
			for _, g := range names {
				if g == n {
					return true
				}
			}
			return false
		}
	}
	for _, tc := range []struct {
		name                   string
		f                      Flags
		given                  func(string) bool
		budget, pause, backoff bool
	}{
		{"none given", def, givenOnly(), false, false, false},
		{"budget at its default, given", def, givenOnly("budget"), true, false, false},
		{"window given", def, givenOnly("budget-window"), true, false, false},
		{"pause at its default, given", def, givenOnly("min-pause"), false, true, false},
		{"backoff given", def, givenOnly("min-backoff"), false, false, true},
		{"max-violations is no override", def, givenOnly("max-violations"), false, false, false},
		{"unknown, all defaults", def, nil, false, false, false},
		{"unknown, budget moved", Flags{Budget: 5, BudgetWindow: def.BudgetWindow, MinPause: def.MinPause, MinBackoff: def.MinBackoff}, nil, true, false, false},
		{"unknown, backoff moved", Flags{Budget: def.Budget, BudgetWindow: def.BudgetWindow, MinPause: def.MinPause, MinBackoff: 2 * time.Minute}, nil, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ov := tc.f.Overrides(tc.given)
			if (ov.Budget != nil) != tc.budget || (ov.MinPause != nil) != tc.pause || (ov.MinBackoff != nil) != tc.backoff {
				t.Fatalf("overrides budget %v pause %v backoff %v, want %v %v %v", ov.Budget != nil, ov.MinPause != nil, ov.MinBackoff != nil, tc.budget, tc.pause, tc.backoff)
			}
			if ov.Budget != nil && (ov.Budget.Pages != tc.f.Budget || ov.Budget.Window != tc.f.BudgetWindow) {
				t.Fatalf("budget %+v, want %d per %s", *ov.Budget, tc.f.Budget, tc.f.BudgetWindow)
			}
			if ov.MinBackoff != nil && *ov.MinBackoff != tc.f.MinBackoff {
				t.Fatalf("backoff %s, want %s", *ov.MinBackoff, tc.f.MinBackoff)
			}
			if cfg := ConfigOf(p, ov); cfg.Budget != tc.f.Budget || cfg.MinBackoff != tc.f.MinBackoff {
				t.Fatalf("the default crawler held to %d pages and %s backoff, want the flags' %d and %s", cfg.Budget, cfg.MinBackoff, tc.f.Budget, tc.f.MinBackoff)
			}
		})
	}
}
