package audit

import (
	"math/bits"
	"net/netip"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/addrset"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/verify"
)

// auditSet holds the audits of a run, one per subject of Options.Subjects.
// A claimed hit goes to the audit of each crawler it names, a request from
// a listed address without a token to those of the crawlers whose list
// holds it; warnings go to the first audit, and every audit sees every
// input (the conduct checks need to know what the logs cover).
type auditSet struct {
	subjects []Subject
	audits   []*Audit
	lists    []*addrset.Set // each subject's listed addresses
	named    bool
	// claims are the subjects' tokens, a group each, and listed every
	// subject's listed addresses: what the log readers keep.
	claims *parse.TokenSet
	listed *addrset.Set
	// snap, when set, is told what the audits take in while reading is
	// set (Options.Snapshot).
	snap    *SnapshotWriter
	reading bool
}

func newAuditSet(o *Options) *auditSet {
	s := &auditSet{subjects: o.Subjects, named: o.Named || len(o.Subjects) > 1}
	if len(s.subjects) == 0 {
		// No crawler: one audit for the inputs' counts and the warnings.
		s.subjects = []Subject{{}}
	}
	profiles := make([]*crawler.Profile, len(s.subjects))
	var all []netip.Prefix
	for i, c := range s.subjects {
		au := c.Audit
		if au == nil {
			au = &Audit{}
		}
		if o.Observe != nil {
			au.KeepAll = true
		}
		if s.named {
			au.Crawler = c.name()
		}
		if au.Proxies == nil {
			au.Proxies = o.Trust
		}
		s.audits = append(s.audits, au)
		var listed []netip.Prefix
		if c.List != nil {
			listed = c.List.Prefixes
		}
		s.lists = append(s.lists, addrset.New(listed))
		all = append(all, listed...)
		profiles[i] = c.Profile
	}
	s.claims = parse.NewTokenSet(crawler.TokenGroups(profiles))
	s.listed = addrset.New(all)
	return s
}

// name is the subject's name in a report that names crawlers.
func (c *Subject) name() string {
	if c.Profile == nil {
		return ""
	}
	return c.Profile.Name
}

func (s *auditSet) Add(rec *parse.Record) {
	if rec.Claimed {
		var kept uint64
		for m := rec.Claims; m != 0; m &= m - 1 {
			if i := bits.TrailingZeros64(m); i < len(s.audits) && s.audits[i].Add(rec) {
				kept |= 1 << i
			}
		}
		if s.snap != nil && s.reading && kept != 0 {
			s.snap.hit(rec, kept)
		}
		return
	}
	for i, l := range s.lists {
		if l.Contains(rec.Client) {
			s.audits[i].Add(rec)
		}
	}
}

func (s *auditSet) Warn(w string) {
	s.audits[0].Warn(w)
	if s.snap != nil && s.reading {
		s.snap.warning(w)
	}
}

// close closes every audit.
func (s *auditSet) close() {
	for _, a := range s.audits {
		a.Close()
	}
}

func (s *auditSet) AddInput(in InputReport, examples []*parse.LineError) {
	ms := malformedOf(examples)
	for _, a := range s.audits {
		a.addInput(in, ms, time.Time{})
	}
	if s.snap != nil && s.reading {
		s.snap.endInput(s, in, ms)
	}
}

// report makes the report of each audit, with its verdicts (results, by
// audit) and conduct, and merges them when the report names its crawlers.
func (s *auditSet) report(o *Options, results []map[netip.Addr]verify.Result) *Report {
	reps := make([]*Report, len(s.audits))
	names := make([]string, len(s.audits))
	for i, c := range s.subjects {
		cfg := c.Conduct
		if cfg.Robots == nil && c.Profile != nil && c.Profile.Conduct.Robots && o.Robots != nil {
			cfg.Robots = o.Robots.For
			if hs, ok := o.Robots.(RobotsHistories); ok && cfg.RobotsHistory == nil {
				cfg.RobotsHistory = hs.History
			}
		}
		reps[i] = s.audits[i].Report(results[i], cfg)
		names[i] = c.name()
	}
	rep := reps[0]
	if s.named {
		rep = Merge(names, reps)
		for i, c := range s.subjects {
			if c.Profile != nil && i < len(rep.Summary.Crawlers) {
				rep.Summary.Crawlers[i].Category = c.Profile.Category
			}
		}
	}
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

// listSource is the report's ip_list_source: the list's source, or when
// the report names its crawlers each one's (see [ListSources]).
func (s *auditSet) listSource() string {
	lists := make([]*verify.IPList, len(s.subjects))
	names := make([]string, len(s.subjects))
	for i, c := range s.subjects {
		lists[i], names[i] = c.List, c.name()
	}
	if s.named {
		return ListSources(names, lists)
	}
	if lists[0] == nil {
		return ""
	}
	return lists[0].Source
}

// listEvidence is the report's ip_lists: each subject's lists.
func (s *auditSet) listEvidence() []ListEvidence {
	var out []ListEvidence
	for _, c := range s.subjects {
		name := ""
		if s.named {
			name = c.name()
		}
		out = append(out, ListEvidenceOf(name, c.List)...)
	}
	return out
}

// tokenWords names the tokens looked for, in a warning.
func (s *auditSet) tokenWords() string {
	who, _ := s.crawlerWords()
	if len(s.subjects) > 1 {
		return "the token of " + who
	}
	return "the " + who + " token"
}

// crawlerWords names the crawlers audited, and whose listed addresses are
// looked for, in a warning: by their names when the report names them,
// else the one crawler by its title.
func (s *auditSet) crawlerWords() (who, whose string) {
	if !s.named {
		if p := s.subjects[0].Profile; p != nil {
			return p.Title(), "crawler's"
		}
		return "a crawler", "crawler's"
	}
	names := make([]string, len(s.subjects))
	for i, c := range s.subjects {
		names[i] = c.name()
	}
	return strings.Join(names, " or "), "crawlers'"
}
