package render

import (
	"cmp"
	"container/heap"
	"fmt"
	"io"
	"iter"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/nouns"
	"github.com/lohisoft/lohibot-audit/parse"
)

// Text writes output for people: terminal text, or Markdown. Text from
// strangers goes through Esc or Cell first; the program's own words are
// written as they are.
type Text struct {
	w     io.Writer
	err   error // the first write error
	md    bool
	width int
}

// NewText returns a Text writing to w, in Markdown when md, else as
// terminal text at most width columns wide (0: no limit).
func NewText(w io.Writer, md bool, width int) *Text {
	return &Text{w: w, md: md, width: width}
}

// Markdown reports whether t writes Markdown.
func (t *Text) Markdown() bool { return t.md }

// Err returns the first error that writing met.
func (t *Text) Err() error { return t.err }

// put writes s unless a write has failed.
func (t *Text) put(s string) {
	if t.err == nil {
		_, t.err = io.WriteString(t.w, s)
	}
}

// Esc makes text from strangers (a log, DNS, a robots.txt) safe to print:
// control characters escaped (parse.EscapeControl), so that it stays on
// one line, and in Markdown the markup characters escaped too.
func (t *Text) Esc(s string) string {
	s = parse.EscapeControl(s)
	if t.md {
		s = mdEscaper.Replace(s)
	}
	return s
}

// Cell is Esc for a table cell, cut to max bytes (0: no limit) with an
// ellipsis before it is escaped for Markdown.
func (t *Text) Cell(s string, max int) string {
	s = Cell(s, max)
	if t.md {
		s = mdEscaper.Replace(s)
	}
	return s
}

// Printf writes the program's own text. Lines longer than the width are
// wrapped at spaces, their continuation indented as the line is (and past
// a leading "- ").
func (t *Text) Printf(format string, a ...any) {
	s := fmt.Sprintf(format, a...)
	if t.md || t.width <= 0 {
		t.put(s)
		return
	}
	width := max(t.width, MinWidth)
	var b strings.Builder
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		if textWidth(line) <= width {
			b.WriteString(line)
			continue
		}
		body := strings.TrimLeft(line, " ")
		indent := line[:len(line)-len(body)]
		if strings.HasPrefix(body, "- ") {
			indent += "  "
		}
		if len(indent) > width/2 {
			indent = ""
		}
		// The first line is a prefix of line (wrap keeps the text but
		// for the space at each break): the rest is wrapped again,
		// narrower, its words as they were.
		first := wrap(line, width)[0]
		b.WriteString(first)
		rest := strings.TrimPrefix(line[len(first):], " ")
		for _, l := range wrap(rest, width-len(indent)) {
			if rest == "" {
				break
			}
			b.WriteString("\n" + indent + l)
		}
	}
	t.put(b.String())
}

// Heading writes a section's title.
func (t *Text) Heading(title string) {
	if t.md {
		t.Printf("\n## %s\n\n", title)
	} else {
		t.Printf("\n%s\n", strings.ToUpper(title))
	}
}

// Table writes tab, as Markdown or fitted to the width.
func (t *Text) Table(tab *Table) {
	t.put(tab.text(t.md, t.width))
}

// Cell makes text from logs safe and short enough for a terminal: control
// characters escaped, cut to max bytes (0: no limit) at a rune boundary
// with an ellipsis.
func Cell(s string, max int) string {
	s = parse.EscapeControl(s)
	if max > 0 && len(s) > max {
		cut := max
		for cut > 0 && s[cut]&0xc0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// mdEscaper backslash-escapes the characters that Markdown (GitHub's
// included) would read as markup: emphasis, code, links and images, HTML,
// headings and table cells.
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `[`, `\[`, `]`, `\]`,
	`<`, `\<`, `>`, `\>`, `#`, `\#`, `!`, `\!`, `|`, `\|`,
)

// OrDash returns s, or "-" when s is empty.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func tableTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// writeReportText prints the report for people, as terminal text or as
// Markdown: the addresses by hits, the top of them only when top > 0.
// Text from logs, DNS and files is escaped for the terminal and, in
// Markdown, for Markdown. A report that names its crawlers (--crawler)
// gets each crawler's totals and a crawler column in every table; one
// that names none is written as it always was.
func writeReportText(t *Text, r *audit.Report, top int) error {
	s := r.Summary
	n := r.NumIPs()
	var ips []audit.IPReport
	if n > 0 {
		ips = topByHits(r.AllIPs(), top)
	}
	named := namesCrawlers(r, slices.Values(ips))
	if t.md {
		t.Printf("# lohibot-audit report\n\n")
	}
	files := nouns.Count(s.Files, "file", "files")
	if unread := r.Unread(); len(unread) > 0 && len(unread) == s.Files {
		t.Printf("%s, none read: %s (see the warnings)\n", files, t.Esc(strings.Join(unread, ", ")))
	} else if len(unread) > 0 {
		t.Printf("%s (not read: %s), %s (%d malformed), log format %s\n", files, t.Esc(strings.Join(unread, ", ")), nouns.Count(s.Lines, "line", "lines"), s.Malformed, t.Esc(OrDash(s.LogFormat)))
	} else {
		t.Printf("%s, %s (%d malformed), log format %s\n", files, nouns.Count(s.Lines, "line", "lines"), s.Malformed, t.Esc(OrDash(s.LogFormat)))
	}
	// A report that names no crawler is about the default one.
	claimed, listed := crawler.DefaultTitle(), "the crawler's listed addresses did not carry its User-Agent"
	if named {
		claimed, listed = "crawler", "the crawlers' listed addresses did not carry their User-Agent"
	}
	leftOut := ""
	if s.ViolationsLeftOut > 0 {
		leftOut = fmt.Sprintf(" (%d not listed, past --max-violations per site and kind)", s.ViolationsLeftOut)
	}
	t.Printf("%d claimed %s %s: %d genuine, %d spoofed, %d unverified; %s%s\n",
		s.ClaimedHits, claimed, nouns.Of(s.ClaimedHits, "hit", "hits"), s.GenuineHits, s.SpoofedHits, s.UnverifiedHits, nouns.Count(s.Violations, "violation", "violations"), leftOut)
	if s.FilteredOut > 0 {
		t.Printf("%s outside --since/--until left out\n", nouns.Count(s.FilteredOut, "claimed hit", "claimed hits"))
	}
	if s.UnclaimedHit > 0 {
		t.Printf("%s from %s\n", nouns.Count(s.UnclaimedHit, "request", "requests"), listed)
	}
	if lists, ok := listsByCrawler(s.IPListSource, s.Crawlers); ok {
		t.Printf("IP lists:\n")
		for i, c := range s.Crawlers {
			t.Printf("- %s: %s\n", t.Esc(c.Name), t.Esc(OrDash(lists[i])))
		}
	} else {
		t.Printf("IP list: %s\n", t.Esc(OrDash(s.IPListSource)))
	}

	if len(s.Crawlers) > 0 {
		t.Heading("Crawlers")
		tab := &Table{Header: []string{"CRAWLER", "CATEGORY", "CLAIMED HITS", "GENUINE", "SPOOFED", "UNVERIFIED", "VIOLATIONS"}, TitleColumns: 1}
		for _, c := range s.Crawlers {
			tab.Rows = append(tab.Rows, []string{t.Cell(c.Name, 80), t.Cell(OrDash(c.Category), 40), strconv.FormatInt(c.ClaimedHits, 10), strconv.FormatInt(c.GenuineHits, 10),
				strconv.FormatInt(c.SpoofedHits, 10), strconv.FormatInt(c.UnverifiedHits, 10), strconv.Itoa(c.Violations)})
		}
		t.Table(tab)
	}

	if n > 0 {
		who := crawler.DefaultTitle()
		if named {
			who = "a crawler"
		}
		if len(ips) < n {
			t.Heading(fmt.Sprintf("Addresses claiming to be %s (the %d with the most hits of %d)", who, len(ips), n))
		} else {
			t.Heading("Addresses claiming to be " + who)
		}
		tab := &Table{Header: []string{"IP", "VERDICT", "WHY", "HITS", "PTR", "FIRST SEEN", "LAST SEEN"},
			Whole: []bool{5: true, 6: true}, TitleColumns: 2}
		for _, ip := range ips {
			tab.Rows = append(tab.Rows, []string{t.Cell(ip.IP, 45), t.Cell(string(ip.Verdict), 0), t.Cell(withProxy(Why(ip.Method, ip.Reason, ip.DNSFailure, ip.Warnings), ip.Reason, ip.Proxy), 60),
				strconv.FormatInt(ip.Hits, 10), t.Cell(strings.Join(ip.PTR, " "), 60), tableTime(ip.FirstSeen), tableTime(ip.LastSeen)})
		}
		if named {
			tab.withCrawler(1, func(i int) string { return t.Cell(ips[i].Crawler, 80) })
		}
		t.Table(tab)
		if len(ips) < n {
			t.Printf("%s with fewer hits %s left out\n", nouns.Count(n-len(ips), "more address", "more addresses"), nouns.Of(n-len(ips), "is", "are"))
		}
	}

	if len(r.Sites) > 0 {
		t.Heading("Sites")
		tab := &Table{Header: []string{"SITE", "CLAIMED HITS", "GENUINE PAGES", "ROBOTS.TXT FETCHES", "VIOLATIONS", "CHECKS SKIPPED"}, TitleColumns: 1}
		for _, site := range r.Sites {
			tab.Rows = append(tab.Rows, []string{t.Cell(site.Site, 60), strconv.FormatInt(site.ClaimedHits, 10), strconv.FormatInt(site.Pages, 10),
				strconv.FormatInt(site.RobotsFetches, 10), strconv.Itoa(site.Violations), t.Cell(OrDash(ChecksText(site.ChecksSkipped, site.NotPromised)), 0)})
		}
		if named {
			tab.withCrawler(1, func(i int) string { return t.Cell(r.Sites[i].Crawler, 80) })
		}
		t.Table(tab)
		// Pages the robots check did not hold against the crawler.
		noted := false
		for _, site := range r.Sites {
			for _, n := range site.RobotsNotes {
				if !noted {
					t.Printf("\nrobots.txt notes:\n")
					noted = true
				}
				t.Printf("- %s: %s\n", t.Esc(site.Site), t.Esc(n))
			}
		}
	}

	if len(r.Violations) > 0 {
		writeViolationsText(t, r, named, top)
	}

	if len(r.MalformedExamples) > 0 {
		t.Heading("Malformed lines (first examples)")
		tab := &Table{Header: []string{"WHERE", "REASON", "LINE"}, Break: []bool{false, true, true}, TitleColumns: 1}
		for _, m := range r.MalformedExamples {
			tab.Rows = append(tab.Rows, []string{t.Cell(fmt.Sprintf("%s:%d", m.File, m.Line), 60), t.Cell(OrDash(m.Reason), 200), t.Cell(m.Text, 100)})
		}
		t.Table(tab)
	}
	if len(r.Warnings) > 0 {
		t.Heading("Warnings")
		for _, wn := range r.Warnings {
			t.Printf("- %s\n", t.Esc(wn))
		}
	}
	return t.Err()
}

// writeViolationsText prints the violations grouped by site (and
// crawler), each group's title counting them by kind. With top > 0 only
// top of them are shown, taken from each site's kinds in turn (so that a
// kind with few is not hidden by one with many), and a last line counts
// the others by kind.
func writeViolationsText(t *Text, r *audit.Report, named bool, top int) {
	title := "Violations by the genuine crawler"
	if named {
		title += "s"
	}
	t.Heading(title)
	type group struct{ site, crawler string }
	groupOf := func(v *audit.Violation) group {
		g := group{site: v.Site}
		if named {
			g.crawler = v.Crawler
		}
		return g
	}
	// What the report left out, per site row and kind.
	leftOut := map[group]map[string]int{}
	for _, s := range r.Sites {
		if len(s.ViolationsLeftOut) > 0 {
			g := group{site: s.Site}
			if named {
				g.crawler = s.Crawler
			}
			leftOut[g] = s.ViolationsLeftOut
		}
	}
	shown := shownViolations(r.Violations, top, func(v *audit.Violation) any { return groupOf(v) })
	byGroup := map[group][]int{}
	listed := map[group]map[string]int{}
	var groups []group
	for i := range r.Violations {
		v := &r.Violations[i]
		g := groupOf(v)
		if listed[g] == nil {
			listed[g] = map[string]int{}
			groups = append(groups, g)
		}
		listed[g][v.Kind]++
		if shown == nil || shown[i] {
			byGroup[g] = append(byGroup[g], i)
		}
	}
	slices.SortFunc(groups, func(a, b group) int {
		return cmp.Or(strings.Compare(a.site, b.site), strings.Compare(a.crawler, b.crawler))
	})
	hidden := map[string]int{}
	nHidden := 0
	for _, g := range groups {
		var counts []string
		for k, n := range listed[g] {
			if lo := leftOut[g][k]; lo > 0 {
				counts = append(counts, fmt.Sprintf("%s %d (%d not listed)", k, n+lo, lo))
			} else {
				counts = append(counts, fmt.Sprintf("%s %d", k, n))
			}
		}
		sort.Strings(counts)
		title := t.Cell(g.site, 80)
		if named {
			title += " (" + t.Cell(OrDash(g.crawler), 80) + ")"
		}
		title += ": " + t.Esc(strings.Join(counts, ", "))
		if t.md {
			t.Printf("### %s\n\n", title)
		} else {
			t.Printf("%s\n", title)
		}
		idx := byGroup[g]
		for k, n := range listed[g] {
			hidden[k] += n
			nHidden += n
		}
		for _, i := range idx {
			hidden[r.Violations[i].Kind]--
			nHidden--
		}
		if len(idx) == 0 {
			continue
		}
		// Past the width, a violation is a block: its kind, time,
		// address and line, then its path and its detail whole.
		tab := &Table{Header: []string{"KIND", "TIME", "IP", "WHERE", "PATH", "DETAIL"}, Whole: []bool{1: true}, TitleColumns: 4, Blocks: true}
		for _, i := range idx {
			v := &r.Violations[i]
			tab.Rows = append(tab.Rows, []string{t.Cell(v.Kind, 0), tableTime(v.Time), t.Cell(v.IP, 45), t.Cell(fmt.Sprintf("%s:%d", v.File, v.Line), 60),
				t.Cell(v.Path, 200), t.Cell(v.Detail, 300)})
		}
		t.Table(tab)
	}
	if nHidden > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(hidden)) {
			if hidden[k] > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", k, hidden[k]))
			}
		}
		t.Printf("%s not shown (%s); --top 0 shows every one listed\n", nouns.Count(nHidden, "more violation", "more violations"), t.Esc(strings.Join(parts, ", ")))
	}
}

// shownViolations chooses which of vs (in report order) a listing of top
// shows: the first of each site's kinds, then the second of each, and so
// on, until top are chosen. It returns nil when every one is shown.
func shownViolations(vs []audit.Violation, top int, groupOf func(*audit.Violation) any) []bool {
	if top <= 0 || len(vs) <= top {
		return nil
	}
	type bucket struct {
		group any
		kind  string
	}
	var order []bucket
	members := map[bucket][]int{}
	for i := range vs {
		b := bucket{groupOf(&vs[i]), vs[i].Kind}
		if _, ok := members[b]; !ok {
			order = append(order, b)
		}
		members[b] = append(members[b], i)
	}
	shown := make([]bool, len(vs))
	for n, round := 0, 0; n < top; round++ {
		for _, b := range order {
			if m := members[b]; round < len(m) && n < top {
				shown[m[round]] = true
				n++
			}
		}
	}
	return shown
}

// topByHits returns the addresses by hits, most first, ties in the order
// given; only the first top of them when top > 0, holding no more than
// top of them in memory then.
func topByHits(ips iter.Seq[audit.IPReport], top int) []audit.IPReport {
	h := &hitHeap{}
	seq := 0
	for ip := range ips {
		e := hitEntry{ip, seq}
		seq++
		switch {
		case top <= 0:
			h.e = append(h.e, e)
		case h.Len() < top:
			heap.Push(h, e)
		case e.before(h.e[0]):
			h.e[0] = e
			heap.Fix(h, 0)
		}
	}
	slices.SortFunc(h.e, func(a, b hitEntry) int {
		if a.before(b) {
			return -1
		}
		return 1
	})
	out := make([]audit.IPReport, len(h.e))
	for i, e := range h.e {
		out[i] = e.ip
	}
	return out
}

type hitEntry struct {
	ip  audit.IPReport
	seq int
}

// before says e is listed before o: more hits, or as many and given first.
func (e hitEntry) before(o hitEntry) bool {
	return e.ip.Hits > o.ip.Hits || e.ip.Hits == o.ip.Hits && e.seq < o.seq
}

// hitHeap keeps the entry listed last at its root.
type hitHeap struct{ e []hitEntry }

func (h *hitHeap) Len() int           { return len(h.e) }
func (h *hitHeap) Less(i, j int) bool { return h.e[j].before(h.e[i]) }
func (h *hitHeap) Swap(i, j int)      { h.e[i], h.e[j] = h.e[j], h.e[i] }
func (h *hitHeap) Push(x any)         { h.e = append(h.e, x.(hitEntry)) }
func (h *hitHeap) Pop() any {
	x := h.e[len(h.e)-1]
	h.e = h.e[:len(h.e)-1]
	return x
}

// namesCrawlers reports whether the report names its crawlers (SPEC §10):
// it has per-crawler totals, or a site, violation or one of ips names its
// crawler.
func namesCrawlers(r *audit.Report, ips iter.Seq[audit.IPReport]) bool {
	if len(r.Summary.Crawlers) > 0 {
		return true
	}
	for _, s := range r.Sites {
		if s.Crawler != "" {
			return true
		}
	}
	for _, v := range r.Violations {
		if v.Crawler != "" {
			return true
		}
	}
	for ip := range ips {
		if ip.Crawler != "" {
			return true
		}
	}
	return false
}

// listsByCrawler splits a report's ip_list_source of several crawlers,
// "lohisoftbot: URL; googlebot: URL, URL", into each crawler's, in the
// order of crawlers; false when it is not of that shape.
func listsByCrawler(source string, crawlers []audit.CrawlerSummary) ([]string, bool) {
	if len(crawlers) < 2 {
		return nil, false
	}
	lists := make([]string, len(crawlers))
	rest, ok := strings.CutPrefix(source, crawlers[0].Name+": ")
	if !ok {
		return nil, false
	}
	for i := range crawlers {
		if i == len(crawlers)-1 {
			lists[i] = rest
			break
		}
		sep := "; " + crawlers[i+1].Name + ": "
		at := strings.Index(rest, sep)
		if at < 0 {
			return nil, false
		}
		lists[i], rest = rest[:at], rest[at+len(sep):]
	}
	return lists, true
}
