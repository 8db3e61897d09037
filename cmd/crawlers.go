package cmd

import (
	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/crawler"
)

// conductOverrides are the conduct flags moved away from their defaults,
// which hold every crawler of the run to them (SPEC §10). For the default
// crawler, whose promises are the defaults, the flags decide alone.
func conductOverrides(o *auditOptions) conduct.Overrides {
	// A flag overrides when it was given (SPEC §10), even at its default
	// value; without that knowledge, when its value is not the default.
	given := func(name string, notDefault bool) bool {
		if o.given != nil {
			return o.given(name)
		}
		return notDefault
	}
	var ov conduct.Overrides
	if given("budget", o.Budget != defaultBudget) || given("budget-window", o.BudgetWindow != defaultBudgetWindow) {
		ov.Budget = &crawler.Budget{Pages: o.Budget, Window: o.BudgetWindow}
	}
	if given("min-pause", o.MinPause != defaultMinPause) {
		ov.MinPause = &o.MinPause
	}
	if given("min-backoff", o.MinBackoff != defaultMinBackoff) {
		ov.MinBackoff = &o.MinBackoff
	}
	return ov
}

// crawlerTitle names the default crawler in help text and messages, by
// its first token.
var crawlerTitle = crawler.DefaultTitle()

// The conduct flags' defaults (SPEC §1): the default crawler's promises.
var (
	defaultConduct      = conduct.ConfigOf(crawler.DefaultProfile(), conduct.Overrides{})
	defaultBudget       = defaultConduct.Budget
	defaultBudgetWindow = defaultConduct.BudgetWindow
	defaultMinPause     = defaultConduct.MinPause
	defaultMinBackoff   = defaultConduct.MinBackoff
)

// defaultMaxViolations is --max-violations' default (SPEC §1).
const defaultMaxViolations = 1000
