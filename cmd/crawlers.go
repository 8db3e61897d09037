package cmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/parse"
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

// emitReportCrawlers chooses the crawlers of rules made from a report of
// several crawlers (audit.ReportCrawlers): those --crawler names, or every
// one the report holds. It returns the names, the profiles (nil for a
// name alone: its rules then hold only the report's addresses of it, and
// a block-spoofed WAF rule needs its profile file) and warnings.
func emitReportCrawlers(rep *audit.Report, report string, values []string) ([]string, []*crawler.Profile, []string, error) {
	var chosen []*crawler.Profile
	if len(values) > 0 && len(rep.Summary.Crawlers) > 0 {
		var err error
		if chosen, err = resolveCrawlers(values); err != nil {
			return nil, nil, nil, err
		}
	}
	names, profiles, err := audit.ReportCrawlers(rep, chosen)
	var missing *audit.NoCrawlerError
	switch {
	case errors.Is(err, audit.ErrOneCrawler):
		return nil, nil, nil, &exitError{code: ExitUsage, err: withHint(
			fmt.Errorf("report %s audits one crawler (it has no summary.crawlers), so --crawler cannot choose among its crawlers", report),
			"leave out --crawler, or make the report with 'lohibot-audit logs --crawler NAME... --format json'")}
	case errors.As(err, &missing):
		shown := make([]string, len(missing.Audited))
		for i, name := range missing.Audited {
			shown[i] = parse.EscapeControl(name)
		}
		return nil, nil, nil, usageError("report %s has no crawler %s: it audits %s", report, missing.Crawler, strings.Join(shown, ", "))
	case err != nil:
		return nil, nil, nil, err
	}
	var warnings []string
	for i, p := range profiles {
		if p == nil {
			warnings = append(warnings, fmt.Sprintf("crawler %s is not built in: its rules hold only the report's addresses of it, not its IP lists; give its profile with --crawler FILE (and every other crawler wanted)", parse.EscapeControl(names[i])))
		}
	}
	return names, profiles, warnings, nil
}
