package cmd

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/emit"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/verify"
)

// auditCrawlers are the crawlers audit.Run audits when --crawler names
// them (nil otherwise: the one default crawler, as always): each with its
// audit, named in the report, its list and its conduct.
func auditCrawlers(id *identity, o *auditOptions, since, until time.Time, named bool) []audit.Crawler {
	if !named {
		return nil
	}
	out := make([]audit.Crawler, len(id.Profiles))
	for i, p := range id.Profiles {
		out[i] = audit.Crawler{
			Name:    p.Name,
			Audit:   &audit.Audit{Since: since, Until: until, Settled: id.Verifiers[i].Settled, Crawler: p.Name},
			Listed:  id.Lists[i].Contains,
			Conduct: crawlerConduct(p, o),
			Robots:  p.Conduct.Robots,
		}
	}
	return out
}

// crawlerClaims is the token set of the crawlers named, one group each;
// nil for the default crawler alone.
func crawlerClaims(profiles []*crawler.Profile, named bool) *parse.TokenSet {
	if !named {
		return nil
	}
	groups := make([][]string, len(profiles))
	for i, p := range profiles {
		groups[i] = p.Tokens
	}
	return parse.NewTokenSet(groups)
}

// ipListSources is the report's ip_list_source: the list in force, or
// with crawlers named, each one's ("lohisoftbot: URL; googlebot: …").
func ipListSources(id *identity, named bool) string {
	if !named {
		return id.List.Source
	}
	parts := make([]string, len(id.Profiles))
	for i, p := range id.Profiles {
		parts[i] = p.Name + ": " + id.Lists[i].Source
	}
	return strings.Join(parts, "; ")
}

// crawlerConduct is the conduct configuration for p: its promises (a
// promise not made is not checked), each overridden by its flag when the
// flag is not at its default, for every crawler of the run (SPEC §10).
// For LohiSoftBot, whose promises are the flags' defaults, it is the
// flags. Whether robots.txt is checked is p.Conduct.Robots.
func crawlerConduct(p *crawler.Profile, o *auditOptions) conduct.Config {
	c := p.Conduct
	cfg := conduct.Config{Token: p.RobotsToken, MinPause: c.MinPause}
	if c.Budget != nil {
		cfg.Budget, cfg.BudgetWindow = c.Budget.Pages, c.Budget.Window
	}
	if c.Backoff != nil {
		cfg.MinBackoff = c.Backoff.Min
	}
	if o.Budget != defaultBudget || o.BudgetWindow != defaultBudgetWindow {
		cfg.Budget, cfg.BudgetWindow = o.Budget, o.BudgetWindow
	}
	if o.MinPause != defaultMinPause {
		cfg.MinPause = o.MinPause
	}
	if o.MinBackoff != defaultMinBackoff {
		cfg.MinBackoff = o.MinBackoff
	}
	return cfg
}

// The conduct flags' defaults (SPEC §1), LohiSoftBot's promises.
const (
	defaultBudget       = 20
	defaultBudgetWindow = 24 * time.Hour
	defaultMinPause     = time.Second
	defaultMinBackoff   = 30 * time.Second
)

// emitCrawlers are the crawlers of rules made for profiles (nil for one
// known by name only), each with its IP list in force (nil: none).
func emitCrawlers(profiles []*crawler.Profile, names []string, lists []*verify.IPList) []emit.Crawler {
	out := make([]emit.Crawler, len(names))
	for i, name := range names {
		out[i].Name = name
		if profiles[i] != nil {
			out[i].Tokens = profiles[i].Tokens
		}
		if lists[i] != nil {
			out[i].Listed = lists[i].Prefixes
		}
	}
	return out
}

// emitReportCrawlers chooses the crawlers of rules made from a report of
// several crawlers (its summary.crawlers): those --crawler names, each of
// which the report must hold, or else every one it holds, a built-in one
// by its profile and any other by its name alone (its rules then hold
// only the report's addresses of it, and a block-spoofed WAF rule needs
// its profile file). It returns the names, the profiles (nil for a name
// alone) and warnings.
func emitReportCrawlers(rep *audit.Report, report string, values []string) ([]string, []*crawler.Profile, []string, error) {
	var inReport, shown []string
	for _, c := range rep.Summary.Crawlers {
		inReport = append(inReport, c.Name)
		shown = append(shown, parse.EscapeControl(c.Name))
	}
	if len(inReport) == 0 {
		return nil, nil, nil, &exitError{code: ExitUsage, err: withHint(
			fmt.Errorf("report %s audits one crawler (it has no summary.crawlers), so --crawler cannot choose among its crawlers", report),
			"leave out --crawler, or make the report with 'lohibot-audit logs --crawler NAME... --format json'")}
	}
	if len(values) > 0 {
		profiles, err := resolveCrawlers(values)
		if err != nil {
			return nil, nil, nil, err
		}
		names := make([]string, len(profiles))
		for i, p := range profiles {
			if !slices.Contains(inReport, p.Name) {
				return nil, nil, nil, usageError("report %s has no crawler %s: it audits %s", report, p.Name, strings.Join(shown, ", "))
			}
			names[i] = p.Name
		}
		return names, profiles, nil, nil
	}
	profiles := make([]*crawler.Profile, len(inReport))
	var warnings []string
	for i, name := range inReport {
		if p, ok := crawler.Builtin(name); ok {
			profiles[i] = p
			continue
		}
		warnings = append(warnings, fmt.Sprintf("crawler %s is not built in: its rules hold only the report's addresses of it, not its IP lists; give its profile with --crawler FILE (and every other crawler wanted)", parse.EscapeControl(name)))
	}
	return inReport, profiles, warnings, nil
}
