package cmd

import (
	"context"
	"math/bits"
	"net/netip"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/robots"
	"github.com/lohisoft/lohibot-audit/verify"
)

// auditSink is what a log reader hands its records, warnings and inputs
// to: one audit, or one per crawler.
type auditSink interface {
	Add(rec *parse.Record)
	Warn(w string)
	AddInput(in audit.InputReport, examples []*parse.LineError)
	// Claims is the crawlers' tokens the reader matches (nil: the
	// default crawler's).
	Claims() *parse.TokenSet
}

// auditSet audits several crawlers in one pass over the logs: an audit per
// crawler, each claimed hit going to the audits of the crawlers it
// claims, each request from a listed address to those of the crawlers
// whose list holds it. Warnings go to the first audit; every audit sees
// every input (the conduct checks need to know what the logs cover).
type auditSet struct {
	audits   []*audit.Audit
	profiles []*crawler.Profile
	lists    []*verify.IPList
	claims   *parse.TokenSet
	// named says --crawler named the crawlers: the report then says
	// which crawler each address, site row and violation is about.
	named bool
}

// newAuditSet makes the audits of id's crawlers.
func newAuditSet(id *identity, since, until time.Time, named bool) *auditSet {
	s := &auditSet{profiles: id.Profiles, lists: id.Lists, named: named}
	groups := make([][]string, len(id.Profiles))
	for i, p := range id.Profiles {
		groups[i] = p.Tokens
		a := &audit.Audit{Since: since, Until: until, Settled: id.Verifiers[i].Settled}
		if named {
			a.Crawler = p.Name
		}
		s.audits = append(s.audits, a)
	}
	if len(id.Profiles) > 1 || named {
		s.claims = parse.NewTokenSet(groups)
	}
	return s
}

func (s *auditSet) Claims() *parse.TokenSet { return s.claims }

func (s *auditSet) Add(rec *parse.Record) {
	if len(s.audits) == 1 {
		s.audits[0].Add(rec)
		return
	}
	if rec.Claimed {
		for m := rec.Claims; m != 0; m &= m - 1 {
			s.audits[bits.TrailingZeros64(m)].Add(rec)
		}
		return
	}
	for i, l := range s.lists {
		if l.Contains(rec.Client) {
			s.audits[i].Add(rec)
		}
	}
}

func (s *auditSet) Warn(w string) { s.audits[0].Warn(w) }

func (s *auditSet) AddInput(in audit.InputReport, examples []*parse.LineError) {
	for _, a := range s.audits {
		a.AddInput(in, examples)
	}
}

// report verifies each crawler's claimants, checks each one's conduct
// with cfg(profile), and makes the report: the one audit's, or all of
// them merged (audit.Merge).
func (s *auditSet) report(ctx context.Context, id *identity, run func(func() *audit.Report) (*audit.Report, error), cfg func(*crawler.Profile) conduct.Config) (*audit.Report, error) {
	results := make([]map[netip.Addr]verify.Result, len(s.audits))
	for i, a := range s.audits {
		results[i] = id.Classify(ctx, i, a.Addresses())
	}
	if ctx.Err() != nil {
		return nil, errInterrupted
	}
	for _, w := range id.Identity.Warnings() {
		s.audits[0].Warn(w)
	}
	return run(func() *audit.Report {
		reps := make([]*audit.Report, len(s.audits))
		for i, a := range s.audits {
			reps[i] = a.Report(results[i], cfg(s.profiles[i]))
		}
		if !s.named {
			return reps[0]
		}
		names := make([]string, len(s.profiles))
		for i, p := range s.profiles {
			names[i] = p.Name
		}
		rep := audit.Merge(names, reps)
		var sources []string
		for i, l := range s.lists {
			sources = append(sources, names[i]+": "+l.Source)
		}
		rep.Summary.IPListSource = strings.Join(sources, "; ")
		return rep
	})
}

// crawlerConduct is the conduct configuration for p: its promises (a
// promise not made is not checked), each overridden by its flag when the
// flag is not at its default, for every crawler of the run (SPEC §10).
// For LohiSoftBot, whose promises are the flags' defaults, it is the
// flags.
func crawlerConduct(p *crawler.Profile, o *auditOptions, robotsFor func(string) *robots.Robots) conduct.Config {
	c := p.Conduct
	cfg := conduct.Config{Token: p.RobotsToken}
	if c.Robots {
		cfg.Robots = robotsFor
	}
	if c.Budget != nil {
		cfg.Budget, cfg.BudgetWindow = c.Budget.Pages, c.Budget.Window
	}
	cfg.MinPause = c.MinPause
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
