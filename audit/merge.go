package audit

import (
	"cmp"
	"slices"
	"strings"
)

// Merge makes one report of the reports of several crawlers audited over
// the same inputs (SPEC §10), parts[i] being the report of the crawler
// called names[i]: their addresses crawler by crawler (each part's in its
// order), their site rows by site and then crawler, their violations
// crawler by crawler, the warnings of all once each, and a summary whose
// hit and violation counts add up the crawlers', with summary.crawlers
// saying each one's. What is about the inputs (files, lines, formats,
// malformed lines, inputs) is the first part's, as every part read the
// same inputs. The parts are kept, not copied: leave them alone while the
// merged report is in use.
func Merge(names []string, parts []*Report) *Report {
	if len(parts) == 0 {
		return &Report{}
	}
	first := parts[0]
	r := &Report{
		Tool:              first.Tool,
		Version:           first.Version,
		SchemaVersion:     first.SchemaVersion,
		Summary:           first.Summary,
		IPs:               []IPReport{},
		Sites:             []SiteReport{},
		Violations:        []Violation{},
		MalformedExamples: first.MalformedExamples,
		Inputs:            first.Inputs,
		GeneratedAt:       first.GeneratedAt,
		parts:             parts,
	}
	s := &r.Summary
	s.ClaimedHits, s.GenuineHits, s.SpoofedHits, s.UnverifiedHits, s.Violations, s.ViolationsLeftOut = 0, 0, 0, 0, 0, 0
	s.FilteredOut, s.UnclaimedHit = 0, 0
	s.Crawlers = make([]CrawlerSummary, 0, len(parts))
	type site struct {
		row   SiteReport
		order int
	}
	var sites []site
	for i, p := range parts {
		ps := p.Summary
		s.ClaimedHits += ps.ClaimedHits
		s.GenuineHits += ps.GenuineHits
		s.SpoofedHits += ps.SpoofedHits
		s.UnverifiedHits += ps.UnverifiedHits
		s.Violations += ps.Violations
		s.ViolationsLeftOut += ps.ViolationsLeftOut
		s.FilteredOut += ps.FilteredOut
		s.UnclaimedHit += ps.UnclaimedHit
		s.Crawlers = append(s.Crawlers, CrawlerSummary{Name: names[i], ClaimedHits: ps.ClaimedHits,
			GenuineHits: ps.GenuineHits, SpoofedHits: ps.SpoofedHits, UnverifiedHits: ps.UnverifiedHits, Violations: ps.Violations,
			ViolationsLeftOut: ps.ViolationsLeftOut})
		for _, row := range p.Sites {
			sites = append(sites, site{row, i})
		}
		r.Violations = append(r.Violations, p.Violations...)
		for _, w := range p.Warnings {
			if !slices.Contains(r.Warnings, w) {
				r.Warnings = append(r.Warnings, w)
			}
		}
	}
	if r.Warnings == nil {
		r.Warnings = []string{}
	}
	slices.SortStableFunc(sites, func(a, b site) int {
		if c := strings.Compare(a.row.Site, b.row.Site); c != 0 {
			return c
		}
		return cmp.Compare(a.order, b.order)
	})
	for _, st := range sites {
		r.Sites = append(r.Sites, st.row)
	}
	return r
}
