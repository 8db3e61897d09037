package render

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/audit/timeline"
)

// utc parses an RFC 3339 time or fails the test run.
func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// sampleRequests are the claimed hits of testdata/sample (both days), in
// UTC: "time class path status", class g or s.
const sampleRequests = `
2026-11-30T08:00:00Z g /robots.txt 200
2026-11-30T08:00:07Z g / 200
2026-11-30T08:00:14Z g /blog/ 200
2026-11-30T08:00:21Z g /blog/2026/11/hello 200
2026-11-30T08:00:28Z g /blog/2026/11/nftables-sets 200
2026-11-30T08:00:35Z g /about 200
2026-11-30T08:00:42Z g /contact 200
2026-11-30T08:00:49Z g /feed.xml 200
2026-11-30T10:00:00Z s /wp-login.php?attempt=0 404
2026-11-30T10:03:00Z s /wp-login.php?attempt=1 404
2026-11-30T10:06:00Z s /wp-login.php?attempt=2 404
2026-11-30T10:09:00Z s /wp-login.php?attempt=3 404
2026-11-30T10:12:00Z s /wp-login.php?attempt=4 404
2026-11-30T10:15:00Z s /wp-login.php?attempt=5 404
2026-11-30T13:00:00Z s /.env 404
2026-12-01T07:00:06Z g /blog/2026/12/new-post 200
2026-12-01T07:00:12Z g /blog/2026/12/second-post 200
2026-12-01T07:00:17Z g /private/drafts/ 200
2026-12-01T07:00:17Z g /search?q=nginx 200
2026-12-01T07:00:21Z g /about 503
2026-12-01T07:00:24Z g /contact 200
2026-12-01T07:01:04Z g /members/ 401
2026-12-01T07:01:44Z g /members/ 200
2026-12-01T07:01:53Z g /blog/page/2 200
2026-12-01T07:02:02Z g /blog/page/3 200
2026-12-01T07:02:11Z g /blog/page/4 200
2026-12-01T07:02:20Z g /blog/page/5 200
2026-12-01T07:02:29Z g /blog/page/6 200
2026-12-01T07:02:38Z g /blog/page/7 200
2026-12-01T07:02:47Z g /tags/ 200
2026-12-01T07:02:56Z g /tags/go 200
2026-12-01T07:03:05Z g /tags/dns 200
2026-12-01T07:03:14Z g /tags/nft 200
2026-12-01T07:03:23Z g /archive/2025 200
2026-12-01T07:03:32Z g /archive/2024 200
2026-12-01T07:03:41Z g /search/x 404
2026-12-01T11:00:00Z s /xmlrpc.php 403
2026-12-01T11:00:02Z s /xmlrpc.php 403
2026-12-01T11:00:04Z s /xmlrpc.php 403
2026-12-01T11:00:06Z s /xmlrpc.php 403
2026-12-01T12:00:00Z s / 200
2026-12-01T12:01:00Z s /x 404
`

// sampleTimeline is www.example.org's timeline from the sample log.
func sampleTimeline(t testing.TB) *timeline.Timeline {
	tl := &timeline.Timeline{Site: "www.example.org", Crawler: "lohisoftbot", Budget: timeline.Budget{Pages: 20, Window: 24 * time.Hour}}
	for _, line := range strings.Split(strings.TrimSpace(sampleRequests), "\n") {
		f := strings.Fields(line)
		status, err := strconv.Atoi(f[3])
		if err != nil {
			t.Fatal(err)
		}
		c := timeline.Genuine
		if f[1] == "s" {
			c = timeline.Spoofed
		}
		tl.Add(timeline.Request{Time: utc(f[0]), Class: c, Robots: f[2] == "/robots.txt", Status: status})
	}
	return tl
}

// samplePage is the report of the bundled sample (testdata/sample, as in
// testdata/golden/sample.json) as the audit would hand it over.
func samplePage(t testing.TB) *Page {
	const log, gz = "testdata/sample/access.log", "testdata/sample/access.log.1.gz"
	addrs := []Address{
		{IP: "79.139.58.98", Crawler: "lohisoftbot", Verdict: "genuine", Method: "ip-list", InIPList: true, Hits: 8,
			FirstSeen: utc("2026-11-30T08:00:00Z"), LastSeen: utc("2026-11-30T08:00:49Z"),
			UserAgents: []string{"LohiSoftBot/1.0 (+message@lohisoft.com)"}},
		{IP: "79.139.58.121", Crawler: "lohisoftbot", Verdict: "genuine", Method: "ip-list", InIPList: true, Hits: 21,
			FirstSeen: utc("2026-12-01T07:00:06Z"), LastSeen: utc("2026-12-01T07:03:41Z"),
			UserAgents: []string{"LohiSoftBot/1.0 (+https://lohisoft.com/bot)"}},
		{IP: "192.0.2.66", Crawler: "lohisoftbot", Verdict: "spoofed", Method: "ip-list", Reason: "not-in-ip-list", Hits: 10,
			FirstSeen: utc("2026-11-30T10:00:00Z"), LastSeen: utc("2026-12-01T11:00:06Z"),
			UserAgents: []string{"LohiSoftBot/1.0 (+message@lohisoft.com)"}},
		{IP: "203.0.113.200", Crawler: "lohisoftbot", Verdict: "spoofed", Method: "ip-list", Reason: "not-in-ip-list", Hits: 1,
			FirstSeen: utc("2026-12-01T12:00:00Z"), LastSeen: utc("2026-12-01T12:00:00Z"),
			UserAgents: []string{"lohisoftbot"}},
		{IP: "203.0.113.201", Crawler: "lohisoftbot", Verdict: "spoofed", Method: "ip-list", Reason: "not-in-ip-list", Hits: 1,
			FirstSeen: utc("2026-12-01T12:01:00Z"), LastSeen: utc("2026-12-01T12:01:00Z"),
			UserAgents: []string{"LohiSoftBot/1.0 \x1b]0;owned\x07"}},
		{IP: "2001:db8:4:7::1", Crawler: "lohisoftbot", Verdict: "spoofed", Method: "ip-list", Reason: "ipv6", Hits: 1,
			FirstSeen: utc("2026-11-30T13:00:00Z"), LastSeen: utc("2026-11-30T13:00:00Z"),
			UserAgents: []string{"Mozilla/5.0 (compatible; LohiSoftBot/1.0)"}},
	}
	v := func(kind, tm string, line int64, path, detail string) Violation {
		return Violation{Kind: kind, Crawler: "lohisoftbot", Site: "www.example.org", IP: "79.139.58.121",
			Time: utc(tm), File: log, Line: line, Path: path, Detail: detail}
	}
	robots := func(x Violation, n int, rule string) Violation {
		x.RobotsLine, x.RobotsRule = n, rule
		return x
	}
	return &Page{
		Title:       "lohibot-audit report: LohiSoftBot on www.example.org",
		Tool:        "lohibot-audit",
		Version:     "dev",
		GeneratedAt: utc("2026-12-02T09:30:00Z"),
		Summary: Summary{
			Files: 2, Lines: 606, Malformed: 2, ClaimedHits: 42, GenuineHits: 29, SpoofedHits: 13,
			Violations: 7, LogFormat: "vhost_combined", IPListSource: "built-in",
		},
		Crawlers:  []CrawlerSummary{{Name: "lohisoftbot", ClaimedHits: 42, GenuineHits: 29, SpoofedHits: 13, Violations: 7}},
		Addresses: slices.Values(addrs),
		Sites: []Site{{Site: "www.example.org", Crawler: "lohisoftbot", Pages: 28, RobotsFetches: 1,
			ChecksSkipped: []string{"concurrency", "robots-not-fetched"}, ClaimedHits: 42, Violations: 7}},
		Violations: []Violation{
			robots(v("robots", "2026-12-01T07:00:17Z", 37, "/private/drafts/", `disallowed by robots.txt line 6 "Disallow: /private/"`), 6, "Disallow: /private/"),
			v("pause", "2026-12-01T07:00:17Z", 38, "/search?q=nginx", "logged in the same second as the request on line 37; the least pause is 1s"),
			robots(v("robots", "2026-12-01T07:00:17Z", 38, "/search?q=nginx", `disallowed by robots.txt line 7 "Disallow: /search"`), 7, "Disallow: /search"),
			v("backoff", "2026-12-01T07:00:24Z", 40, "/contact", "came 3s after the 503 answer on line 39, with no Retry-After logged; the least backoff is 30s"),
			v("auth", "2026-12-01T07:01:44Z", 42, "/members/", "got 200 for a path that answered 401 to the crawler 40s earlier (line 41)"),
			v("budget", "2026-12-01T07:02:38Z", 48, "/blog/page/7", "28 pages within 24h, more than the budget of 20: this is page 21 of the window that began at 2026-11-30T08:00:07Z (line 53 of "+gz+")"),
			robots(v("robots", "2026-12-01T07:03:41Z", 55, "/search/|<script>[x](javascript:1)\x1b]0;owned\x07", `disallowed by robots.txt line 7 "Disallow: /search"`), 7, "Disallow: /search"),
		},
		Malformed: []Malformed{
			{File: log, Line: 330, Text: "\x1b]0;owned\x07 | <script>alert(1)</script> [x](javascript:0) # _em_ *em* `code` ![img](x) \\", Reason: "bad virtual host \"\\x1b]0;owned\\a\""},
			{File: gz, Line: 41, Text: "www.example.org:443 198.51.100.9 - - [30/Nov/2026:08:1", Reason: `no "] \"" after the time field`},
		},
		Warnings: []string{
			"ip list: offline and no cached copy of https://lohisoft.com/bot/ips.json; the built-in list (79.139.58.98, 79.139.58.121) decides",
		},
		Timelines: []*timeline.Timeline{sampleTimeline(t)},
	}
}
