package render

import (
	"bufio"
	"cmp"
	"container/heap"
	"embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/audit/timeline"
	"github.com/lohisoft/lohibot-audit/verify"
)

//go:embed report.html.tmpl
var templateFS embed.FS

var reportTemplate = template.Must(template.New("report.html.tmpl").ParseFS(templateFS, "report.html.tmpl"))

// ContentSecurityPolicy is the policy the page declares in a meta element:
// it forbids every load (scripts, styles from files, images, fonts,
// frames, connections, forms) and allows only the page's own inline CSS.
const ContentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

// Defaults of Limits.
const (
	DefaultTopAddresses    = 100
	DefaultListedAddresses = 200_000
	DefaultViolations      = 5_000
	DefaultTimelines       = 50
)

// Internal bounds of the page.
const (
	openViolationsPerSite = 50    // rows shown before the rest are collapsed
	siteRowsCap           = 2_000 // rows of the sites table
	warningsCap           = 500
	crawlStripsCap        = 6 // crawl details drawn per site
	crawlGap              = time.Hour
	tickBudget            = 24_000 // ticks drawn one by one in all overviews
	crawlTickCap          = 1_000
	userAgentsShown       = 3
)

// WriteHTML writes page as one self-contained HTML document to w, through a
// buffer of its own: the summary, a section per site (its timeline, the
// details of its crawls, its violations), the addresses, the malformed
// examples and the warnings. The output depends only on page: the same page
// gives the same bytes. It reads page.Addresses once and keeps at most
// Limits.TopAddresses of them, plus a short entry for each of
// Limits.ListedAddresses more. The error is w's, if any; on an error, part
// of the page may have been written.
func WriteHTML(w io.Writer, page *Page) error {
	if page == nil {
		page = &Page{}
	}
	v := buildView(page)
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := reportTemplate.Execute(bw, v); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return bw.Flush()
}

type view struct {
	Title      string
	CSP        string
	Generated  string
	Tool       string
	Version    string
	Incomplete bool
	Cards      []card
	Facts      []fact
	Multi      bool
	Crawlers   []crawlerRow
	SiteRows   []siteRow
	SitesMore  string
	Sections   []*section
	Legend     bool
	Undrawn    string
	ViolNote   string
	Addr       addrView
	Malformed  []malRow
	MalNote    string
	Warnings   []string
	WarnNote   string
}

type card struct {
	Label, Value, Class, Note string
}

type fact struct{ Name, Value string }

type crawlerRow struct {
	Name, Category, Claimed, Genuine, Spoofed, Unverified, Violations string
}

type siteRow struct {
	Anchor, Site, Crawler                    string
	Pages, Robots, Claimed, Violations, Skip string
	HasViolations                            bool
}

type section struct {
	Anchor      string
	Site        string
	Crawler     string
	Facts       []string
	Skipped     []string
	Overview    *charts
	OverCaption string
	Crawls      []crawlView
	Notes       []string
	Violations  []violRow
	More        []violRow
	MoreLabel   string
	Omitted     string

	// Not shown directly.
	site     *Site
	timeline *timeline.Timeline
	vs       []numbered
}

type crawlView struct {
	Caption string
	Chart   charts
}

type violRow struct {
	Anchor, N, Time, Kind      string
	Path, IP, Where            string
	RuleLine, RuleText, Detail string
}

type addrView struct {
	Total      string
	Top        []addrRow
	Rest       []restGroup
	RestLabel  string
	RestNote   string
	VerdictMix string
	// unverifiedWhy says why the unverified hits are so, "" when no
	// address is unverified.
	unverifiedWhy string
}

type addrRow struct {
	IP, Crawler, Verdict, VerdictClass string
	Method, Reason, ReasonText         string
	PTR, Forward                       []string
	InList                             string
	Hits, First, Last                  string
	UAs                                []string
	UAMore                             string
	Warnings                           []string
}

type restGroup struct {
	Label, Count, Class, List string
}

type malRow struct{ Where, Reason, Text string }

func buildView(p *Page) *view {
	v := &view{
		Title:   cut(p.Title, 200),
		CSP:     ContentSecurityPolicy,
		Tool:    cut(p.Tool, 80),
		Version: cut(p.Version, 80),
	}
	if v.Title == "" {
		v.Title = "lohibot-audit report"
	}
	if v.Tool == "" {
		v.Tool = "lohibot-audit"
	}
	if !p.GeneratedAt.IsZero() {
		v.Generated = stamp(p.GeneratedAt) + " UTC"
	}
	lim := p.Limits
	if lim.TopAddresses <= 0 {
		lim.TopAddresses = DefaultTopAddresses
	}
	if lim.ListedAddresses <= 0 {
		lim.ListedAddresses = DefaultListedAddresses
	}
	if lim.Violations <= 0 {
		lim.Violations = DefaultViolations
	}
	if lim.Timelines <= 0 {
		lim.Timelines = DefaultTimelines
	}

	s := p.Summary
	v.Incomplete = s.Incomplete
	v.Cards = []card{
		{Label: "claimed hits", Value: num(s.ClaimedHits), Class: "c", Note: "requests naming the crawler"},
		{Label: "genuine", Value: num(s.GenuineHits), Class: "g", Note: "hits from the crawler's addresses"},
		{Label: "spoofed", Value: num(s.SpoofedHits), Class: "s", Note: "hits from impostors"},
		{Label: "unverified", Value: num(s.UnverifiedHits), Class: "u", Note: "DNS could not answer"},
		{Label: "violations", Value: num(int64(s.Violations)), Class: "v", Note: violationsNote(s.ViolationsLeftOut)},
		{Label: "malformed lines", Value: num(s.Malformed), Class: "m", Note: "of " + num(s.Lines) + " lines read"},
	}
	v.Facts = []fact{
		{"files", num(int64(s.Files))},
		{"lines", num(s.Lines)},
		{"log format", cut(s.LogFormat, 200)},
		{"IP list", cut(s.IPListSource, 300*max(1, len(p.Crawlers)))}, // each crawler's lists, when several
	}

	names := map[string]bool{}
	for _, c := range p.Crawlers {
		names[c.Name] = true
	}
	for _, st := range p.Sites {
		names[st.Crawler] = true
	}
	for _, t := range p.Timelines {
		if t != nil {
			names[t.Crawler] = true
		}
	}
	for _, x := range p.Violations {
		names[x.Crawler] = true
	}
	v.Multi = len(p.Crawlers) > 1 || len(names) > 1
	if v.Multi {
		for _, c := range p.Crawlers {
			v.Crawlers = append(v.Crawlers, crawlerRow{
				Name: cut(c.Name, 80), Category: cut(OrDash(c.Category), 40), Claimed: num(c.ClaimedHits), Genuine: num(c.GenuineHits),
				Spoofed: num(c.SpoofedHits), Unverified: num(c.UnverifiedHits), Violations: num(int64(c.Violations)),
			})
		}
	}

	v.Sections = buildSections(p, lim, v)
	v.Addr = buildAddresses(p.Addresses, lim, v.Multi)
	if v.Addr.unverifiedWhy != "" {
		for i := range v.Cards {
			if v.Cards[i].Class == "u" {
				v.Cards[i].Note = v.Addr.unverifiedWhy
			}
		}
	}

	for i, m := range p.Malformed {
		if i == 100 {
			v.MalNote = num(int64(len(p.Malformed)-i)) + " more examples not shown"
			break
		}
		where := cut(m.File, 120)
		if m.Line > 0 {
			where += ":" + strconv.FormatInt(m.Line, 10)
		}
		v.Malformed = append(v.Malformed, malRow{Where: where, Reason: cut(m.Reason, 300), Text: cut(m.Text, 400)})
	}
	for i, w := range p.Warnings {
		if i == warningsCap {
			v.WarnNote = num(int64(len(p.Warnings)-i)) + " more warnings not shown"
			break
		}
		v.Warnings = append(v.Warnings, cut(w, 1000))
	}
	return v
}

type pairKey struct{ site, crawler string }

// buildSections makes one section per site and crawler that has a drawn
// timeline or violations, in the order of p.Sites, then the others sorted.
func buildSections(p *Page, lim Limits, v *view) []*section {
	var order []pairKey
	byKey := map[pairKey]*section{}
	get := func(k pairKey) *section {
		if s, ok := byKey[k]; ok {
			return s
		}
		s := &section{Site: cut(k.site, 200), Crawler: cut(k.crawler, 80)}
		byKey[k] = s
		order = append(order, k)
		return s
	}
	for i := range p.Sites {
		st := &p.Sites[i]
		get(pairKey{st.Site, st.Crawler}).site = st
	}
	nSites := len(order)
	for _, t := range p.Timelines {
		if t != nil {
			get(pairKey{t.Site, t.Crawler}).timeline = t
		}
	}
	for _, x := range p.Violations {
		s := get(pairKey{x.Site, x.Crawler})
		s.vs = append(s.vs, numbered{Violation: x})
	}
	tail := order[nSites:]
	slices.SortFunc(tail, func(a, b pairKey) int {
		return cmp.Or(cmp.Compare(a.site, b.site), cmp.Compare(a.crawler, b.crawler))
	})

	for i, k := range order {
		byKey[k].Anchor = "site-" + strconv.Itoa(i+1)
	}

	// Number each section's violations by time.
	budget := lim.Violations
	var omittedKinds map[string]int
	for _, k := range order {
		s := byKey[k]
		slices.SortStableFunc(s.vs, func(a, b numbered) int {
			return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Kind, b.Kind))
		})
		for i := range s.vs {
			s.vs[i].N = i + 1
			s.vs[i].Anchor = s.Anchor + "-v" + strconv.Itoa(i+1)
		}
		for i, x := range s.vs {
			if budget == 0 {
				if omittedKinds == nil {
					omittedKinds = map[string]int{}
				}
				for _, y := range s.vs[i:] {
					omittedKinds[y.Kind]++
				}
				s.Omitted = plural(int64(len(s.vs)-i), "more violation", "more violations") + " not listed here: the JSON report has them all"
				if s.site != nil && len(s.site.ViolationsLeftOut) > 0 {
					s.Omitted = plural(int64(len(s.vs)-i), "more violation", "more violations") + " not listed here: the JSON report lists them"
				}
				break
			}
			budget--
			row := violationRow(x)
			if i < openViolationsPerSite {
				s.Violations = append(s.Violations, row)
			} else {
				s.More = append(s.More, row)
			}
		}
		if len(s.More) > 0 {
			s.MoreLabel = plural(int64(len(s.More)), "more violation", "more violations")
		}
	}
	if len(omittedKinds) > 0 {
		var parts []string
		var total int
		for _, kd := range slices.Sorted(maps.Keys(omittedKinds)) {
			parts = append(parts, cut(kd, 40)+" "+num(int64(omittedKinds[kd])))
			total += omittedKinds[kd]
		}
		v.ViolNote = "Only the first " + num(int64(lim.Violations)) + " violations are listed; " + num(int64(total)) + " more (" + strings.Join(parts, ", ") + ") are in the JSON report."
	}
	if n := p.Summary.ViolationsLeftOut; n > 0 {
		if v.ViolNote != "" {
			v.ViolNote += " "
		}
		v.ViolNote += plural(int64(n), "violation was", "violations were") + " counted but listed nowhere, past --max-violations per site and kind: each site says which."
	}

	// Draw the timelines.
	drawn := 0
	for _, k := range order {
		if byKey[k].timeline != nil && drawn < lim.Timelines {
			drawn++
		}
	}
	laneCap := max(200, tickBudget/max(drawn*2, 1))
	left := lim.Timelines
	undrawn := 0
	var out []*section
	for _, k := range order {
		s := byKey[k]
		if s.timeline != nil {
			if left > 0 {
				left--
				drawTimeline(s, laneCap)
				v.Legend = true
			} else {
				undrawn++
				s.Notes = append(s.Notes, "Not drawn: the report draws the first "+num(int64(lim.Timelines))+" sites only.")
			}
		}
		if s.site != nil {
			st := s.site
			s.Facts = []string{
				plural(st.Pages, "page", "pages"),
				plural(st.RobotsFetches, "robots.txt fetch", "robots.txt fetches"),
				plural(st.ClaimedHits, "claimed hit", "claimed hits"),
				plural(int64(st.Violations), "violation", "violations"),
			}
			if n := leftOutNote(st.ViolationsLeftOut); n != "" {
				s.Notes = append(s.Notes, n)
			}
			for _, c := range st.ChecksSkipped {
				s.Skipped = append(s.Skipped, cut(c, 60))
			}
			for _, c := range st.NotPromised {
				s.Skipped = append(s.Skipped, cut(c, 60)+" (not promised)")
			}
		}
		if s.Overview != nil || len(s.vs) > 0 || len(s.Notes) > 0 {
			out = append(out, s)
		}
	}
	// The sites table, each row linking to its section when it has one.
	shown := map[*section]bool{}
	for _, s := range out {
		shown[s] = true
	}
	for _, k := range order {
		s := byKey[k]
		if s.site == nil {
			continue
		}
		if len(v.SiteRows) == siteRowsCap {
			v.SitesMore = num(int64(len(p.Sites)-siteRowsCap)) + " more sites not listed"
			break
		}
		st := s.site
		row := siteRow{
			Site: s.Site, Crawler: s.Crawler,
			Pages: num(st.Pages), Robots: num(st.RobotsFetches), Claimed: num(st.ClaimedHits),
			Violations: num(int64(st.Violations)), Skip: cut(ChecksText(st.ChecksSkipped, st.NotPromised), 300),
			HasViolations: st.Violations > 0,
		}
		if shown[s] {
			row.Anchor = s.Anchor
		}
		v.SiteRows = append(v.SiteRows, row)
	}
	if undrawn > 0 {
		v.Undrawn = plural(int64(undrawn), "site is", "sites are") + " listed without a drawing: the report draws " + num(int64(lim.Timelines)) + " at most."
	}
	return out
}

// violationsNote is the note of the violations card.
func violationsNote(leftOut int) string {
	if leftOut > 0 {
		return "broken promises of the genuine crawler; " + num(int64(leftOut)) + " counted but not listed"
	}
	return "broken promises of the genuine crawler"
}

// leftOutNote says which violations of a site were counted but not
// listed, by kind; "" when none was.
func leftOutNote(leftOut map[string]int) string {
	if len(leftOut) == 0 {
		return ""
	}
	var parts []string
	total := 0
	for _, k := range slices.Sorted(maps.Keys(leftOut)) {
		parts = append(parts, cut(k, 40)+" "+num(int64(leftOut[k])))
		total += leftOut[k]
	}
	return "Listed: the first violations of each kind; " + plural(int64(total), "more was", "more were") + " counted but not listed (" + strings.Join(parts, ", ") + "), past --max-violations."
}

func violationRow(x numbered) violRow {
	where := cut(x.File, 120)
	if x.Line > 0 {
		where += ":" + strconv.FormatInt(x.Line, 10)
	}
	r := violRow{
		Anchor: x.Anchor, N: strconv.Itoa(x.N), Time: stamp(x.Time),
		Kind: cut(x.Kind, 40),
		Path: cut(x.Path, 200), IP: cut(x.IP, 60), Where: where,
		Detail: cut(x.Detail, 400),
	}
	if x.RobotsRule != "" {
		r.RuleLine, r.RuleText = strconv.Itoa(x.RobotsLine), cut(x.RobotsRule, 200)
		if strings.Contains(x.Detail, x.RobotsRule) {
			// The detail only quotes the rule.
			r.Detail = ""
		}
	}
	return r
}

// drawTimeline draws a section's overview and the details of its crawls.
func drawTimeline(s *section, laneCap int) {
	t := s.timeline
	var lanes []laneInput
	lo, hi := int64(0), int64(0)
	seen := false
	widen := func(ms int64) {
		if !seen || ms < lo {
			lo = ms
		}
		if !seen || ms > hi {
			hi = ms
		}
		seen = true
	}
	for c := timeline.Genuine; c < timeline.NumClasses; c++ {
		total := t.Total(c)
		if total.Requests == 0 && c != timeline.Genuine {
			// The genuine lane is always drawn: an empty one says that
			// only impostors came.
			continue
		}
		in := laneInput{class: c}
		if t.Aggregated(c) {
			in.width, in.bkts = t.Buckets(c)
		} else {
			in.exact = t.Requests(c)
			if in.exact == nil {
				in.exact = []timeline.Request{}
			}
		}
		if first, last, ok := t.Span(c); ok {
			widen(first.UnixMilli())
			widen(last.UnixMilli())
		}
		lanes = append(lanes, in)
	}
	for _, x := range s.vs {
		widen(x.Time.UnixMilli())
	}
	if !seen || len(lanes) == 0 {
		s.Notes = append(s.Notes, "No request of the crawler to draw.")
		return
	}
	sc := padded(lo, hi, 60_000)
	s.OverCaption = "All requests · " + spanText(time.UnixMilli(lo), time.UnixMilli(hi))
	overviewRows := 1

	// The genuine crawler's crawls, runs of requests less than an hour
	// apart, drawn each on its own axis; not when one crawl is most of the
	// overview already, which then names the violations' kinds itself.
	if t.Total(timeline.Genuine).Requests > 0 && t.Aggregated(timeline.Genuine) {
		s.Notes = append(s.Notes, "Too many genuine requests to draw one by one: they are counted per time bucket, without the details of each crawl.")
	}
	crawls := genuineCrawls(t, s.vs)
	var chosen []crawl
	if len(crawls) == 1 && (crawls[0].last-crawls[0].first)*2 >= hi-lo {
		s.OverCaption += " · the genuine crawler came once: " + crawls[0].caption(false)
		overviewRows = 4
	} else {
		chosen = slices.Clone(crawls)
		slices.SortStableFunc(chosen, func(a, b crawl) int {
			return cmp.Or(-cmp.Compare(a.nv, b.nv), -cmp.Compare(len(a.reqs), len(b.reqs)))
		})
		if len(chosen) > crawlStripsCap {
			s.Notes = append(s.Notes, "The genuine crawler came "+num(int64(len(crawls)))+" times; the "+num(crawlStripsCap)+" crawls with the most violations, then the most requests, are drawn in detail.")
			chosen = chosen[:crawlStripsCap]
		}
		slices.SortFunc(chosen, func(a, b crawl) int { return cmp.Compare(a.number, b.number) })
	}
	s.Overview = new(charts)
	*s.Overview = drawBoth(sc, lanes, s.vs, drawOptions{tickCap: laneCap, markerRows: overviewRows, bands: true, budget: t.Budget}, "Timeline of the requests to "+s.Site)

	for _, c := range chosen {
		csc := padded(c.first, c.last, 20_000)
		var cl []laneInput
		for _, in := range lanes {
			if in.exact == nil {
				continue
			}
			var part []timeline.Request
			for _, r := range in.exact {
				if csc.contains(r.Time.UnixMilli()) {
					part = append(part, r)
				}
			}
			if len(part) > 0 || in.class == timeline.Genuine {
				cl = append(cl, laneInput{class: in.class, exact: part})
			}
		}
		var cv []numbered
		for _, x := range s.vs {
			if csc.contains(x.Time.UnixMilli()) {
				cv = append(cv, x)
			}
		}
		caption := "Crawl " + strconv.Itoa(c.number) + " of " + strconv.Itoa(len(crawls)) + " · " + c.caption(true)
		ch := drawBoth(csc, cl, cv, drawOptions{tickCap: crawlTickCap, markerRows: 4}, caption)
		s.Crawls = append(s.Crawls, crawlView{Caption: caption, Chart: ch})
	}
}

// crawl is a run of the genuine crawler's requests less than an hour apart.
type crawl struct {
	number      int
	reqs        []timeline.Request
	first, last int64 // Unix ms
	nv          int   // violations within
}

// genuineCrawls splits a timeline's exact genuine requests into crawls.
func genuineCrawls(t *timeline.Timeline, vs []numbered) []crawl {
	if t.Aggregated(timeline.Genuine) {
		return nil
	}
	g := t.Requests(timeline.Genuine)
	var out []crawl
	start := 0
	for i := 1; i <= len(g); i++ {
		if i == len(g) || g[i].Time.Sub(g[i-1].Time) > crawlGap {
			c := crawl{number: len(out) + 1, reqs: g[start:i], first: g[start].Time.UnixMilli(), last: g[i-1].Time.UnixMilli()}
			for _, x := range vs {
				if ms := x.Time.UnixMilli(); ms >= c.first && ms <= c.last {
					c.nv++
				}
			}
			out = append(out, c)
			start = i
		}
	}
	return out
}

// caption says what a crawl fetched, how fast, what it broke and, with
// withSpan, when it was.
func (c crawl) caption(withSpan bool) string {
	var robots int64
	var gaps []time.Duration
	for i, r := range c.reqs {
		if r.Robots {
			robots++
		}
		if i > 0 {
			gaps = append(gaps, r.Time.Sub(c.reqs[i-1].Time))
		}
	}
	s := plural(int64(len(c.reqs))-robots, "page", "pages")
	if withSpan {
		s = spanText(c.reqs[0].Time, c.reqs[len(c.reqs)-1].Time) + " · " + s
	}
	if robots > 0 {
		s += " and " + plural(robots, "robots.txt fetch", "robots.txt fetches")
	}
	if len(gaps) > 0 {
		slices.Sort(gaps)
		s += " · gaps: median " + dur(gaps[len(gaps)/2]) + ", shortest " + dur(gaps[0])
	}
	if c.nv > 0 {
		s += " · " + plural(int64(c.nv), "violation", "violations")
	}
	return s
}

// spanText says when a span of time was: "2026-12-01 07:00:06 – 07:03:41
// UTC (3m 35s)".
func spanText(a, b time.Time) string {
	a, b = a.UTC(), b.UTC()
	if a.Equal(b) {
		return stamp(a) + " UTC"
	}
	end := stamp(b)
	if a.Format("2006-01-02") == b.Format("2006-01-02") {
		end = clock(b)
	}
	return stamp(a) + " – " + end + " UTC (" + dur(b.Sub(a)) + ")"
}

// topHeap keeps the addresses with the most hits, the least first.
type topEntry struct {
	a   Address
	seq int
}
type topHeap []topEntry

func (h topHeap) Len() int { return len(h) }
func (h topHeap) Less(i, j int) bool {
	if h[i].a.Hits != h[j].a.Hits {
		return h[i].a.Hits < h[j].a.Hits
	}
	return h[i].seq > h[j].seq
}
func (h topHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *topHeap) Push(x any)   { *h = append(*h, x.(topEntry)) }
func (h *topHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type groupKey struct{ crawler, verdict, why string }

type restEntry struct {
	seq   int
	group int
	ip    string
	hits  int64
}

// buildAddresses reads the addresses once: the most hits get a full row,
// the rest are listed compactly per crawler, verdict and reason.
func buildAddresses(seq func(func(Address) bool), lim Limits, multi bool) addrView {
	var av addrView
	if seq == nil {
		av.Total = "0"
		return av
	}
	h := &topHeap{}
	groups := map[groupKey]int{}
	var keys []groupKey
	var counts []int64
	var rest []restEntry
	verdicts := map[string]int64{}
	unverified := map[string]int64{} // hits by why they are unverified
	n := 0
	for a := range seq {
		verdicts[a.Verdict]++
		why := a.Reason
		if why == "" {
			why = a.Method
		}
		if a.Verdict == string(verify.Unverified) {
			unverified[unverifiedText(a.Reason, a.DNSFailure)] += a.Hits
			if a.Reason == verify.ReasonDNSError && a.DNSFailure != "" {
				why += " (" + a.DNSFailure + ")"
			}
		}
		k := groupKey{a.Crawler, a.Verdict, why}
		gi, ok := groups[k]
		if !ok {
			gi = len(keys)
			groups[k] = gi
			keys = append(keys, k)
			counts = append(counts, 0)
		}
		counts[gi]++
		if len(rest) < lim.ListedAddresses+lim.TopAddresses {
			rest = append(rest, restEntry{seq: n, group: gi, ip: a.IP, hits: a.Hits})
		}
		if h.Len() < lim.TopAddresses {
			heap.Push(h, topEntry{a, n})
		} else if (*h)[0].a.Hits < a.Hits {
			(*h)[0] = topEntry{a, n}
			heap.Fix(h, 0)
		}
		n++
	}
	av.Total = num(int64(n))
	var mix []string
	for _, vd := range []string{"genuine", "spoofed", "unverified"} {
		if verdicts[vd] > 0 {
			mix = append(mix, num(verdicts[vd])+" "+vd)
		}
		delete(verdicts, vd)
	}
	for _, vd := range slices.Sorted(maps.Keys(verdicts)) {
		mix = append(mix, num(verdicts[vd])+" "+cut(vd, 40))
	}
	av.VerdictMix = strings.Join(mix, ", ")
	av.unverifiedWhy = mostHits(unverified, 2, "reason", "reasons")

	top := []topEntry(*h)
	slices.SortFunc(top, func(a, b topEntry) int {
		return cmp.Or(-cmp.Compare(a.a.Hits, b.a.Hits), cmp.Compare(a.seq, b.seq))
	})
	inTop := make(map[int]bool, len(top))
	for _, e := range top {
		inTop[e.seq] = true
		av.Top = append(av.Top, addressRow(e.a))
	}

	// The rest, per group in a fixed order: genuine, unverified, spoofed,
	// then anything else; by crawler and reason within.
	rank := func(vd string) int {
		switch vd {
		case "genuine":
			return 0
		case "unverified":
			return 1
		case "spoofed":
			return 2
		}
		return 3
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		ka, kb := keys[a], keys[b]
		return cmp.Or(cmp.Compare(rank(ka.verdict), rank(kb.verdict)), cmp.Compare(ka.verdict, kb.verdict),
			cmp.Compare(ka.crawler, kb.crawler), cmp.Compare(ka.why, kb.why))
	})
	lists := make([]strings.Builder, len(keys))
	listed := make([]int64, len(keys))
	var shown int64
	for _, e := range rest {
		if inTop[e.seq] || shown == int64(lim.ListedAddresses) {
			continue
		}
		b := &lists[e.group]
		if b.Len() > 0 {
			b.WriteString(" · ")
		}
		b.WriteString(cut(e.ip, 60))
		b.WriteString(" (")
		b.WriteString(num(e.hits))
		b.WriteString(")")
		listed[e.group]++
		shown++
	}
	restTotal := int64(n - len(top))
	if restTotal <= 0 {
		return av
	}
	for _, gi := range order {
		if listed[gi] == 0 {
			continue
		}
		k := keys[gi]
		label := cut(k.verdict, 40)
		if k.why != "" {
			label += " · " + cut(k.why, 60)
		}
		if multi {
			label = cut(k.crawler, 80) + " · " + label
		}
		count := plural(listed[gi], "address", "addresses")
		av.Rest = append(av.Rest, restGroup{Label: label, Count: count, Class: verdictClass(k.verdict), List: lists[gi].String()})
	}
	av.RestLabel = plural(restTotal, "more address", "more addresses") + " (address and hits)"
	if shown < restTotal {
		av.RestNote = num(restTotal-shown) + " more not listed here: the JSON and CSV reports have them all."
	}
	return av
}

// mostHits names the keys of hits with the most hits first (ties in
// alphabetical order), at most shown of them and then how many more:
// "a; b; and 2 more reasons". "" when hits is empty.
func mostHits(hits map[string]int64, shown int, one, many string) string {
	keys := slices.SortedFunc(maps.Keys(hits), func(a, b string) int {
		return cmp.Or(-cmp.Compare(hits[a], hits[b]), strings.Compare(a, b))
	})
	if len(keys) > shown {
		more := len(keys) - shown
		keys = append(keys[:shown], "and "+plural(int64(more), "more "+one, "more "+many))
	}
	return strings.Join(keys, "; ")
}

func verdictClass(vd string) string {
	switch vd {
	case "genuine":
		return "g"
	case "spoofed":
		return "s"
	case "unverified":
		return "u"
	}
	return "x"
}

func addressRow(a Address) addrRow {
	r := addrRow{
		IP: cut(a.IP, 60), Crawler: cut(a.Crawler, 80),
		Verdict: cut(a.Verdict, 40), VerdictClass: verdictClass(a.Verdict),
		Method: cut(a.Method, 40), Reason: cut(a.Reason, 60),
		InList: "no", Hits: num(a.Hits),
		First: stamp(a.FirstSeen), Last: stamp(a.LastSeen),
	}
	if a.InIPList {
		r.InList = "yes"
	}
	r.ReasonText = addressReasonText(a)
	for i, p := range a.PTR {
		if i == 10 {
			r.PTR = append(r.PTR, "… "+num(int64(len(a.PTR)-i))+" more")
			break
		}
		r.PTR = append(r.PTR, cut(p, 120))
	}
	for i, p := range a.Forward {
		if i == 10 {
			r.Forward = append(r.Forward, "… "+num(int64(len(a.Forward)-i))+" more")
			break
		}
		r.Forward = append(r.Forward, cut(p, 120))
	}
	for i, ua := range a.UserAgents {
		if i == userAgentsShown {
			r.UAMore = plural(int64(len(a.UserAgents)-i), "more user agent", "more user agents")
			break
		}
		r.UAs = append(r.UAs, cut(ua, 160))
	}
	for i, w := range a.Warnings {
		if i == 10 {
			break
		}
		r.Warnings = append(r.Warnings, cut(w, 80))
	}
	return r
}
