package cmd

import (
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/parse"
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
