package cmd

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
	"github.com/lohisoft/lohibot-audit/verify"
)

// crawlerTestZone serves a genuine Googlebot, a fake one as seen in the
// wild (a crawl-…googlebot.com PTR name in the impostor's own reverse zone,
// whose forward lookup finds nothing), a genuine Bingbot and a crawler of
// a profile file.
func crawlerTestZone(t *testing.T) string {
	t.Helper()
	z := dnstest.NewZone(t,
		"crawl-66-249-66-1.googlebot.com. 3600 IN A 66.249.66.1",
		"msnbot-157-55-39-1.search.msn.com. 3600 IN A 157.55.39.1",
		"bot7.crawl.example.net. 3600 IN A 198.51.100.77",
		"crawler1.bot.lohisoft.com. 3600 IN A 79.139.58.98",
	)
	z.PTR(t, "79.139.58.98", "crawler1.bot.lohisoft.com")
	z.PTR(t, "66.249.66.1", "crawl-66-249-66-1.googlebot.com")
	z.PTR(t, "203.0.113.50", "crawl-66-249-66-9.googlebot.com")
	z.PTR(t, "157.55.39.1", "msnbot-157-55-39-1.search.msn.com")
	z.PTR(t, "198.51.100.77", "bot7.crawl.example.net")
	return dnstest.Serve(t, z)
}

// crawlerTestCache is a cache directory holding fresh copies of the
// built-in crawlers' published lists, as `ips update` leaves them, so
// that no test run reaches for the network.
func crawlerTestCache(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bodies := map[string]string{
		"lohisoftbot": `["79.139.58.98", "79.139.58.121"]`,
		"googlebot":   `{"creationTime":"2026-11-30T14:46:03.000000","prefixes":[{"ipv6Prefix":"2001:4860:4801:10::/64"},{"ipv4Prefix":"66.249.64.0/27"}]}`,
		"bingbot":     `{"creationTime":"2026-11-30T10:00:00.000000","prefixes":[{"ipv4Prefix":"157.55.39.0/24"}]}`,
	}
	for name, body := range bodies {
		p, _ := crawler.Builtin(name)
		for _, u := range p.IPLists {
			e := &verify.IPListCacheEntry{Source: u, Fetched: fixedNow.Add(-time.Minute), Body: json.RawMessage(body)}
			if err := verify.SaveCachedIPList(dir, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// examplebotFile is a custom crawler's profile file.
func examplebotFile(t *testing.T) string {
	return testutil.TempFile(t, "examplebot.yaml", `name: examplebot
tokens: [ExampleBot]
fcrdns: [crawl.example.net]
builtin_ips: [192.0.2.10, 192.0.2.0/28]
conduct:
  budget: {pages: 5, window: 1h}
`)
}

type crawlerTestIP struct {
	IP, Crawler, Verdict, Method, Reason string
	FirstSeen                            *string `json:"first_seen"`
}

func crawlerVerify(t *testing.T, stdin string, args ...string) (int, []crawlerTestIP, string) {
	t.Helper()
	env := &Env{Now: func() time.Time { return fixedNow }, Stdin: strings.NewReader(stdin)}
	code, stdout, stderr := identityRun(t, env, append([]string{"verify", "--format", "json"}, args...)...)
	var got struct {
		IPs []crawlerTestIP `json:"ips"`
	}
	if code == 0 {
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
		}
	}
	return code, got.IPs, stderr
}

func TestVerifyCrawlerGooglebot(t *testing.T) {
	resolver, cache := crawlerTestZone(t), crawlerTestCache(t)
	code, ips, stderr := crawlerVerify(t, "", "--crawler", "googlebot", "--resolver", resolver, "--cache-dir", cache, "66.249.66.1", "203.0.113.50")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := []crawlerTestIP{
		{IP: "66.249.66.1", Crawler: "googlebot", Verdict: "genuine", Method: "fcrdns"},
		{IP: "203.0.113.50", Crawler: "googlebot", Verdict: "spoofed", Method: "fcrdns", Reason: "forward-mismatch"},
	}
	if len(ips) != len(want) || ips[0] != want[0] || ips[1] != want[1] {
		t.Errorf("got  %+v\nwant %+v", ips, want)
	}
	if stderr != "" {
		t.Errorf("stderr: %s", stderr)
	}
}

func TestVerifySeveralCrawlers(t *testing.T) {
	resolver, cache := crawlerTestZone(t), crawlerTestCache(t)
	profile := examplebotFile(t)
	code, ips, stderr := crawlerVerify(t, "", "--crawler", "googlebot", "--crawler", "bingbot", "--crawler", profile,
		"--resolver", resolver, "--cache-dir", cache, "157.55.39.1", "198.51.100.77")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []string
	for _, ip := range ips {
		got = append(got, ip.IP+" "+ip.Crawler+" "+ip.Verdict+" "+ip.Reason)
	}
	want := []string{
		"157.55.39.1 googlebot spoofed ptr-mismatch",
		"157.55.39.1 bingbot genuine ",
		"157.55.39.1 examplebot spoofed ptr-mismatch",
		"198.51.100.77 googlebot spoofed ptr-mismatch",
		"198.51.100.77 bingbot spoofed ptr-mismatch",
		"198.51.100.77 examplebot genuine ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// --fail-on counts every crawler's spoofed verdicts; the table has a
	// crawler column and names each crawler's list.
	env := &Env{Now: func() time.Time { return fixedNow }}
	code, stdout, _ := identityRun(t, env, "verify", "--format", "table", "--fail-on", "spoofed", "--crawler", "googlebot", "--crawler", "bingbot",
		"--resolver", resolver, "--cache-dir", cache, "157.55.39.1")
	if code != fail.ExitFindings {
		t.Errorf("exit %d, want %d", code, fail.ExitFindings)
	}
	for _, s := range []string{"CRAWLER", "bingbot", "IP list (googlebot): https://developers.google.com/static/crawling/ipranges/common-crawlers.json, "} {
		if !strings.Contains(stdout, s) {
			t.Errorf("table lacks %q:\n%s", s, stdout)
		}
	}
}

func TestVerifyCrawlerProfileOffline(t *testing.T) {
	profile := examplebotFile(t)
	code, ips, stderr := crawlerVerify(t, "", "--offline", "--no-cache", "--crawler", profile, "192.0.2.10", "203.0.113.9")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(ips) != 2 || ips[0].Verdict != "genuine" || ips[0].Method != "ip-list" || ips[1].Reason != "not-in-ip-list" || ips[0].Crawler != "examplebot" {
		t.Errorf("got %+v", ips)
	}
	// googlebot offline without a cached list: its list's built-in
	// snapshot decides, and stderr says how old it is; an address not in
	// it may be newer than the snapshot: unverified, never spoofed.
	code, ips, stderr = crawlerVerify(t, "", "--offline", "--no-cache", "--crawler", "googlebot", "66.249.66.1", "203.0.113.9")
	if code != 0 || len(ips) != 2 || ips[0].Verdict != "genuine" || ips[0].Method != "ip-list" ||
		ips[1].Verdict != "unverified" || ips[1].Reason != verify.ReasonNotInSnapshot ||
		!strings.Contains(stderr, "googlebot: offline and no copy cached of common-crawlers.json; its built-in snapshot (2026-08-21, ") {
		t.Errorf("exit %d, got %+v, stderr %q", code, ips, stderr)
	}
	// amazonbot publishes no list: offline, its claims stay unverified,
	// never spoofed.
	code, ips, _ = crawlerVerify(t, "", "--offline", "--no-cache", "--crawler", "amazonbot", "52.70.240.171")
	if code != 0 || len(ips) != 1 || ips[0].Verdict != "unverified" || ips[0].Reason != verify.ReasonNoIPList {
		t.Errorf("exit %d, got %+v", code, ips)
	}
}

func TestVerifyCrawlerErrors(t *testing.T) {
	bad := testutil.TempFile(t, "bad.yaml", "name: bad\ntokens: [BadBot]\nfcrdns: [com]\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown name", []string{"--crawler", "yandexbot"}, `unknown crawler "yandexbot": built in are amazonbot, applebot, bingbot, `},
		{"missing file", []string{"--crawler", "./nope.yaml"}, "cannot read crawler profile ./nope.yaml: no such file or directory"},
		{"invalid file", []string{"--crawler", bad}, bad + `:3: fcrdns: "com": give a domain of two labels or more`},
		{"twice", []string{"--crawler", "googlebot", "--crawler", "GoogleBot"}, "crawler googlebot is given twice"},
		{"ip list for several", []string{"--crawler", "googlebot", "--crawler", "bingbot", "--ip-list", "/tmp/x.json"}, "--ip-list /tmp/x.json with 2 crawlers"},
		// The default crawler's list given is a list given, not the default.
		{"default list for several", []string{"--crawler", "googlebot", "--crawler", "bingbot", "--ip-list", DefaultIPListURL}, "--ip-list " + DefaultIPListURL + " with 2 crawlers"},
	} {
		code, _, stderr := crawlerVerify(t, "", append(append([]string{"--offline", "--no-cache"}, tc.args...), "192.0.2.1")...)
		if code != fail.ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("%s: exit %d, stderr %q, want %q", tc.name, code, stderr, tc.want)
		}
	}
}

func TestVerifyStdin(t *testing.T) {
	in := "# addresses seen claiming to be the crawler\n79.139.58.98\n\n  203.0.113.7   # from the firewall log\n::ffff:79.139.58.98\n"
	code, ips, stderr := crawlerVerify(t, in, "--offline", "--no-cache", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(ips) != 2 || ips[0].IP != "79.139.58.98" || ips[0].Verdict != "genuine" || ips[1].IP != "203.0.113.7" || ips[1].Verdict != "spoofed" || ips[0].FirstSeen != nil {
		t.Errorf("got %+v", ips)
	}
	code, _, stderr = crawlerVerify(t, "79.139.58.98\nlocalhost\n\n10.0.0.1:80\n", "--offline", "--no-cache", "-")
	if code != fail.ExitUsage || !strings.Contains(stderr, `stdin: not an IP address on line 2: "localhost", line 4: "10.0.0.1:80"`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = crawlerVerify(t, "# nothing\n\n", "--offline", "--no-cache", "-")
	if code != fail.ExitUsage || !strings.Contains(stderr, "no addresses on stdin") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestIPsCrawler: ips show and update for another crawler, its list
// served over HTTPS in the layout Google publishes.
func TestIPsCrawler(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/bot/ranges.json", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"creationTime":"2026-12-01T08:00:00.000000","prefixes":[{"ipv4Prefix":"198.51.100.64/26"},{"ipv6Prefix":"2001:db8:77::/48"}]}`))
	})
	srv, env := identityListServer(t, mux)
	profile := testutil.TempFile(t, "listbot.yaml", "name: listbot\ntokens: [ListBot]\nip_lists: ["+srv.URL+"/bot/ranges.json]\n")
	cache := t.TempDir()
	env.Now = func() time.Time { return fixedNow }
	env.cdnURL, _ = cdnListServer(t)
	code, stdout, stderr := identityRun(t, env, "ips", "update", "--crawler", profile, "--cache-dir", cache)
	if code != 0 || !strings.HasPrefix(stdout, "listbot: 200: "+srv.URL+"/bot/ranges.json, 2 prefixes; cached\ncdn cloudflare: 200: ") {
		t.Fatalf("update: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if files, _ := filepath.Glob(filepath.Join(cache, "iplist-*.json")); len(files) != 1 {
		t.Errorf("cache files %v", files)
	}
	env = &Env{Now: func() time.Time { return fixedNow.Add(time.Hour) }}
	code, stdout, stderr = identityRun(t, env, "ips", "show", "--format", "json", "--crawler", profile, "--crawler", "lohisoftbot", "--cache-dir", cache)
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, stderr)
	}
	var shown []ipsShown
	if err := json.Unmarshal([]byte(stdout), &shown); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(shown) != 2 || shown[0].Crawler != "listbot" || !shown[0].Cached || strings.Join(shown[0].Prefixes, " ") != "198.51.100.64/26 2001:db8:77::/48" ||
		shown[1].Crawler != "lohisoftbot" || shown[1].Source != verify.IPListSourceBuiltin {
		t.Errorf("show: %+v", shown)
	}
}

// TestLogsCrawlers audits a real-looking log for four crawlers at once:
// LohiSoftBot, a genuine Googlebot beside a fake one, a Bingbot, and a
// crawler of a profile file that breaks its own budget, and a fake one.
func TestLogsCrawlers(t *testing.T) {
	resolver, cache := crawlerTestZone(t), crawlerTestCache(t)
	args := []string{"logs", "--format", "json", "--resolver", resolver, "--cache-dir", cache, "--site", "example.org",
		"--crawler", "lohisoftbot", "--crawler", "googlebot", "--crawler", "bingbot", "--crawler", "../testdata/crawlers/examplebot.yaml",
		"../testdata/crawlers/access.log"}
	code, stdout, stderr := runInMemory(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// The resolver listens on a port of its own in each run.
	golden(t, "crawlers.json", strings.ReplaceAll(normaliseGeneratedAt(t, "json", stdout), resolver, "RESOLVER"))
	var rep struct {
		Summary struct {
			ClaimedHits int64 `json:"claimed_hits"`
			Crawlers    []struct {
				Name        string
				ClaimedHits int64 `json:"claimed_hits"`
				GenuineHits int64 `json:"genuine_hits"`
				SpoofedHits int64 `json:"spoofed_hits"`
			} `json:"crawlers"`
		} `json:"summary"`
		IPs []struct {
			IP, Crawler, Verdict, Reason string
		} `json:"ips"`
		Sites []struct {
			Site, Crawler string
			Pages         int64
		} `json:"sites"`
		Violations []struct {
			Kind, Crawler, IP string
		} `json:"violations"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	var crawlers []string
	for _, c := range rep.Summary.Crawlers {
		crawlers = append(crawlers, fmt.Sprintf("%s %d/%d/%d", c.Name, c.ClaimedHits, c.GenuineHits, c.SpoofedHits))
	}
	if got, want := strings.Join(crawlers, ", "), "lohisoftbot 2/2/0, googlebot 4/2/2, bingbot 1/1/0, examplebot 9/8/1"; got != want {
		t.Errorf("summary.crawlers %s, want %s", got, want)
	}
	if rep.Summary.ClaimedHits != 16 {
		t.Errorf("claimed hits %d, want 16", rep.Summary.ClaimedHits)
	}
	var ips []string
	for _, ip := range rep.IPs {
		ips = append(ips, ip.Crawler+" "+ip.IP+" "+ip.Verdict+" "+ip.Reason)
	}
	for _, want := range []string{"googlebot 66.249.66.1 genuine ", "googlebot 203.0.113.50 spoofed forward-mismatch",
		"bingbot 157.55.39.1 genuine ", "examplebot 198.51.100.77 genuine ", "lohisoftbot 79.139.58.98 genuine "} {
		if !slices.Contains(ips, want) {
			t.Errorf("no address %q in %q", want, ips)
		}
	}
	var sites []string
	for _, s := range rep.Sites {
		sites = append(sites, fmt.Sprintf("%s %s %d", s.Site, s.Crawler, s.Pages))
	}
	if got, want := strings.Join(sites, ", "), "example.org lohisoftbot 1, example.org googlebot 1, example.org bingbot 0, example.org examplebot 7"; got != want {
		t.Errorf("sites %s, want %s", got, want)
	}
	budget := 0
	for _, v := range rep.Violations {
		if v.Crawler == "" {
			t.Errorf("violation without a crawler: %+v", v)
		}
		if v.Kind == "budget" {
			budget++
			if v.Crawler != "examplebot" {
				t.Errorf("budget violation of %s: only examplebot broke its budget", v.Crawler)
			}
		}
	}
	if budget != 1 {
		t.Errorf("%d budget violations, want 1: %+v", budget, rep.Violations)
	}
}

// TestLogsOneCrawlerUnchanged: without --crawler the report is the one
// the tool always wrote (the sample's golden files, TestLogsSampleGolden);
// --crawler lohisoftbot gives the same facts, each with its crawler named.
func TestLogsOneCrawlerUnchanged(t *testing.T) {
	_, plain, _ := runInMemory(t, "", append([]string{"logs", "--format", "json"}, sampleArgs...)...)
	golden(t, "sample.json", normaliseGeneratedAt(t, "json", plain))
	code, named, stderr := runInMemory(t, "", append([]string{"logs", "--format", "json", "--crawler", "lohisoftbot"}, sampleArgs...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(plain, `"crawler"`) || !strings.Contains(named, `"crawler": "lohisoftbot"`) || !strings.Contains(named, `"crawlers": [`) {
		t.Errorf("crawler fields: plain has them %v, named lacks them %v", strings.Contains(plain, `"crawler"`), !strings.Contains(named, `"crawler": "lohisoftbot"`))
	}
}

// TestEmitCrawlers writes nftables rules for Googlebot and a profile-file
// crawler from a real-looking log: the fake Googlebot and the fake
// ExampleBot are in the set, no genuine crawler is.
func TestEmitCrawlers(t *testing.T) {
	resolver, cache := crawlerTestZone(t), crawlerTestCache(t)
	code, stdout, stderr := runInMemory(t, "", "emit", "nftables", "--resolver", resolver, "--cache-dir", cache, "--site", "example.org",
		"--crawler", "googlebot", "--crawler", "../testdata/crawlers/examplebot.yaml", "../testdata/crawlers/access.log")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"203.0.113.50", "203.0.113.66"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("rules lack the spoofer %s:\n%s", want, stdout)
		}
	}
	for _, never := range []string{"66.249.66.1", "198.51.100.77", "157.55.39.1", "79.139.58.98"} {
		if strings.Contains(stdout, never) {
			t.Errorf("rules hold %s, which is not a spoofer of these crawlers:\n%s", never, stdout)
		}
	}
}

// aiCrawlersLog is ChatGPT-User fetching pages robots.txt disallows, from
// an address of OpenAI's list (its built-in snapshot), without fetching
// robots.txt, GPTBot doing the same from another list address, and an
// address not on Anthropic's list claiming ClaudeBot (unverified, as the
// list is a snapshot); an earlier request shows the log reaches back two
// days.
const aiCrawlersLog = `192.0.2.1 - - [01/Dec/2026:06:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "Mozilla/5.0"
13.65.138.113 - - [02/Dec/2026:06:25:01 +0000] "GET /private/a HTTP/1.1" 200 5 "-" "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot"
13.65.138.113 - - [02/Dec/2026:06:25:09 +0000] "GET /private/b HTTP/1.1" 200 5 "-" "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot"
132.196.86.10 - - [02/Dec/2026:07:00:00 +0000] "GET /private/c HTTP/1.1" 200 5 "-" "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.2; +https://openai.com/gptbot"
203.0.113.77 - - [02/Dec/2026:07:10:00 +0000] "GET / HTTP/1.1" 200 5 "-" "Mozilla/5.0 (compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"
203.0.113.78 - - [02/Dec/2026:07:10:00 +0000] "GET / HTTP/1.1" 200 5 "-" "Mozilla/5.0 (compatible; NotClaudeBotX/1.0)"
`

// TestLogsAICrawlers: --crawler CATEGORY audits each built-in crawler of
// the categories, offline from their lists' snapshots; the report gives
// each one's category; ChatGPT-User, whose operator does not promise to
// obey robots.txt, breaks no robots.txt promise and its rows say "not
// promised", while GPTBot's disallowed page is a violation; a token inside
// another word claims nothing.
func TestLogsAICrawlers(t *testing.T) {
	robotsFile := testutil.TempFile(t, "robots.txt", "User-agent: *\nDisallow: /private/\n")
	env := &Env{Now: func() time.Time { return fixedNow }, Stdin: strings.NewReader(aiCrawlersLog)}
	code, stdout, stderr := identityRun(t, env, "logs", "--format", "json", "--offline", "--no-cache", "--site", "example.org",
		"--robots", robotsFile, "--crawler", "user-triggered", "--crawler", "ai-training", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Summary struct {
			Crawlers []struct {
				Name, Category string
				Claimed        int `json:"claimed_hits"`
				Genuine        int `json:"genuine_hits"`
				Spoofed        int `json:"spoofed_hits"`
				Unverified     int `json:"unverified_hits"`
				Violations     int
			}
		}
		Sites []struct {
			Crawler       string
			ChecksSkipped []string `json:"checks_skipped"`
			NotPromised   []string `json:"not_promised"`
		}
		Violations []struct{ Crawler, Kind, Path string }
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	var got []string
	for _, c := range rep.Summary.Crawlers {
		got = append(got, fmt.Sprintf("%s %s %d/%d/%d/%d %d", c.Name, c.Category, c.Claimed, c.Genuine, c.Spoofed, c.Unverified, c.Violations))
	}
	want := []string{
		"chatgpt-user user-triggered 2/2/0/0 0", "claude-user user-triggered 0/0/0/0 0", "google-user-triggered user-triggered 0/0/0/0 0",
		"perplexity-user user-triggered 0/0/0/0 0", "amazonbot ai-training 0/0/0/0 0", "claudebot ai-training 1/0/0/1 0", "gptbot ai-training 1/1/0/0 2",
	}
	if !slices.Equal(got, want) {
		t.Errorf("crawlers\n%q\nwant\n%q", got, want)
	}
	for _, v := range rep.Violations {
		if v.Crawler != "gptbot" || (v.Kind != "robots" && v.Kind != "robots-not-fetched") {
			t.Errorf("violation %+v: only GPTBot promises robots.txt", v)
		}
	}
	for _, s := range rep.Sites {
		np := slices.Equal(s.NotPromised, []string{"robots", "robots-not-fetched", "robots-unavailable"})
		if s.Crawler == "chatgpt-user" && (!np || slices.Contains(s.ChecksSkipped, "robots")) {
			t.Errorf("chatgpt-user's site row: skipped %q, not promised %q", s.ChecksSkipped, s.NotPromised)
		}
		if s.Crawler == "gptbot" && len(s.NotPromised) != 0 {
			t.Errorf("gptbot's site row: not promised %q", s.NotPromised)
		}
	}
	// The table says it too.
	env = &Env{Now: func() time.Time { return fixedNow }, Stdin: strings.NewReader(aiCrawlersLog)}
	_, table, _ := identityRun(t, env, "logs", "--format", "markdown", "--offline", "--no-cache", "--site", "example.org",
		"--robots", robotsFile, "--crawler", "chatgpt-user", "--crawler", "gptbot", "-")
	for _, s := range []string{"CATEGORY", "| user-triggered ", "| ai-training ", "not promised: robots, robots-not-fetched, robots-unavailable"} {
		if !strings.Contains(table, s) {
			t.Errorf("markdown lacks %q:\n%s", s, table)
		}
	}
}
