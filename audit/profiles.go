package audit

import (
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/verify"
)

// SubjectsOf are the crawlers of id audited side by side (SPEC §10), one
// per profile: each with its IP list in force, its audit of [since,
// until) settled by its verifier, and its conduct (its promises, replaced
// by ov: [conduct.ConfigOf]; robots.txt checked when it promises to obey
// it).
func SubjectsOf(id *verify.Identity, since, until time.Time, ov conduct.Overrides) []Subject {
	out := make([]Subject, len(id.Profiles))
	for i, p := range id.Profiles {
		out[i] = Subject{
			Profile: p,
			List:    id.Lists[i],
			Audit:   &Audit{Since: since, Until: until, Settled: id.Verifiers[i].Settled},
			Conduct: conduct.ConfigOf(p, ov),
		}
	}
	return out
}

// ListSources is a report's ip_list_source when it audits several
// crawlers: each one's list source after its name ("lohisoftbot: URL;
// googlebot: …"), "none" for a crawler without a list (a nil one).
func ListSources(names []string, lists []*verify.IPList) string {
	parts := make([]string, len(names))
	for i, name := range names {
		src := "none"
		if lists[i] != nil {
			src = lists[i].Source
		}
		parts[i] = name + ": " + src
	}
	return strings.Join(parts, "; ")
}

// ReportCrawlers are the crawlers of a report of several crawlers (its
// summary.crawlers) that rules are made for: those chosen, each of which
// the report must hold, or when none is chosen every one it holds, a
// built-in one by its profile and any other by its name alone (a nil
// profile). It returns their names and profiles; the error is
// [ErrOneCrawler] or a [*NoCrawlerError].
func ReportCrawlers(rep *Report, chosen []*crawler.Profile) ([]string, []*crawler.Profile, error) {
	var inReport []string
	for _, c := range rep.Summary.Crawlers {
		inReport = append(inReport, c.Name)
	}
	if len(inReport) == 0 {
		return nil, nil, ErrOneCrawler
	}
	if len(chosen) > 0 {
		names := make([]string, len(chosen))
		for i, p := range chosen {
			if !slices.Contains(inReport, p.Name) {
				return nil, nil, &NoCrawlerError{Crawler: p.Name, Audited: inReport}
			}
			names[i] = p.Name
		}
		return names, chosen, nil
	}
	profiles := make([]*crawler.Profile, len(inReport))
	for i, name := range inReport {
		if p, ok := crawler.Builtin(name); ok {
			profiles[i] = p
		}
	}
	return inReport, profiles, nil
}

// ErrOneCrawler is ReportCrawlers' error for a report of one crawler:
// it has no summary.crawlers to choose among.
var ErrOneCrawler = errors.New("the report audits one crawler (it has no summary.crawlers)")

// NoCrawlerError is ReportCrawlers' error for a crawler chosen that the
// report does not audit.
type NoCrawlerError struct {
	// Crawler is the crawler chosen; Audited, the report's crawlers.
	Crawler string
	Audited []string
}

func (e *NoCrawlerError) Error() string {
	shown := make([]string, len(e.Audited))
	for i, name := range e.Audited {
		shown[i] = parse.EscapeControl(name)
	}
	return "the report has no crawler " + e.Crawler + ": it audits " + strings.Join(shown, ", ")
}
