package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/miekg/dns"
)

// TestEvidence checks that each verdict carries the answers it rests on:
// the resolver that gave them, when they were asked and their TTLs, over
// UDP and over TCP after a truncated answer; and that answers from the
// cache keep the resolver, the time and the TTL of the run that asked.
func TestEvidence(t *testing.T) {
	z := dnstest.NewZone(t,
		"98.58.139.79.in-addr.arpa. 3600 IN PTR crawler1.bot.lohisoft.com.",
		"crawler1.bot.lohisoft.com. 300 IN A 79.139.58.98",
		"121.58.139.79.in-addr.arpa. 7200 IN PTR crawler2.bot.lohisoft.com.",
		"crawler2.bot.lohisoft.com. 600 IN CNAME c2.bot.lohisoft.com.",
		"c2.bot.lohisoft.com. 120 IN A 79.139.58.121",
	)
	z.Truncate("121.58.139.79.in-addr.arpa.")
	server := dnstest.Serve(t, z)
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	now := t0
	clock := func() time.Time { return now }

	cache, err := OpenDNSCache(dir, clock)
	if err != nil {
		t.Fatal(err)
	}
	a98, a121, spoof := netip.MustParseAddr("79.139.58.98"), netip.MustParseAddr("79.139.58.121"), netip.MustParseAddr("203.0.113.9")
	v := &Verifier{Profile: lohiProfile, Servers: []string{server}, Cache: cache, Now: clock}
	got := v.Verify(context.Background(), []netip.Addr{a98, a121, spoof})
	if err := cache.Save(); err != nil {
		t.Fatal(err)
	}
	type want struct {
		name, typ, rcode string
		answer           []string
		ttl              uint32
	}
	check := func(t *testing.T, r Result, cached bool, asked time.Time, wants ...want) {
		t.Helper()
		if len(r.DNS) != len(wants) {
			t.Fatalf("%s: %d answers, want %d: %+v", r.Addr, len(r.DNS), len(wants), r.DNS)
		}
		for i, w := range wants {
			a := r.DNS[i]
			if a.Name != w.name || a.Type != w.typ || a.Rcode != w.rcode || a.TTL != w.ttl || a.Resolver != server || a.Cached != cached || !a.Asked.Equal(asked) || a.Error != "" {
				t.Errorf("%s answer %d: %+v\nwant %+v from %s, cached %v, asked %v", r.Addr, i, *a, w, server, cached, asked)
			}
			if len(a.Answer) != len(w.answer) || len(w.answer) > 0 && a.Answer[0] != w.answer[0] {
				t.Errorf("%s answer %d: %v, want %v", r.Addr, i, a.Answer, w.answer)
			}
		}
	}
	p98 := want{"98.58.139.79.in-addr.arpa.", "PTR", "NOERROR", []string{"crawler1.bot.lohisoft.com"}, 3600}
	f98 := want{"crawler1.bot.lohisoft.com.", "A", "NOERROR", []string{"79.139.58.98"}, 300}
	p121 := want{"121.58.139.79.in-addr.arpa.", "PTR", "NOERROR", []string{"crawler2.bot.lohisoft.com"}, 7200}
	f121 := want{"crawler2.bot.lohisoft.com.", "A", "NOERROR", []string{"79.139.58.121"}, 120} // the least TTL of the chain
	pSpoof := want{"9.113.0.203.in-addr.arpa.", "PTR", "NXDOMAIN", nil, 300}                   // the SOA's minimum
	check(t, got[0], false, t0, p98, f98)
	check(t, got[1], false, t0, p121, f121)
	check(t, got[2], false, t0, pSpoof)
	if z.TCPCount() == 0 {
		t.Error("the truncated PTR answer was not asked again over TCP")
	}
	if exp, ok := got[0].EvidenceExpires(); !ok || !exp.Equal(t0.Add(300*time.Second)) {
		t.Errorf("evidence of %s expires %v, %v; want t0+300s", a98, exp, ok)
	}
	if exp, ok := got[1].EvidenceExpires(); !ok || !exp.Equal(t0.Add(120*time.Second)) {
		t.Errorf("evidence of %s expires %v, %v; want t0+120s", a121, exp, ok)
	}

	// A later run answers from the cache: the evidence is the first
	// run's, with the time it asked and the TTL it got.
	now = t0.Add(100 * time.Second)
	queries := z.Total()
	cache2, err := OpenDNSCache(dir, clock)
	if err != nil {
		t.Fatal(err)
	}
	v2 := &Verifier{Profile: lohiProfile, Servers: []string{server}, Cache: cache2, Now: clock}
	got = v2.Verify(context.Background(), []netip.Addr{a98, a121, spoof})
	if z.Total() != queries {
		t.Errorf("%d queries asked again; the cache holds every answer", z.Total()-queries)
	}
	check(t, got[0], true, t0, p98, f98)
	check(t, got[1], true, t0, p121, f121)
	check(t, got[2], true, t0, pSpoof)

	// Past the A record's TTL it is asked again, now.
	now = t0.Add(301 * time.Second)
	cache3, _ := OpenDNSCache(dir, clock)
	v3 := &Verifier{Profile: lohiProfile, Servers: []string{server}, Cache: cache3, Now: clock}
	got = v3.Verify(context.Background(), []netip.Addr{a98})
	if a := got[0].DNS[1]; a.Cached || !a.Asked.Equal(now) || z.Count(dns.TypeA, "crawler1.bot.lohisoft.com.") != 2 {
		t.Errorf("A answer past its TTL: cached %v, asked %v; want asked again at %v", a.Cached, a.Asked, now)
	}
	if a := got[0].DNS[0]; !a.Cached || !a.Asked.Equal(t0) {
		t.Errorf("PTR answer within its TTL: cached %v, asked %v; want the cached one of %v", a.Cached, a.Asked, t0)
	}
}

// TestEvidenceOfFailure checks that a lookup that failed is evidence of
// nothing: it says why, and has expired already.
func TestEvidenceOfFailure(t *testing.T) {
	z := dnstest.NewZone(t)
	z.ServFail("7.113.0.203.in-addr.arpa.")
	server := dnstest.Serve(t, z)
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	v := &Verifier{Profile: lohiProfile, Servers: []string{server}, Now: func() time.Time { return t0 }, RetryTimeout: -1}
	r := v.Verify(context.Background(), []netip.Addr{netip.MustParseAddr("203.0.113.7")})[0]
	if r.Verdict != Unverified || len(r.DNS) != 1 {
		t.Fatalf("verdict %s with %d answers", r.Verdict, len(r.DNS))
	}
	a := r.DNS[0]
	if a.Error == "" || a.Rcode != "" || a.TTL != 0 || !a.Asked.Equal(t0) || a.Type != "PTR" {
		t.Errorf("failed lookup as evidence: %+v", *a)
	}
	if exp, ok := r.EvidenceExpires(); !ok || !exp.IsZero() {
		t.Errorf("evidence of a failure expires %v, %v; want at once", exp, ok)
	}
	if _, ok := (&Result{}).EvidenceExpires(); ok {
		t.Error("a result without DNS answers has evidence that expires")
	}
}

// TestListEvidence checks that each list of a union keeps its source,
// fetch time, creationTime and the SHA-256 of the body as served, and
// that a list read back from the cache keeps the same digest.
func TestListEvidence(t *testing.T) {
	srv, _ := listServer(t)
	p := listProfile(t, srv, "/common-crawlers.json", "/special-crawlers.json")
	now := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	digest := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return hex.EncodeToString(sum[:])
	}
	for _, mode := range []ListMode{ListAuto, ListNoFetch} {
		ld := &ListLoader{Fetcher: &IPListFetcher{Client: srv.Client()}, CacheDir: dir, Now: func() time.Time { return now }, Mode: mode}
		got, err := ld.Load(context.Background(), p, "")
		if err != nil {
			t.Fatal(err)
		}
		parts := got.List.Each()
		if len(parts) != 2 {
			t.Fatalf("mode %d: %d parts, want 2", mode, len(parts))
		}
		for i, want := range []struct{ path, body, created string }{
			{"/common-crawlers.json", googleCommon, "2026-11-30T14:46:03Z"},
			{"/special-crawlers.json", googleSpecial, "2026-12-01T00:00:00Z"},
		} {
			l := parts[i]
			if l.Source != srv.URL+want.path || l.SHA256 != digest(want.body) || !l.Fetched.Equal(now) || l.CreationTime.Format(time.RFC3339) != want.created {
				t.Errorf("mode %d, part %d: source %s, sha256 %s, fetched %v, created %v; want %s, %s", mode, i, l.Source, l.SHA256, l.Fetched, l.CreationTime, want.path, digest(want.body))
			}
		}
	}
	one := &IPList{Source: "x"}
	if e := one.Each(); len(e) != 1 || e[0] != one {
		t.Errorf("Each of one list = %v", e)
	}
}
