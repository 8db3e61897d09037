package conduct

import (
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// Flags are the conduct settings a run is given (SPEC §1: --budget,
// --budget-window, --min-pause, --min-backoff, --max-violations), as the
// commands that check conduct (logs, emit, watch, merge) share them.
type Flags struct {
	Budget       int
	BudgetWindow time.Duration
	MinPause     time.Duration
	MinBackoff   time.Duration
	// MaxViolations is how many violations are listed per site and kind
	// (Config.MaxViolations; 0: all).
	MaxViolations int
}

// DefaultFlags are the flags' defaults: the default crawler's promises,
// and a thousand violations listed per site and kind.
func DefaultFlags() Flags {
	c := ConfigOf(crawler.DefaultProfile(), Overrides{})
	return Flags{Budget: c.Budget, BudgetWindow: c.BudgetWindow, MinPause: c.MinPause,
		MinBackoff: c.MinBackoff, MaxViolations: 1000}
}

// Check rejects values that make no sense, naming the flag, its value and
// what is allowed: a usage error (internal/fail).
func (f Flags) Check() error {
	switch {
	case f.Budget < 1:
		return fail.Usagef("--budget %d: give a number of pages of 1 or more, such as 20", f.Budget)
	case f.BudgetWindow <= 0:
		return fail.Usagef("--budget-window %s: give a duration above 0, such as 24h", f.BudgetWindow)
	case f.MinPause < 0:
		return fail.Usagef("--min-pause %s: give a duration of 0 or more, such as 1s", f.MinPause)
	case f.MinBackoff < 0:
		return fail.Usagef("--min-backoff %s: give a duration of 0 or more, such as 30s", f.MinBackoff)
	case f.MaxViolations < 0:
		return fail.Usagef("--max-violations %d: give a number of 0 (list all) or more, such as 1000", f.MaxViolations)
	}
	return nil
}

// Overrides are the flags that hold every crawler of the run to them
// (SPEC §10): a flag overrides when it was given, even at its default
// value, where given says whether the flag of that name ("budget",
// "budget-window", "min-pause", "min-backoff") was given on the command
// line or in the config file. With given nil, a flag overrides when its
// value is not its default. For the default crawler, whose promises are
// the defaults, the flags decide alone.
func (f Flags) Overrides(given func(flag string) bool) Overrides {
	def := DefaultFlags()
	set := func(name string, notDefault bool) bool {
		if given != nil {
			return given(name)
		}
		return notDefault
	}
	var ov Overrides
	if set("budget", f.Budget != def.Budget) || set("budget-window", f.BudgetWindow != def.BudgetWindow) {
		ov.Budget = &crawler.Budget{Pages: f.Budget, Window: f.BudgetWindow}
	}
	if set("min-pause", f.MinPause != def.MinPause) {
		ov.MinPause = &f.MinPause
	}
	if set("min-backoff", f.MinBackoff != def.MinBackoff) {
		ov.MinBackoff = &f.MinBackoff
	}
	return ov
}
