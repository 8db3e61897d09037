package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
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
	var tl Timelines
	for _, ip := range r.IPList() {
		c := Spoofed
		if ip.Verdict == "genuine" {
			c = Genuine
		}
		for i := range ip.Hits {
			tl.Add(r.Sites[0].Site, "", Request{Time: ip.FirstSeen.Add(time.Duration(i) * time.Second), Class: c, Status: 200})
		}
	}
	html, _ := Lookup("html")
	for _, tc := range []struct {
		name      string
		timelines *Timelines
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
		if n := strings.Count(s, `<svg class="tl"`); (n > 0) != (tc.drawings > 0) {
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
