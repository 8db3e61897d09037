package render

import (
	"io"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/audit/timeline"
)

// PageOf returns the HTML page of an audit's report: its facts as they
// are, the addresses read from r one at a time when the page is written,
// and the timelines of tl (nil: the sites are listed without drawings).
// The crawlers the report names (summary.crawlers, and each address's,
// site's and violation's) are the page's; tl must name them alike
// (Timelines.Crawlers).
func PageOf(r *audit.Report, tl *timeline.Set) *Page {
	s := r.Summary
	p := &Page{
		Tool:        r.Tool,
		Version:     r.Version,
		GeneratedAt: r.GeneratedAt,
		Summary: Summary{
			Files: s.Files, Lines: s.Lines, Malformed: s.Malformed,
			ClaimedHits: s.ClaimedHits, GenuineHits: s.GenuineHits, SpoofedHits: s.SpoofedHits, UnverifiedHits: s.UnverifiedHits,
			Violations: s.Violations, ViolationsLeftOut: s.ViolationsLeftOut, LogFormat: s.LogFormat, IPListSource: s.IPListSource, Incomplete: s.Incomplete,
		},
		Addresses: func(yield func(Address) bool) {
			for ip := range r.AllIPs() {
				a := Address{
					IP: ip.IP, Crawler: ip.Crawler, Verdict: string(ip.Verdict), Method: ip.Method, Reason: ip.Reason, DNSFailure: ip.DNSFailure,
					PTR: ip.PTR, Forward: ip.Forward, InIPList: ip.InIPList, Hits: ip.Hits,
					FirstSeen: ip.FirstSeen, LastSeen: ip.LastSeen, UserAgents: ip.UserAgents, Warnings: ip.Warnings,
				}
				if !yield(a) {
					return
				}
			}
		},
		Warnings: r.Warnings,
	}
	for _, c := range s.Crawlers {
		p.Crawlers = append(p.Crawlers, CrawlerSummary(c))
	}
	for _, site := range r.Sites {
		p.Sites = append(p.Sites, Site{Site: site.Site, Crawler: site.Crawler, Pages: site.Pages, RobotsFetches: site.RobotsFetches,
			ChecksSkipped: site.ChecksSkipped, NotPromised: site.NotPromised, ClaimedHits: site.ClaimedHits, Violations: site.Violations,
			ViolationsLeftOut: site.ViolationsLeftOut})
	}
	for _, v := range r.Violations {
		p.Violations = append(p.Violations, Violation{Kind: v.Kind, Crawler: v.Crawler, Site: v.Site, IP: v.IP, Time: v.Time,
			File: v.File, Line: v.Line, Path: v.Path, Detail: v.Detail,
			RobotsLine: v.RobotsLine, RobotsRule: v.RobotsRule})
	}
	for _, m := range r.MalformedExamples {
		p.Malformed = append(p.Malformed, Malformed{File: m.File, Line: m.Line, Text: m.Text, Reason: m.Reason})
	}
	if tl != nil {
		p.Timelines = tl.All()
	}
	return p
}

// htmlFormat is the self-contained HTML report (SPEC §12). It writes
// reports only: a command's other output has no page.
type htmlFormat struct{}

func (htmlFormat) Name() string { return "html" }

func (htmlFormat) WriteReport(w io.Writer, r *audit.Report, o Options) error {
	return WriteHTML(w, PageOf(r, o.Timelines))
}
