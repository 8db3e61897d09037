package render

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lohisoft/lohibot-audit/audit/timeline"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
	"github.com/lohisoft/lohibot-audit/parse"
	"golang.org/x/net/html"
)

// t0 is when the test crawls begin.
var t0 = time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)

func render(t testing.TB, p *Page) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteHTML(&buf, p); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// multiPage is a small report of two crawlers on two sites, one of them
// only visited by impostors.
func multiPage(t testing.TB) *Page {
	mk := func(site, crawler string) *timeline.Timeline {
		return &timeline.Timeline{Site: site, Crawler: crawler, Budget: timeline.Budget{Pages: 5, Window: time.Hour}}
	}
	a := mk("blog.example", "lohisoftbot")
	b := mk("blog.example", "googlebot")
	c := mk("shop.example", "googlebot")
	for i := 0; i < 8; i++ {
		a.Add(timeline.Request{Time: t0.Add(time.Duration(i) * 40 * time.Second), Class: timeline.Genuine, Robots: i == 0, Status: 200})
		b.Add(timeline.Request{Time: t0.Add(30*time.Minute + time.Duration(i)*3*time.Second), Class: timeline.Genuine, Status: 200})
		c.Add(timeline.Request{Time: t0.Add(time.Duration(i) * 11 * time.Minute), Class: timeline.Spoofed, Status: 404})
	}
	c.Add(timeline.Request{Time: t0.Add(2 * time.Hour), Class: timeline.Unverified, Status: 200})
	addrs := []Address{
		{IP: "79.139.58.98", Crawler: "lohisoftbot", Verdict: "genuine", Method: "fcrdns", PTR: []string{"crawler1.bot.lohisoft.com."}, Forward: []string{"79.139.58.98"}, InIPList: true, Hits: 8, FirstSeen: t0, LastSeen: t0.Add(280 * time.Second), UserAgents: []string{"LohiSoftBot/1.0 (+https://lohisoft.com/bot)"}},
		{IP: "66.249.66.1", Crawler: "googlebot", Verdict: "genuine", Method: "fcrdns", PTR: []string{"crawl-66-249-66-1.googlebot.com."}, Forward: []string{"66.249.66.1"}, InIPList: true, Hits: 8, FirstSeen: t0.Add(30 * time.Minute), LastSeen: t0.Add(30*time.Minute + 21*time.Second), UserAgents: []string{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"}},
		{IP: "203.0.113.9", Crawler: "googlebot", Verdict: "spoofed", Method: "fcrdns", Reason: "ptr-mismatch", PTR: []string{"host9.example.net."}, Hits: 8, FirstSeen: t0, LastSeen: t0.Add(77 * time.Minute), UserAgents: []string{"Googlebot/2.1"}},
		{IP: "198.51.100.3", Crawler: "googlebot", Verdict: "unverified", Method: "fcrdns", Reason: "dns-error", Hits: 1, FirstSeen: t0.Add(2 * time.Hour), LastSeen: t0.Add(2 * time.Hour), UserAgents: []string{"Googlebot"}, Warnings: []string{"fcrdns-failed"}},
	}
	return &Page{
		Tool: "lohibot-audit", Version: "1.2.3", GeneratedAt: t0.Add(3 * time.Hour),
		Summary: Summary{Files: 1, Lines: 1000, ClaimedHits: 25, GenuineHits: 16, SpoofedHits: 8, UnverifiedHits: 1, Violations: 2, LogFormat: "combined", IPListSource: "https://lohisoft.com/bot/ips.json (cached)", Incomplete: true},
		Crawlers: []CrawlerSummary{
			{Name: "googlebot", Category: "search", ClaimedHits: 17, GenuineHits: 8, SpoofedHits: 8, UnverifiedHits: 1, Violations: 1},
			{Name: "lohisoftbot", Category: "search", ClaimedHits: 8, GenuineHits: 8, Violations: 1},
		},
		Addresses: slices.Values(addrs),
		Sites: []Site{
			{Site: "blog.example", Crawler: "googlebot", Pages: 8, ClaimedHits: 8, Violations: 1, ChecksSkipped: []string{"robots"}},
			{Site: "blog.example", Crawler: "lohisoftbot", Pages: 7, RobotsFetches: 1, ClaimedHits: 8, Violations: 1},
			{Site: "shop.example", Crawler: "googlebot", ClaimedHits: 9},
		},
		Violations: []Violation{
			{Kind: "budget", Crawler: "lohisoftbot", Site: "blog.example", IP: "79.139.58.98", Time: t0.Add(240 * time.Second), File: "access.log", Line: 600, Path: "/p6", Detail: "6 pages within 1h, more than the budget of 5"},
			{Kind: "robots-not-fetched", Crawler: "googlebot", Site: "blog.example", IP: "66.249.66.1", Time: t0.Add(30 * time.Minute), File: "access.log", Line: 700, Path: "/", Detail: "no /robots.txt request within 24h before"},
		},
		Timelines: []*timeline.Timeline{a, b, c},
		Limits:    Limits{TopAddresses: 2},
	}
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		page func(testing.TB) *Page
	}{
		{"sample", samplePage},
		{"multi", multiPage},
		{"empty", func(testing.TB) *Page { return &Page{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := render(t, tc.page(t))
			if again := render(t, tc.page(t)); !bytes.Equal(got, again) {
				t.Fatal("two renderings of the same page differ")
			}
			checkStructure(t, got)
			testutil.Golden(t, filepath.Join("testdata", tc.name+".golden.html"), got)
		})
	}
}

func TestMultiCrawlerShowsCrawlers(t *testing.T) {
	out := string(render(t, multiPage(t)))
	for _, want := range []string{
		`<span class="crawler">googlebot</span>`,
		`<th>crawler</th>`,
		"An input could not be read whole",
		// A site only impostors visited still has its (empty) genuine lane.
		"shop.example",
		// The top 2 by hits; the other two are listed compactly.
		"2 more addresses",
		"198.51.100.3 (1)",
		"googlebot · spoofed · ptr-mismatch",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	one := string(render(t, samplePage(t)))
	if strings.Contains(one, `class="crawler"`) {
		t.Error("a report of one crawler shows crawler labels")
	}
}

// The tags and attributes the template writes. Nothing else may appear.
var (
	allowedTags = map[string]bool{
		"html": true, "head": true, "meta": true, "title": true, "style": true, "body": true, "main": true,
		"header": true, "footer": true, "nav": true, "section": true, "article": true, "figure": true, "figcaption": true,
		"h1": true, "h2": true, "h3": true, "h4": true, "p": true, "a": true, "div": true, "span": true, "b": true, "br": true,
		"code": true, "dl": true, "dt": true, "dd": true, "ul": true, "li": true, "details": true, "summary": true,
		"table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true,
		"svg": true, "g": true, "rect": true, "path": true, "circle": true, "line": true, "text": true,
	}
	allowedAttrs = map[string]bool{
		"lang": true, "charset": true, "http-equiv": true, "content": true, "name": true, "class": true, "id": true,
		"href": true, "viewBox": true, "role": true, "aria-label": true, "width": true, "height": true,
		"x": true, "y": true, "rx": true, "d": true, "cx": true, "cy": true, "r": true, "x1": true, "x2": true, "y1": true, "y2": true,
	}
	generatedID    = regexp.MustCompile(`^(summary|sites|addresses|malformed|warnings|site-[0-9]+(-v[0-9]+)?)$`)
	classToken     = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	numberAttr     = regexp.MustCompile(`^-?[0-9.]+$`)
	pathData       = regexp.MustCompile(`^[MVHZlz0-9 .\-]*$`)
	unsafeRune     = func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f || parse.IsTerminalUnsafe(r) }
	allowedClasses = map[string]bool{}
)

func init() {
	for _, c := range strings.Fields(`meta alert cards card n l d c g s u v m facts crawlers sites r t ip path site
		crawler chip warn kind badge tl lane ll ls ticks err bars rb rbp band over axis tk tkl tkc first final vm
		legend rule detail iplist muted note violations addresses malformed warnings where k x wide narrow multi`) {
		allowedClasses[c] = true
	}
}

// checkStructure parses a rendered page and fails unless every element and
// attribute is one the template writes, every link stays on the page, and
// no text or attribute carries a control, bidi or invalid character.
func checkStructure(t *testing.T, out []byte) {
	t.Helper()
	for _, p := range structureProblems(out) {
		t.Error(p)
	}
}

// structureProblems is checkStructure's work: what is wrong with a page.
func structureProblems(out []byte) []string {
	var problems []string
	report := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if !utf8.Valid(out) {
		report("the page is not valid UTF-8")
	}
	doc, err := html.Parse(bytes.NewReader(out))
	if err != nil {
		return []string{err.Error()}
	}
	var csp int
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.ElementNode:
			if !allowedTags[n.Data] {
				report("element <%s> is not one the template writes", n.Data)
			}
			for _, a := range n.Attr {
				name := a.Key
				if a.Namespace != "" {
					report("<%s> has a namespaced attribute %s:%s", n.Data, a.Namespace, a.Key)
				}
				if !allowedAttrs[name] || strings.HasPrefix(strings.ToLower(name), "on") {
					report("<%s> has attribute %s=%q", n.Data, name, a.Val)
				}
				if strings.ContainsFunc(a.Val, unsafeRune) {
					report("<%s %s> carries a control character: %q", n.Data, name, a.Val)
				}
				switch name {
				case "href":
					if strings.Contains(strings.ToLower(a.Val), "javascript:") {
						report("<%s %s=%q>", n.Data, name, a.Val)
					}
					if !strings.HasPrefix(a.Val, "#") || !generatedID.MatchString(a.Val[1:]) {
						report("link to %q leaves the page or names no generated id", a.Val)
					}
				case "id":
					if !generatedID.MatchString(a.Val) {
						report("id %q is not generated", a.Val)
					}
				case "class":
					for _, c := range strings.Fields(a.Val) {
						if !classToken.MatchString(c) || !allowedClasses[c] {
							report("class %q on <%s>", c, n.Data)
						}
					}
				case "x", "y", "rx", "cx", "cy", "r", "x1", "x2", "y1", "y2":
					if !numberAttr.MatchString(a.Val) {
						report("<%s %s=%q> is not a number", n.Data, name, a.Val)
					}
				case "d":
					if !pathData.MatchString(a.Val) {
						report("path data %.80q", a.Val)
					}
				case "http-equiv":
					if a.Val != "Content-Security-Policy" {
						report("http-equiv %q", a.Val)
					}
				}
			}
			if n.Data == "meta" && attr(n, "http-equiv") == "Content-Security-Policy" {
				csp++
				if got := attr(n, "content"); got != ContentSecurityPolicy {
					report("policy %q", got)
				}
			}
		case html.TextNode:
			if strings.ContainsFunc(n.Data, unsafeRune) {
				report("text carries a control character: %.200q", n.Data)
			}
		case html.CommentNode:
			report("comment %.80q", n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if csp != 1 {
		report("%d Content-Security-Policy metas, want 1", csp)
	}
	return problems
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func TestStructureCheckFindsInjections(t *testing.T) {
	good := render(t, samplePage(t))
	if p := structureProblems(good); len(p) > 0 {
		t.Fatalf("the sample has problems: %q", p)
	}
	for _, bad := range []string{
		`<img src=x onerror=alert(1)>`,
		`<script>alert(1)</script>`,
		`<b onclick="x">b</b>`,
		`<a href="javascript:alert(1)">x</a>`,
		`<a href="https://evil.example/">x</a>`,
		`<span class="evil">x</span>`,
		`<span id="x">x</span>`,
		"<b>a raw escape \x1b[31m</b>",
		"<b>\u202e</b>",
		`<!-- x -->`,
		`<svg><rect x="1;alert(1)"/></svg>`,
	} {
		page := bytes.Replace(good, []byte("<footer>"), []byte(bad+"<footer>"), 1)
		if p := structureProblems(page); len(p) == 0 {
			t.Errorf("no problem found in a page with %q", bad)
		}
	}
	nometa := bytes.Replace(good, []byte(`http-equiv="Content-Security-Policy"`), []byte(`name="x"`), 1)
	if p := structureProblems(nometa); len(p) == 0 {
		t.Error("no problem found in a page without its policy")
	}
}

// hostile are strings a log, DNS or robots.txt can carry.
var hostile = []string{
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(1)>`,
	`' onmouseover='alert(1)' x='`,
	`javascript:alert(1)`,
	`</title><script>alert(2)</script>`,
	`</style><script>alert(3)</script><style>`,
	`<svg onload=alert(4)><a href="javascript:alert(5)">x</a></svg>`,
	`</text></svg><iframe src=//evil.example></iframe>`,
	`<!-- comment --> <![CDATA[ x ]]> &lt;b&gt; &amp;`,
	"\x1b]0;owned\x07 \x1b[31mred\x1b[0m \x00\x01\r\n\t\x7f",
	"\u202eevil.exe\u202c \u2066iso\u2069 zero\u200bwidth \ufeffbom \u0085nel \u2028ls",
	"\xff\xfe invalid \xc3\x28 utf-8 \xed\xa0\x80",
	`#site-1" onclick="x`,
	`{{.Title}} {{template "chart" .}}`,
}

// hostilePage puts the hostile strings in every string of a page.
func hostilePage(t testing.TB) *Page {
	h := func(i int) string { return hostile[i%len(hostile)] }
	tl := &timeline.Timeline{Site: h(0), Crawler: h(1), Budget: timeline.Budget{Pages: 2, Window: time.Hour}}
	for i := 0; i < 6; i++ {
		tl.Add(timeline.Request{Time: t0.Add(time.Duration(i) * 5 * time.Second), Class: timeline.Genuine, Robots: i == 0, Status: 200})
		tl.Add(timeline.Request{Time: t0.Add(time.Duration(i) * time.Minute), Class: timeline.Spoofed, Status: 503})
	}
	var addrs []Address
	for i := range hostile {
		addrs = append(addrs, Address{
			IP: h(i), Crawler: h(i + 1), Verdict: h(i + 2), Method: h(i + 3), Reason: h(i + 4),
			PTR: []string{h(i + 5), h(i + 6)}, Forward: []string{h(i + 7)}, Hits: int64(i),
			FirstSeen: t0, LastSeen: t0, UserAgents: []string{h(i + 8), h(i + 9)}, Warnings: []string{h(i + 10)},
		})
	}
	var vs []Violation
	var mal []Malformed
	for i := range hostile {
		vs = append(vs, Violation{Kind: h(i), Crawler: h(1), Site: h(0), IP: h(i + 1), Time: t0.Add(time.Duration(i) * time.Second),
			File: h(i + 2), Line: int64(i), Path: h(i + 3), Detail: h(i + 4), RobotsLine: i, RobotsRule: h(i + 5)})
		mal = append(mal, Malformed{File: h(i), Line: int64(i), Text: h(i + 1), Reason: h(i + 2)})
	}
	return &Page{
		Title: h(0), Tool: h(1), Version: h(2), GeneratedAt: t0,
		Summary:    Summary{LogFormat: h(3), IPListSource: h(4)},
		Crawlers:   []CrawlerSummary{{Name: h(5)}, {Name: h(6)}},
		Addresses:  slices.Values(addrs),
		Sites:      []Site{{Site: h(0), Crawler: h(1), ChecksSkipped: []string{h(7), h(8)}}, {Site: h(9), Crawler: h(10)}},
		Violations: vs,
		Malformed:  mal,
		Warnings:   slices.Clone(hostile),
		Timelines:  []*timeline.Timeline{tl},
		Limits:     Limits{TopAddresses: 5},
	}
}

func TestHostileStringsStayText(t *testing.T) {
	out := render(t, hostilePage(t))
	checkStructure(t, out)
	doc, err := html.Parse(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			text.WriteString(n.Data)
			text.WriteByte('\n')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	s := text.String()
	// The strings are there to read, as text, with what cannot be seen
	// written out.
	for _, want := range []string{
		`<script>alert(1)</script>`,
		`"><img src=x onerror=alert(1)>`,
		`</title><script>alert(2)</script>`,
		`\x1b]0;owned\x07`,
		`\x00\x01\x0d\x0a\x09\x7f`,
		`\u202eevil.exe\u202c \u2066iso\u2069 zero\u200bwidth \ufeffbom \u0085nel \u2028ls`,
		`\xff\xfe invalid \xc3( utf-8 \xed\xa0\x80`,
		`{{.Title}} {{template "chart" .}}`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the page's text lacks %q", want)
		}
	}
}

func FuzzWriteHTML(f *testing.F) {
	for _, h := range hostile {
		f.Add(h, h, h)
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		tl := &timeline.Timeline{Site: a, Crawler: b, Budget: timeline.Budget{Pages: 1, Window: time.Minute}}
		tl.Add(timeline.Request{Time: t0, Class: timeline.Genuine, Robots: true, Status: 200})
		tl.Add(timeline.Request{Time: t0.Add(time.Second), Class: timeline.Spoofed})
		p := &Page{
			Title: a, Version: b,
			Summary:    Summary{LogFormat: c},
			Addresses:  slices.Values([]Address{{IP: a, Crawler: b, Verdict: c, PTR: []string{a}, UserAgents: []string{b, c}}, {IP: c, Verdict: a, Hits: 1}}),
			Sites:      []Site{{Site: a, Crawler: b, ChecksSkipped: []string{c}}},
			Violations: []Violation{{Kind: c, Site: a, Crawler: b, Path: c, Detail: a, RobotsRule: b, Time: t0}},
			Malformed:  []Malformed{{File: a, Text: b, Reason: c}},
			Warnings:   []string{a, b, c},
			Timelines:  []*timeline.Timeline{tl},
			Limits:     Limits{TopAddresses: 1},
		}
		checkStructure(t, render(t, p))
	})
}

// TestLargeAuditStaysSmall renders 100,000 addresses and 10 sites of
// 50,000 requests each: the page stays under 5 MB. The time is reported,
// not asserted.
func TestLargeAuditStaysSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("large report: not in -short")
	}
	start := time.Now()
	var tls []*timeline.Timeline
	for s := 0; s < 10; s++ {
		tl := &timeline.Timeline{Site: fmt.Sprintf("site%d.example", s), Crawler: "lohisoftbot", Budget: timeline.Budget{Pages: 20, Window: 24 * time.Hour}}
		for i := 0; i < 50_000; i++ {
			c := timeline.Spoofed
			if i%50 == 0 {
				c = timeline.Genuine
			}
			tl.Add(timeline.Request{Time: t0.Add(time.Duration(i) * 17 * time.Second), Class: c, Robots: i%1000 == 0, Status: 200 + i%7*50})
		}
		tls = append(tls, tl)
	}
	var vs []Violation
	for i := 0; i < 3000; i++ {
		vs = append(vs, Violation{Kind: "pause", Crawler: "lohisoftbot", Site: fmt.Sprintf("site%d.example", i%10), IP: "79.139.58.98",
			Time: t0.Add(time.Duration(i) * 170 * time.Second), File: "/var/log/nginx/access.log", Line: int64(i), Path: fmt.Sprintf("/page/%d", i),
			Detail: "logged in the same second as the request before it; the least pause is 1s"})
	}
	const nAddr = 100_000
	addrs := func(yield func(Address) bool) {
		for i := 0; i < nAddr; i++ {
			a := Address{
				IP: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), Crawler: "lohisoftbot",
				Verdict: "spoofed", Method: "fcrdns", Reason: []string{"no-ptr", "ptr-mismatch", "forward-mismatch"}[i%3],
				PTR: []string{fmt.Sprintf("host-%d.isp.example.", i)}, Hits: int64(i%97 + 1),
				FirstSeen: t0, LastSeen: t0.Add(time.Hour), UserAgents: []string{"LohiSoftBot/1.0 (+https://lohisoft.com/bot)"},
			}
			if !yield(a) {
				return
			}
		}
	}
	built := time.Since(start)
	start = time.Now()
	out := render(t, &Page{
		Summary:    Summary{ClaimedHits: 500_000, Violations: len(vs)},
		Addresses:  addrs,
		Violations: vs,
		Timelines:  tls,
	})
	took := time.Since(start)
	t.Logf("100,000 addresses, 10 sites × 50,000 requests, %d violations: %d bytes (%.2f MB), rendered in %v (timelines filled in %v)",
		len(vs), len(out), float64(len(out))/1e6, took, built)
	if len(out) >= 5e6 {
		t.Errorf("the page is %d bytes, want under 5 MB", len(out))
	}
	// Every address is on the page, to be found with the browser's search.
	s := string(out)
	for _, ip := range []string{"10.0.0.0", "10.0.0.96", "10.1.134.159"} {
		if !strings.Contains(s, ip+" (") && !strings.Contains(s, "<code>"+ip+"</code>") {
			t.Errorf("address %s is not on the page", ip)
		}
	}
	if n := strings.Count(s, `<svg class="tl wide"`); n < 10 {
		t.Errorf("%d drawings, want one per site at least", n)
	}
}

func TestWriteHTMLReportsWriteErrors(t *testing.T) {
	err := WriteHTML(failingWriter{}, samplePage(t))
	if !errors.Is(err, errDiskFull) {
		t.Errorf("err = %v, want the writer's error", err)
	}
}

var errDiskFull = errors.New("no space left on device")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }

// BenchmarkWriteHTMLMillionAddresses renders a report of a million spoofing
// addresses, handed over one by one as an audit would, and 200 full
// timelines. Run it with -benchmem, and under /usr/bin/time -v for the
// peak memory.
func BenchmarkWriteHTMLMillionAddresses(b *testing.B) {
	s := &timeline.Set{}
	for site := 0; site < timeline.DefaultMaxTimelines; site++ {
		for i := 0; i < 3*timeline.DefaultMarkCap-3; i++ {
			s.Add(fmt.Sprintf("site%03d.example", site), "lohisoftbot", timeline.Request{Time: t0.Add(time.Duration(i) * time.Second), Class: timeline.Class(i % 3), Status: 200})
		}
	}
	addrs := func(yield func(Address) bool) {
		for i := 0; i < 1_000_000; i++ {
			a := Address{
				IP: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), Crawler: "lohisoftbot",
				Verdict: "spoofed", Method: "fcrdns", Reason: "no-ptr", Hits: int64(i%97 + 1),
				FirstSeen: t0, LastSeen: t0, UserAgents: []string{"LohiSoftBot/1.0"},
			}
			if !yield(a) {
				return
			}
		}
	}
	p := &Page{Addresses: addrs, Timelines: s.All()}
	b.ResetTimer()
	for b.Loop() {
		var w countingWriter
		if err := WriteHTML(&w, p); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(w.n)/1e6, "MB/page")
	}
}

// TestHTMLExtremeTimes: a timeline whose requests span year 1 to 9999 is
// drawn.
func TestHTMLExtremeTimes(t *testing.T) {
	tl := &timeline.Timeline{MarkCap: 2}
	for _, tm := range []time.Time{
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 500e6, time.UTC),
		t0,
	} {
		tl.Add(timeline.Request{Time: tm, Class: timeline.Unverified, Status: -5})
	}
	var buf countingWriter
	if err := WriteHTML(&buf, &Page{Timelines: []*timeline.Timeline{tl}}); err != nil || buf.n == 0 {
		t.Fatalf("drew %d bytes: %v", buf.n, err)
	}
}

type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }
