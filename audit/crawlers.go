package audit

import (
	"math/bits"
	"net/netip"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/verify"
)

// auditSet holds the audits of a run: Options.Audit alone, or one per
// crawler of Options.Crawlers. A claimed hit goes to the audit of each
// crawler it names, a request from a listed address without a token to
// those of the crawlers whose list holds it; warnings go to the first
// audit, and every audit sees every input (the conduct checks need to know
// what the logs cover).
type auditSet struct {
	audits   []*Audit
	crawlers []Crawler // empty for one audit
}

func newAuditSet(o *Options) *auditSet {
	s := &auditSet{crawlers: o.Crawlers}
	if len(o.Crawlers) == 0 {
		au := o.Audit
		if au == nil {
			au = &Audit{}
		}
		s.audits = []*Audit{au}
	}
	for _, c := range o.Crawlers {
		au := c.Audit
		if au == nil {
			au = &Audit{}
		}
		s.audits = append(s.audits, au)
	}
	for _, au := range s.audits {
		if o.Observe != nil {
			au.KeepAll = true
		}
		if au.Proxies == nil {
			au.Proxies = o.Trust
		}
	}
	return s
}

func (s *auditSet) Add(rec *parse.Record) {
	if len(s.crawlers) == 0 {
		s.audits[0].Add(rec)
		return
	}
	if rec.Claimed {
		for m := rec.Claims; m != 0; m &= m - 1 {
			if i := bits.TrailingZeros64(m); i < len(s.audits) {
				s.audits[i].Add(rec)
			}
		}
		return
	}
	for i, c := range s.crawlers {
		if c.Listed != nil && c.Listed(rec.Client) {
			s.audits[i].Add(rec)
		}
	}
}

func (s *auditSet) Warn(w string) { s.audits[0].Warn(w) }

func (s *auditSet) AddInput(in InputReport, examples []*parse.LineError) {
	for _, a := range s.audits {
		a.AddInput(in, examples)
	}
}

// report makes the report of each audit, with its verdicts (results, by
// audit) and conduct, and merges them when there are several crawlers.
func (s *auditSet) report(o *Options, results []map[netip.Addr]verify.Result) *Report {
	if len(s.crawlers) == 0 {
		cfg := o.Conduct
		if cfg.Robots == nil && o.Robots != nil {
			cfg.Robots = o.Robots.For
		}
		rep := s.audits[0].Report(results[0], cfg)
		rep.Warnings = append(rep.Warnings, s.audits[0].proxied.warnings(o.Trust, o.now())...)
		return rep
	}
	reps := make([]*Report, len(s.audits))
	names := make([]string, len(s.audits))
	for i, c := range s.crawlers {
		cfg := c.Conduct
		if cfg.Robots == nil && c.Robots && o.Robots != nil {
			cfg.Robots = o.Robots.For
		}
		reps[i] = s.audits[i].Report(results[i], cfg)
		names[i] = c.Name
	}
	rep := Merge(names, reps)
	var proxied proxyTally
	for _, a := range s.audits {
		proxied.merge(a.proxied)
	}
	rep.Warnings = append(rep.Warnings, proxied.warnings(o.Trust, o.now())...)
	return rep
}

// now is the run's clock.
func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// tokenWords names the tokens looked for, in a warning.
func (o *Options) tokenWords() string {
	who, _ := o.crawlerWords()
	if len(o.Crawlers) > 1 {
		return "the token of " + who
	}
	return "the " + who + " token"
}

// crawlerWords names the crawlers audited, and whose listed addresses are
// looked for, in a warning.
func (o *Options) crawlerWords() (who, whose string) {
	if len(o.Crawlers) == 0 {
		return "LohiSoftBot", "crawler's"
	}
	names := make([]string, len(o.Crawlers))
	for i, c := range o.Crawlers {
		names[i] = c.Name
	}
	return strings.Join(names, " or "), "crawlers'"
}
