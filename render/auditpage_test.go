package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/audit/timeline"
)

// TestHTMLOfReport: the html renderer writes the sample report's facts,
// with the timelines it is given drawn, and a structure that holds no
// markup from the report.
func TestHTMLOfReport(t *testing.T) {
	reports := allReports(t)
	r := reports["sample"]
	p := PageOf(r, nil)
	if p.Summary.ClaimedHits != r.Summary.ClaimedHits || p.Summary.Violations != r.Summary.Violations ||
		p.Summary.LogFormat != r.Summary.LogFormat || p.Summary.IPListSource != r.Summary.IPListSource || p.Tool != r.Tool {
		t.Errorf("summary %+v from %+v", p.Summary, r.Summary)
	}
	if len(p.Sites) != len(r.Sites) || len(p.Violations) != len(r.Violations) || len(p.Malformed) != len(r.MalformedExamples) {
		t.Errorf("%d sites, %d violations, %d malformed from %d, %d, %d",
			len(p.Sites), len(p.Violations), len(p.Malformed), len(r.Sites), len(r.Violations), len(r.MalformedExamples))
	}
	for i, v := range r.Violations {
		if i < len(p.Violations) && (p.Violations[i].RobotsLine != v.RobotsLine || p.Violations[i].RobotsRule != v.RobotsRule) {
			t.Errorf("violation %d: robots.txt line %d %q on the page, %d %q in the report",
				i, p.Violations[i].RobotsLine, p.Violations[i].RobotsRule, v.RobotsLine, v.RobotsRule)
		}
	}
	var tl timeline.Set
	for _, ip := range r.IPList() {
		c := timeline.Spoofed
		if ip.Verdict == "genuine" {
			c = timeline.Genuine
		}
		for i := range ip.Hits {
			tl.Add(r.Sites[0].Site, "", timeline.Request{Time: ip.FirstSeen.Add(time.Duration(i) * time.Second), Class: c, Status: 200})
		}
	}
	html, _ := Lookup("html")
	for _, tc := range []struct {
		name      string
		timelines *timeline.Set
		drawings  int
	}{{"without timelines", nil, 0}, {"with timelines", &tl, 1}} {
		var out bytes.Buffer
		if err := html.WriteReport(&out, r, Options{Timelines: tc.timelines}); err != nil {
			t.Fatal(err)
		}
		for _, p := range structureProblems(out.Bytes()) {
			t.Errorf("%s: %s", tc.name, p)
		}
		s := out.String()
		if n := strings.Count(s, `<svg class="tl wide"`); (n > 0) != (tc.drawings > 0) {
			t.Errorf("%s: %d drawings", tc.name, n)
		}
		for _, ip := range r.IPList() {
			if !strings.Contains(s, ip.IP) {
				t.Errorf("%s: address %s is not on the page", tc.name, ip.IP)
			}
		}
		rules := 0
		for _, v := range r.Violations {
			if v.RobotsRule != "" {
				// The deciding line stands in its own column, and the
				// detail, which only quotes it, is not repeated.
				rules++
				cell := fmt.Sprintf(`<td class="rule"><span class="n">%d</span> <code>%s</code></td><td></td>`, v.RobotsLine, v.RobotsRule)
				if !strings.Contains(s, v.Kind) || !strings.Contains(s, cell) {
					t.Errorf("%s: violation %s with robots.txt line %d %q is not on the page as %s", tc.name, v.Kind, v.RobotsLine, v.RobotsRule, cell)
				}
				continue
			}
			if !strings.Contains(s, v.Kind) || !strings.Contains(s, strings.ReplaceAll(v.Detail, `"`, "&#34;")) {
				t.Errorf("%s: violation %s %q is not on the page", tc.name, v.Kind, v.Detail)
			}
		}
		if rules != 3 {
			t.Errorf("%s: %d robots violations with their deciding line in the sample report, want 3", tc.name, rules)
		}
	}
	if _, ok := LookupDocument("html"); ok {
		t.Error("html offers itself for documents other than reports")
	}
}

// TestHTMLOfCrawlersReport: the page of a report of several crawlers
// carries each one's totals and the crawler of every address, site and
// violation, and draws a timeline per crawler and site.
func TestHTMLOfCrawlersReport(t *testing.T) {
	r := goldenReport(t, "crawlers.json")
	tl := &timeline.Set{Crawlers: []string{"lohisoftbot", "googlebot", "bingbot", "examplebot"}}
	for _, ip := range r.IPList() {
		c := timeline.Spoofed
		if ip.Verdict == "genuine" {
			c = timeline.Genuine
		}
		tl.Add("example.org", ip.Crawler, timeline.Request{Time: ip.FirstSeen, Class: c, Status: 200})
	}
	p := PageOf(r, tl)
	if len(p.Crawlers) != 4 || p.Crawlers[3] != (CrawlerSummary{Name: "examplebot", Category: "other", ClaimedHits: 9, GenuineHits: 8, SpoofedHits: 1, Violations: 1}) {
		t.Errorf("crawlers %+v", p.Crawlers)
	}
	if len(p.Violations) != 1 || p.Violations[0].Crawler != "examplebot" || len(p.Sites) != 4 || p.Sites[1].Crawler != "googlebot" {
		t.Errorf("violations %+v, sites %+v", p.Violations, p.Sites)
	}
	for a := range p.Addresses {
		if a.Crawler == "" {
			t.Errorf("address %s without its crawler", a.IP)
		}
	}
	var out bytes.Buffer
	if err := WriteHTML(&out, PageOf(r, tl)); err != nil {
		t.Fatal(err)
	}
	for _, p := range structureProblems(out.Bytes()) {
		t.Error(p)
	}
	s := out.String()
	if n := strings.Count(s, `<svg class="tl wide"`); n < 4 {
		t.Errorf("%d drawings, want one per crawler and site at least", n)
	}
	for _, name := range []string{"lohisoftbot", "googlebot", "bingbot", "examplebot"} {
		if n := strings.Count(s, ">"+name+"<"); n < 3 {
			t.Errorf("%s is named %d times, want in the crawlers, sites and addresses tables", name, n)
		}
	}
}

// TestTextOfCrawlersReport: the table of a report of several crawlers
// fits every width and names every crawler; in Markdown too.
func TestTextOfCrawlersReport(t *testing.T) {
	r := goldenReport(t, "crawlers.json")
	for width := MinWidth; width <= 200; width++ {
		var out bytes.Buffer
		if err := writeReportText(NewText(&out, false, width), r, 0); err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(out.String(), "\n") {
			if w := textWidth(line); w > width {
				t.Fatalf("at width %d line %d is %d wide:\n%s", width, n+1, w, out.String())
			}
		}
		if width == 80 || width == 200 {
			for _, s := range []string{"CRAWLERS", "CLAIMING TO BE A CRAWLER", "lohisoftbot", "googlebot", "bingbot", "examplebot", "example.org (examplebot): budget 1"} {
				if !strings.Contains(out.String(), s) {
					t.Errorf("at width %d the table lacks %q:\n%s", width, s, out.String())
				}
			}
		}
	}
}
