package audit

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/verify"
)

func TestRecheck(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	fresh := []verify.DNSAnswer{{Name: "x.", Type: "PTR", Rcode: "NOERROR", Answer: []string{}, TTL: 3600, Asked: now.Add(-time.Minute)}}
	old := []verify.DNSAnswer{{Name: "x.", Type: "PTR", Rcode: "NOERROR", Answer: []string{}, TTL: 3600, Asked: now.Add(-2 * time.Hour)}}
	rep := &Report{
		Tool: "lohibot-audit",
		Summary: Summary{ClaimedHits: 63, GenuineHits: 11, SpoofedHits: 20, UnverifiedHits: 32, Violations: 1,
			Crawlers: []CrawlerSummary{{Name: "lohisoftbot", ClaimedHits: 61, GenuineHits: 11, SpoofedHits: 20, UnverifiedHits: 30, Violations: 1}, {Name: "googlebot", ClaimedHits: 2, UnverifiedHits: 2}}},
		IPs: []IPReport{
			{IP: "79.139.58.98", Crawler: "lohisoftbot", Verdict: verify.Unverified, Method: "fcrdns", Reason: verify.ReasonDNSError, DNSFailure: "timeout", Hits: 10},
			{IP: "79.139.58.121", Crawler: "lohisoftbot", Verdict: verify.Genuine, Method: "fcrdns", DNS: fresh, Hits: 1},
			{IP: "203.0.113.1", Crawler: "lohisoftbot", Verdict: verify.Unverified, Reason: verify.ReasonDNSError, Hits: 20},
			{IP: "203.0.113.2", Crawler: "lohisoftbot", Verdict: verify.Spoofed, Reason: verify.ReasonNoPTR, DNS: old, Hits: 20},
			{IP: "203.0.113.3", Crawler: "lohisoftbot", Verdict: verify.Genuine, Method: "fcrdns", DNS: old, Hits: 10},
			{IP: "crawler.example", Crawler: "lohisoftbot", Verdict: verify.Unverified, Reason: verify.ReasonNotAnAddress, Hits: 0},
			{IP: "66.249.66.1", Crawler: "googlebot", Verdict: verify.Unverified, Reason: verify.ReasonDNSError, Hits: 2},
			{IP: "66.249.66.2", Crawler: "bingbot", Verdict: verify.Unverified, Reason: verify.ReasonDNSError, Hits: 0},
		},
		Violations: []Violation{{Kind: "pause", IP: "203.0.113.3"}},
	}
	asked := map[int][]netip.Addr{}
	answer := map[string]verify.Result{
		"79.139.58.98": {Verdict: verify.Genuine, Method: "fcrdns", PTR: []string{"crawler1.bot.lohisoft.com"}, Forward: []string{"79.139.58.98"}, InIPList: true,
			DNS: []*verify.DNSAnswer{{Name: "98.58.139.79.in-addr.arpa.", Type: "PTR", Rcode: "NOERROR", Answer: []string{"crawler1.bot.lohisoft.com"}, TTL: 3600, Asked: now, Resolver: "127.0.0.1:53"}}},
		"203.0.113.1": {Verdict: verify.Unverified, Method: "fcrdns", Reason: verify.ReasonDNSError, DNSFailure: "servfail"},
		"203.0.113.2": {Verdict: verify.Unverified, Method: "fcrdns", Reason: verify.ReasonDNSError, DNSFailure: "timeout"},
		"203.0.113.3": {Verdict: verify.Spoofed, Method: "fcrdns", Reason: verify.ReasonNoPTR},
		"66.249.66.1": {Verdict: verify.Spoofed, Method: "fcrdns", Reason: verify.ReasonPTRMismatch},
	}
	o := &Recheck{
		Now: now, Crawlers: []string{"lohisoftbot", "googlebot"},
		Classify: func(_ context.Context, c int, addrs []netip.Addr) map[netip.Addr]verify.Result {
			asked[c] = append(asked[c], addrs...)
			out := map[netip.Addr]verify.Result{}
			for _, a := range addrs {
				r := answer[a.String()]
				r.Addr = a
				out[a] = r
			}
			return out
		},
		Lists: []*verify.IPList{{Source: "https://lohisoft.com/bot/ips.json", SHA256: "ab", Prefixes: []netip.Prefix{netip.MustParsePrefix("79.139.58.98/32")}}, nil},
	}
	st, err := o.Run(context.Background(), rep)
	if err != nil {
		t.Fatal(err)
	}
	want := RecheckStats{Asked: 5, Unverified: 3, Expired: 2, Changed: 3, Kept: 1, NewGenuine: 1, NewGenuineHits: 10, LostGenuine: 1, LostGenuineHits: 10, StillUnverified: 1}
	if st != want {
		t.Errorf("stats %+v\nwant  %+v", st, want)
	}
	names := func(as []netip.Addr) []string {
		var out []string
		for _, a := range as {
			out = append(out, a.String())
		}
		slices.Sort(out)
		return out
	}
	if got := names(asked[0]); !slices.Equal(got, []string{"203.0.113.1", "203.0.113.2", "203.0.113.3", "79.139.58.98"}) {
		t.Errorf("asked about %v as lohisoftbot", got)
	}
	if got := names(asked[1]); !slices.Equal(got, []string{"66.249.66.1"}) {
		t.Errorf("asked about %v as googlebot", got)
	}
	ips := map[string]IPReport{}
	for _, ip := range rep.IPs {
		ips[ip.IP] = ip
	}
	if ip := ips["79.139.58.98"]; ip.Verdict != verify.Genuine || ip.DNSFailure != "" || len(ip.DNS) != 1 || ip.DNS[0].Resolver != "127.0.0.1:53" || ip.Hits != 10 || ip.Crawler != "lohisoftbot" {
		t.Errorf("newly genuine: %+v", ip)
	}
	if ip := ips["203.0.113.2"]; ip.Verdict != verify.Spoofed || ip.Reason != verify.ReasonNoPTR || len(ip.DNS) != 1 {
		t.Errorf("spoofed address that DNS could not answer for now lost its verdict: %+v", ip)
	}
	if ip := ips["203.0.113.1"]; ip.Verdict != verify.Unverified || ip.DNSFailure != "servfail" {
		t.Errorf("still unverified: %+v", ip)
	}
	s := rep.Summary
	if s.GenuineHits != 11 || s.SpoofedHits != 32 || s.UnverifiedHits != 20 || s.ClaimedHits != 63 || s.Violations != 1 {
		t.Errorf("summary %+v", s)
	}
	if c := s.Crawlers[0]; c.GenuineHits != 11 || c.SpoofedHits != 30 || c.UnverifiedHits != 20 {
		t.Errorf("lohisoftbot %+v", c)
	}
	if c := s.Crawlers[1]; c.SpoofedHits != 2 || c.UnverifiedHits != 0 {
		t.Errorf("googlebot %+v", c)
	}
	if len(rep.IPLists) != 1 || rep.IPLists[0].Crawler != "lohisoftbot" || rep.IPLists[0].SHA256 != "ab" || rep.IPLists[0].Prefixes != 1 {
		t.Errorf("ip lists %+v", rep.IPLists)
	}
	if !rep.GeneratedAt.Equal(now) || len(rep.Violations) != 1 {
		t.Errorf("generated %v, violations %v", rep.GeneratedAt, rep.Violations)
	}
	all := strings.Join(rep.Warnings, "\n")
	for _, w := range []string{"5 addresses asked again (3 unverified, 2 with expired evidence)", "1 address is genuine now, with 10 hits whose conduct was not checked", "1 address is genuine no longer, with 10 hits"} {
		if !strings.Contains(all, w) {
			t.Errorf("warnings lack %q:\n%s", w, all)
		}
	}

	// Cancelled: an error, and the report as it was.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	before := slices.Clone(rep.IPs)
	o.Classify = func(ctx context.Context, _ int, _ []netip.Addr) map[netip.Addr]verify.Result { return nil }
	if _, err := o.Run(ctx, rep); err == nil || !slices.EqualFunc(before, rep.IPs, func(a, b IPReport) bool { return a.Verdict == b.Verdict }) {
		t.Errorf("cancelled recheck: %v", err)
	}
}

func TestRecheckOneCrawler(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	rep := &Report{Tool: "lohibot-audit", Summary: Summary{UnverifiedHits: 3},
		IPs: []IPReport{{IP: "79.139.58.98", Verdict: verify.Unverified, Reason: verify.ReasonDNSError, Hits: 3}}}
	o := &Recheck{Now: now, Crawlers: []string{"lohisoftbot"},
		Classify: func(_ context.Context, c int, addrs []netip.Addr) map[netip.Addr]verify.Result {
			return map[netip.Addr]verify.Result{addrs[0]: {Addr: addrs[0], Verdict: verify.Genuine, Method: verify.MethodIPList, InIPList: true}}
		},
		Lists: []*verify.IPList{{Source: verify.IPListSourceBuiltin, Prefixes: []netip.Prefix{netip.MustParsePrefix("79.139.58.98/32")}}},
	}
	if _, err := o.Run(context.Background(), rep); err != nil {
		t.Fatal(err)
	}
	if rep.Summary.GenuineHits != 3 || rep.Summary.UnverifiedHits != 0 || rep.IPs[0].Crawler != "" || len(rep.IPLists) != 1 || rep.IPLists[0].Crawler != "" {
		t.Errorf("summary %+v, ip %+v, lists %+v", rep.Summary, rep.IPs[0], rep.IPLists)
	}
}
