package cmd

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// brokenDNSLog is real Googlebot's requests, as a public log holds them.
const brokenDNSLog = `66.249.73.135 - - [17/May/2015:10:05:16 +0000] "GET /robots.txt HTTP/1.1" 200 100 "-" "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
66.249.73.185 - - [17/May/2015:10:05:18 +0000] "GET / HTTP/1.1" 200 100 "-" "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
`

// brokenDNSEnv is a run whose resolver answers NXDOMAIN to every name,
// the root zone included, and whose IP list server answers 404 to all.
func brokenDNSEnv(t *testing.T) (env *Env, resolver string) {
	liar := dnstest.NewZone(t)
	liar.Lie(true)
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	return &Env{Now: func() time.Time { return fixedNow }, Stdin: strings.NewReader(brokenDNSLog), HTTPClient: srv.Client()}, dnstest.Serve(t, liar)
}

// TestLogsBrokenResolver: with a resolver that says NXDOMAIN to
// everything, real Googlebot is unverified (broken-resolver), never
// spoofed; the report says why once, and says no list is in force, with
// one warning for the crawler's lists. (A crawler of a profile file with
// two lists of its own: googlebot's list has a built-in snapshot, which
// decides, as TestLogsBrokenResolverSnapshot shows.)
func TestLogsBrokenResolver(t *testing.T) {
	env, resolver := brokenDNSEnv(t)
	profile := testutil.TempFile(t, "gbot.yaml", "name: googlebot\ntokens: [Googlebot]\nfcrdns: [googlebot.com]\nip_lists: [https://example.net/common-crawlers.json, https://example.net/special-crawlers.json]\n")
	code, stdout, stderr := identityRun(t, env, "logs", "--format", "json", "--crawler", profile, "--resolver", resolver, "--cache-dir", t.TempDir(), "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Summary struct {
			IPListSource string `json:"ip_list_source"`
			Spoofed      int    `json:"spoofed_hits"`
		}
		IPs []struct {
			IP, Verdict string
			DNSFailure  string `json:"dns_failure"`
		}
		Warnings []string
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if rep.Summary.Spoofed != 0 || len(rep.IPs) != 2 {
		t.Fatalf("summary %+v, ips %+v: the resolver's lies blamed on the crawler", rep.Summary, rep.IPs)
	}
	for _, ip := range rep.IPs {
		if ip.Verdict != "unverified" || ip.DNSFailure != "broken-resolver" {
			t.Errorf("%+v, want unverified, broken-resolver", ip)
		}
	}
	if rep.Summary.IPListSource != "googlebot: none" {
		t.Errorf("ip_list_source %q, want googlebot: none", rep.Summary.IPListSource)
	}
	joined := strings.Join(rep.Warnings, "\n")
	if n := strings.Count(joined, "answers NXDOMAIN even for the root zone"); n != 1 {
		t.Errorf("%d warnings about the broken resolver, want 1: %q", n, rep.Warnings)
	}
	if n := strings.Count(joined, "googlebot: 2 lists not fetched"); n != 1 || strings.Count(joined, "common-crawlers.json") != 1 {
		t.Errorf("warnings %q, want one for googlebot's 2 lists", rep.Warnings)
	}
}

// TestLogsBrokenResolverSnapshot: the built-in googlebot, whose list
// cannot be fetched, is judged by its list's built-in snapshot while DNS
// cannot answer: real Googlebot genuine by the list, nothing spoofed, and
// the warning names the snapshot and its age.
func TestLogsBrokenResolverSnapshot(t *testing.T) {
	env, resolver := brokenDNSEnv(t)
	code, stdout, stderr := identityRun(t, env, "logs", "--format", "json", "--crawler", "googlebot", "--resolver", resolver, "--cache-dir", t.TempDir(), "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Summary struct {
			IPListSource string `json:"ip_list_source"`
			Spoofed      int    `json:"spoofed_hits"`
			Genuine      int    `json:"genuine_hits"`
		}
		Warnings []string
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if rep.Summary.Spoofed != 0 || rep.Summary.Genuine != 2 ||
		rep.Summary.IPListSource != "googlebot: https://developers.google.com/static/crawling/ipranges/common-crawlers.json (built-in snapshot of 2026-08-21)" {
		t.Errorf("summary %+v", rep.Summary)
	}
	if joined := strings.Join(rep.Warnings, "\n"); !strings.Contains(joined, "(cannot fetch); its built-in snapshot (2026-08-21, 103 days old) stays in force") {
		t.Errorf("warnings %q", rep.Warnings)
	}
}

// TestEmitBrokenResolver: nothing a broken resolver cannot vouch for goes
// into the drop set.
func TestEmitBrokenResolver(t *testing.T) {
	env, resolver := brokenDNSEnv(t)
	code, stdout, stderr := identityRun(t, env, "emit", "nftables", "--crawler", "googlebot", "--resolver", resolver, "--cache-dir", t.TempDir(), "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, "66.249.73.135") || strings.Contains(stdout, "66.249.73.185") {
		t.Errorf("genuine Googlebot addresses in the rules:\n%s", stdout)
	}
	if !strings.Contains(stderr, "answers NXDOMAIN even for the root zone") {
		t.Errorf("stderr does not say the resolver is broken: %s", stderr)
	}
}

// TestVerifyNoListSaysSo: verify's text names a missing list as such.
func TestVerifyNoListSaysSo(t *testing.T) {
	env := &Env{Now: func() time.Time { return fixedNow }}
	profile := testutil.TempFile(t, "fetchbot.yaml", "name: fetchbot\ntokens: [FetchBot]\nfcrdns: [crawl.fetch.example]\nip_lists: [https://fetch.example/ips.json]\n")
	code, stdout, stderr := identityRun(t, env, "verify", "--format", "table", "--offline", "--crawler", profile, "--cache-dir", t.TempDir(), "66.249.73.135")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "IP list (fetchbot): no list: offline and never fetched; run 'lohibot-audit ips update --crawler " + profile + "'"
	if !strings.Contains(stdout, want) || strings.Contains(stdout, "built-in, 0 prefix") {
		t.Errorf("stdout lacks %q:\n%s", want, stdout)
	}
}

// TestOfflineWarningInEveryReport: the offline 'no cached copy' warning
// is said on stderr once per period, but every report carries it.
func TestOfflineWarningInEveryReport(t *testing.T) {
	cache := t.TempDir()
	for run := range 2 {
		env := &Env{Now: func() time.Time { return fixedNow }, Stdin: strings.NewReader(brokenDNSLog)}
		code, stdout, stderr := identityRun(t, env, "logs", "--format", "json", "--offline", "--crawler", "googlebot", "--cache-dir", cache, "-")
		if code != 0 {
			t.Fatalf("run %d: exit %d: %s", run+1, code, stderr)
		}
		const w = "googlebot: offline and no copy cached of common-crawlers.json; its built-in snapshot (2026-08-21, 103 days old) decides"
		if !strings.Contains(stdout, w) {
			t.Errorf("run %d: the report lacks the warning:\n%s", run+1, stdout)
		}
		if said := strings.Contains(stderr, w); said != (run == 0) {
			t.Errorf("run %d: said on stderr %v: %s", run+1, said, stderr)
		}
	}
}
