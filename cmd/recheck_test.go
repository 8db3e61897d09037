package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/miekg/dns"
)

// recheckLog is a crawl by the genuine crawler and two hits of a
// spoofer, in the combined format.
const recheckLog = `79.139.58.98 - - [02/Dec/2026:09:00:00 +0000] "GET /robots.txt HTTP/1.1" 200 10 "-" "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"
79.139.58.98 - - [02/Dec/2026:09:00:05 +0000] "GET / HTTP/1.1" 200 100 "-" "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"
79.139.58.98 - - [02/Dec/2026:09:00:10 +0000] "GET /about HTTP/1.1" 200 100 "-" "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"
203.0.113.9 - - [02/Dec/2026:09:01:00 +0000] "GET /admin HTTP/1.1" 403 10 "-" "LohiSoftBot/1.0"
203.0.113.9 - - [02/Dec/2026:09:01:01 +0000] "GET /wp-login.php HTTP/1.1" 404 10 "-" "LohiSoftBot/1.0"
`

// TestVerifyRecheck is a run during a DNS outage completed later: the
// resolver fails for the crawler's address at first (SERVFAIL, over UDP
// and, for the truncated answer, TCP), so the address stays unverified;
// once it answers, verify --recheck makes it genuine with its evidence,
// counts the summary again and says that its hits' conduct was not
// checked, without asking again about the spoofer whose evidence holds.
func TestVerifyRecheck(t *testing.T) {
	z := dnstest.NewZone(t,
		"98.58.139.79.in-addr.arpa. 3600 IN PTR crawler1.bot.lohisoft.com.",
		"crawler1.bot.lohisoft.com. 600 IN A 79.139.58.98",
	)
	z.ServFail("98.58.139.79.in-addr.arpa.")
	z.Truncate("crawler1.bot.lohisoft.com.")
	server := dnstest.Serve(t, z)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "access.log")
	list := filepath.Join(dir, "ips.json")
	os.WriteFile(logPath, []byte(recheckLog), 0o644)
	os.WriteFile(list, []byte(`["192.0.2.1"]`), 0o644)
	common := []string{"--resolver", server, "--ip-list", list, "--no-cache", "--format", "json"}

	code, out, stderr := identityRun(t, &Env{Now: func() time.Time { return fixedNow }}, append([]string{"logs", logPath}, common...)...)
	if code != fail.ExitOK {
		t.Fatalf("logs: exit %d: %s", code, stderr)
	}
	var first audit.Report
	if err := json.Unmarshal([]byte(out), &first); err != nil {
		t.Fatal(err)
	}
	ip := recheckIP(t, &first, "79.139.58.98")
	if ip.Verdict != verify.Unverified || ip.DNSFailure != verify.DNSFailureServFail || len(ip.DNS) != 1 || ip.DNS[0].Error == "" {
		t.Fatalf("during the outage: %+v", ip)
	}
	if first.Summary.UnverifiedHits != 3 || first.Summary.SpoofedHits != 2 || len(first.IPLists) != 1 || first.IPLists[0].Source != list || first.IPLists[0].SHA256 == "" {
		t.Fatalf("first summary %+v, lists %+v", first.Summary, first.IPLists)
	}
	reportPath := filepath.Join(dir, "audit.json")
	os.WriteFile(reportPath, []byte(out), 0o644)

	// The resolver answers now.
	z.Heal("98.58.139.79.in-addr.arpa.")
	spoofPTR := z.Count(dns.TypePTR, "9.113.0.203.in-addr.arpa.")
	later := fixedNow.Add(2 * time.Minute)
	code, out, stderr = identityRun(t, &Env{Now: func() time.Time { return later }}, append([]string{"verify", "--recheck", reportPath}, common...)...)
	if code != fail.ExitOK {
		t.Fatalf("recheck: exit %d: %s", code, stderr)
	}
	var got audit.Report
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("recheck printed no report: %v\n%s", err, out)
	}
	ip = recheckIP(t, &got, "79.139.58.98")
	if ip.Verdict != verify.Genuine || ip.Method != verify.MethodFCrDNS || ip.Hits != 3 || ip.DNSFailure != "" {
		t.Errorf("after the recheck: %+v", ip)
	}
	if len(ip.DNS) != 2 || ip.DNS[0].Type != "PTR" || ip.DNS[1].Type != "A" || ip.DNS[0].Resolver != server || ip.DNS[1].TTL != 600 || !ip.DNS[0].Asked.Equal(later) {
		t.Errorf("evidence %+v", ip.DNS)
	}
	if z.TCPCount() == 0 {
		t.Error("the truncated A answer was not asked again over TCP")
	}
	if n := z.Count(dns.TypePTR, "9.113.0.203.in-addr.arpa."); n != spoofPTR {
		t.Errorf("the spoofer, whose evidence holds, was asked about again (%d queries)", n-spoofPTR)
	}
	s := got.Summary
	if s.GenuineHits != 3 || s.UnverifiedHits != 0 || s.SpoofedHits != 2 || s.ClaimedHits != 5 || !got.GeneratedAt.Equal(later) {
		t.Errorf("summary %+v, generated %v", s, got.GeneratedAt)
	}
	if len(got.Sites) != len(first.Sites) || len(got.Violations) != len(first.Violations) {
		t.Errorf("sites or violations changed: %d/%d sites, %d/%d violations", len(got.Sites), len(first.Sites), len(got.Violations), len(first.Violations))
	}
	want := "recheck: 1 address is genuine now, with 3 hits whose conduct was not checked"
	if !strings.Contains(strings.Join(got.Warnings, "\n"), want) || !strings.Contains(stderr, want) {
		t.Errorf("report warnings %q, stderr %q; want %q in both", got.Warnings, stderr, want)
	}

	// The shape is the report's: verify --recheck of the recheck asks
	// nothing again and gives the same addresses.
	again := filepath.Join(dir, "again.json")
	os.WriteFile(again, []byte(out), 0o644)
	total := z.Total()
	code, out2, stderr := identityRun(t, &Env{Now: func() time.Time { return later }}, append([]string{"verify", "--recheck", again}, common...)...)
	if code != fail.ExitOK || z.Total() != total {
		t.Errorf("second recheck: exit %d, %d queries: %s", code, z.Total()-total, stderr)
	}
	var got2 audit.Report
	if err := json.Unmarshal([]byte(out2), &got2); err != nil || len(got2.IPs) != len(got.IPs) || got2.Summary.GenuineHits != 3 {
		t.Errorf("second recheck: %v, %+v", err, got2.Summary)
	}
}

func TestVerifyRecheckUsage(t *testing.T) {
	dir := t.TempDir()
	notReport := filepath.Join(dir, "x.json")
	os.WriteFile(notReport, []byte(`{"ips": []}`), 0o644)
	for _, args := range [][]string{
		{"verify", "--recheck", notReport},
		{"verify", "--recheck", filepath.Join(dir, "missing.json")},
		{"verify", "--recheck", notReport, "192.0.2.1"},
	} {
		code, out, stderr := identityRun(t, &Env{}, args...)
		if code != fail.ExitUsage || out != "" || !strings.HasPrefix(stderr, "lohibot-audit: error: ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, stderr)
		}
	}
}

func recheckIP(t *testing.T, rep *audit.Report, addr string) audit.IPReport {
	t.Helper()
	for _, ip := range rep.IPs {
		if ip.IP == addr {
			return ip
		}
	}
	t.Fatalf("%s not in the report", addr)
	return audit.IPReport{}
}
