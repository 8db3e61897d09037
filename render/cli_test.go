package render_test

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/cmd"
	"github.com/lohisoft/lohibot-audit/render"
)

// TestLogsHTMLHostile runs `logs --format html` on a log whose user
// agents, paths and virtual hosts are markup (the reader takes such a
// host for a malformed line, which the page shows): no tag, attribute or script of
// theirs survives on the page, and each is there to read as text.
func TestLogsHTMLHostile(t *testing.T) {
	hostile := []string{
		`<script>alert(1)</script>`,
		`"><img src=x onerror=alert(2)>`,
		`'><svg onload=alert(3)>`,
		`</title><style>*{display:none}</style>`,
		`javascript:alert(4)`,
		"\x1b]0;owned\x07",
	}
	var log strings.Builder
	for i, h := range hostile {
		when := time.Date(2026, 12, 1, 7, 0, i, 0, time.UTC).Format("02/Jan/2006:15:04:05 -0700")
		for _, client := range []string{"79.139.58.98", "203.0.113.9"} {
			for _, host := range []string{"www.example.org:443", h + ".example:443"} {
				fmt.Fprintf(&log, "%s %s - - [%s] \"GET /p%d/%s HTTP/1.1\" 200 10 \"-\" \"LohiSoftBot/1.0 %s\"\n",
					host, client, when, i, strings.ReplaceAll(h, " ", "%20"), strings.ReplaceAll(h, `"`, `\"`))
			}
		}
	}
	log.WriteString("not a log line " + hostile[0] + "\n")
	var out, errb bytes.Buffer
	env := testEnv(t, log.String(), &out, &errb)
	code := cmd.Run(context.Background(), env, []string{"logs", "--format", "html", "--offline", "--no-cache", "--log-format", "vhost_combined", "-"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	page := out.Bytes()
	for _, p := range render.StructureProblems(page) {
		t.Error(p)
	}
	s := string(page)
	for _, h := range hostile[:4] {
		if !strings.Contains(s, html.EscapeString(h)) {
			t.Errorf("%q is not on the page as text", h)
		}
	}
	if !strings.Contains(s, html.EscapeString(`bad virtual host "<script>alert(1)</script>.example:443"`)) {
		t.Error("a hostile virtual host is not on the page as text")
	}
	if !strings.Contains(s, "79.139.58.98") || !strings.Contains(s, "www.example.org") {
		t.Error("the claimed hits are not on the page")
	}
	if !strings.Contains(s, `\x1b]0;owned\x07`) {
		t.Error("the terminal escape is not shown written out")
	}
	for _, tag := range []string{"<script", "<img", "<svg onload", "<style>*", "<title><"} {
		if strings.Contains(s, tag) {
			t.Errorf("%s from the log reached the page", tag)
		}
	}
}

// TestLogsHTMLTimelines runs `logs --format html` on the bundled sample:
// each site's article has its timeline drawing, with the genuine and the
// spoofed lane, the robots.txt fetch, the budget window over budget, and
// a marker for its violations that names their kinds and links to their
// rows.
func TestLogsHTMLTimelines(t *testing.T) {
	var out, errb bytes.Buffer
	env := testEnv(t, "", &out, &errb)
	code := cmd.Run(context.Background(), env, []string{"logs", "--format", "html", "--offline", "--no-cache",
		"--robots", "../testdata/sample/robots.txt", "../testdata/sample/access.log", "../testdata/sample/access.log.1.gz"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	page := out.String()
	for _, p := range render.StructureProblems(out.Bytes()) {
		t.Error(p)
	}
	articles := strings.Split(page, `<article class="site"`)[1:]
	if len(articles) != 1 {
		t.Fatalf("%d site articles, want 1 (www.example.org)", len(articles))
	}
	site := articles[0][:strings.Index(articles[0], "</article>")]
	if !strings.Contains(site, "www.example.org") {
		t.Fatal("the site's article does not name it")
	}
	charts := strings.Split(site, `<svg class="tl wide"`)[1:]
	// The overview, then one drawing per crawl of the genuine crawler
	// (the sample has two: 2026-11-30 08:00 and 2026-12-01 07:00).
	if len(charts) != 3 {
		t.Fatalf("%d timeline drawings, want 3:\n%s", len(charts), site)
	}
	overview := charts[0][:strings.Index(charts[0], "</svg>")]
	for what, want := range map[string]string{
		"the genuine lane":         `<text class="ll g" x="8" y="`,
		"the spoofed lane":         `<text class="ll s" x="8" y="`,
		"the genuine requests":     `<path class="ticks g"`,
		"the spoofed requests":     `<path class="ticks s"`,
		"the robots.txt fetch":     `<circle class="rb g"`,
		"the window over budget":   `<g class="band over">`,
		"the 503 answer":           `<path class="ticks err"`,
		"a violation marker":       `<a class="vm" href="#site-1-v1">`,
		"the kinds in its tooltip": `robots`,
	} {
		if !strings.Contains(overview, want) {
			t.Errorf("the overview lacks %s (%s):\n%s", what, want, overview)
		}
	}
	if n := strings.Count(overview, `<rect class="lane"`); n != 2 {
		t.Errorf("the overview has %d lanes, want 2 (genuine and spoofed)", n)
	}
	crawl2 := charts[2]
	for i, kind := range []string{"robots", "pause", "robots", "backoff", "auth", "budget", "robots"} {
		marker := fmt.Sprintf(`<a class="vm" href="#site-1-v%d"><title>`, i+1)
		at := strings.Index(crawl2, marker)
		if at < 0 {
			t.Errorf("crawl 2 has no marker for violation %d (%s)", i+1, kind)
			continue
		}
		title := crawl2[at+len(marker):]
		if end := strings.Index(title, "</title>"); end < 0 || !strings.Contains(title[:end], kind) {
			t.Errorf("the marker of violation %d does not say %s: %.200s", i+1, kind, title)
		}
		if !strings.Contains(site, fmt.Sprintf(`<tr id="site-1-v%d">`, i+1)) {
			t.Errorf("violation %d has no row for its marker to link to", i+1)
		}
	}
}

// testEnv is an environment for a command run in memory: stdin, stdout
// and stderr as given, a fresh home and cache, and the clock at
// 2026-12-02 12:00 UTC.
func testEnv(t *testing.T, stdin string, stdout, stderr *bytes.Buffer) *cmd.Env {
	home := t.TempDir()
	return &cmd.Env{
		Stdin: strings.NewReader(stdin), Stdout: stdout, Stderr: stderr,
		Getenv: func(k string) string {
			if k == "HOME" || k == "XDG_CACHE_HOME" || k == "XDG_CONFIG_HOME" {
				return home
			}
			return ""
		},
		Now: func() time.Time { return time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC) },
	}
}
