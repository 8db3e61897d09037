package verify

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/lohisoft/lohibot-audit/proxy"
	"github.com/miekg/dns"
)

// TestVerifyBrokenResolver: a resolver that answers NXDOMAIN to every
// name, the root zone included, never makes a crawler spoofed. Its first
// negative answer has it checked once against the root zone; it fails
// and is said once.
func TestVerifyBrokenResolver(t *testing.T) {
	liar := dnstest.NewZone(t)
	liar.Lie(true)
	server := dnstest.Serve(t, liar)
	profiles := mustProfiles(t, "lohisoftbot", "googlebot")
	id := NewIdentity(&Verifier{Servers: []string{server}, Timeout: dnsTestHang, Concurrency: 8}, profiles, nil)

	var addrs []netip.Addr
	for i := range 40 {
		addrs = append(addrs, netip.AddrFrom4([4]byte{66, 249, 73, byte(100 + i)}))
	}
	got := id.Classify(context.Background(), 1, addrs)
	for _, a := range addrs {
		r := got[a]
		if r.Verdict != Unverified || r.Reason != ReasonDNSError || r.DNSFailure != DNSFailureBrokenResolver {
			t.Fatalf("%s: %s/%s/%q (%s), want unverified/dns-error/broken-resolver", a, r.Verdict, r.Reason, r.DNSFailure, r.DNSError)
		}
	}
	// LohiSoftBot's built-in list still decides for its addresses.
	lohi := netip.MustParseAddr("79.139.58.121")
	if r := id.Classify(context.Background(), 0, []netip.Addr{lohi})[lohi]; r.Verdict != Genuine || r.Method != MethodIPList {
		t.Errorf("listed address: %s/%s, want genuine/ip-list", r.Verdict, r.Method)
	}
	if n := liar.Count(dns.TypeNS, "."); n != 1 {
		t.Errorf("the root zone was asked %d times, want once per run", n)
	}
	ptrs := 0
	for _, a := range addrs {
		arpa, _ := dns.ReverseAddr(a.String())
		ptrs += liar.Count(dns.TypePTR, arpa)
	}
	if ptrs != len(addrs) {
		t.Errorf("%d PTR queries for %d addresses: a broken resolver is asked once per address (its positive answers count), and not again in the second pass (its denials stay distrusted)", ptrs, len(addrs))
	}
	w := id.Warnings()
	if len(w) != 1 || !strings.Contains(w[0], "resolver "+server+" answers NXDOMAIN even for the root zone") || !strings.Contains(w[0], "not trusted") {
		t.Errorf("warnings %q, want one saying the resolver answers NXDOMAIN even for the root zone", w)
	}
}

// TestVerifyTrustedNegativeAnswer: a working resolver's NXDOMAIN for a
// PTR still makes the address spoofed; the root zone is asked once for
// the whole run, whatever the number of negative answers.
func TestVerifyTrustedNegativeAnswer(t *testing.T) {
	z := dnstest.NewZone(t)
	server := dnstest.Serve(t, z)
	v := &Verifier{Profile: lohiProfile, Servers: []string{server}, Timeout: dnsTestHang, Concurrency: 4}
	addrs := []netip.Addr{netip.MustParseAddr("198.51.100.9"), netip.MustParseAddr("198.51.100.10"), netip.MustParseAddr("203.0.113.7")}
	for _, r := range v.Verify(context.Background(), addrs) {
		if r.Verdict != Spoofed || r.Reason != ReasonNoPTR {
			t.Errorf("%s: %s/%s/%q, want spoofed/no-ptr", r.Addr, r.Verdict, r.Reason, r.DNSFailure)
		}
	}
	if n := z.Count(dns.TypeNS, "."); n != 1 {
		t.Errorf("the root zone was asked %d times, want once", n)
	}
	if w := v.Warnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
}

// TestVerifyBrokenResolverThenWorking: with a broken resolver first and a
// working one second, the broken one is set aside and the working one's
// answers decide.
func TestVerifyBrokenResolverThenWorking(t *testing.T) {
	liar := dnstest.NewZone(t)
	liar.Lie(true)
	z := dnstest.NewZone(t, "crawler1.bot.lohisoft.com. 3600 IN A 192.0.2.98")
	z.PTR(t, "192.0.2.98", "crawler1.bot.lohisoft.com")
	bad, good := dnstest.Serve(t, liar), dnstest.Serve(t, z)
	v := &Verifier{Profile: lohiProfile, Servers: []string{bad, good}, Timeout: dnsTestHang, Concurrency: 1}
	got := v.Verify(context.Background(), []netip.Addr{netip.MustParseAddr("192.0.2.98"), netip.MustParseAddr("198.51.100.9")})
	if got[0].Verdict != Genuine || got[0].Method != MethodFCrDNS {
		t.Errorf("genuine address: %s/%s/%q", got[0].Verdict, got[0].Reason, got[0].DNSFailure)
	}
	if got[1].Verdict != Spoofed || got[1].Reason != ReasonNoPTR {
		t.Errorf("address without PTR: %s/%s/%q, want spoofed/no-ptr from the working resolver", got[1].Verdict, got[1].Reason, got[1].DNSFailure)
	}
	if n := liar.Count(dns.TypeNS, "."); n != 1 {
		t.Errorf("the broken resolver's root zone was asked %d times, want once", n)
	}
	if w := v.Warnings(); len(w) != 1 || !strings.Contains(w[0], bad+" answers NXDOMAIN") {
		t.Errorf("warnings %q, want one about %s", w, bad)
	}
}

// TestVerifyPositiveEvidenceKept: a resolver that answers NXDOMAIN even
// for the root zone, but does answer some names, is distrusted for its
// negative answers only. What it did answer decides, the same way in
// every run, however the lookups of a run interleave: a PTR under the
// crawler's domain whose forward lookup gives the address back is
// genuine; a PTR outside every suffix is ptr-mismatch and a forward answer
// without the address forward-mismatch (both spoofed); only what it
// denies stays unverified (broken-resolver). 50 runs, over UDP and over
// TCP, each with a fresh cache directory and then again from the cache.
func TestVerifyPositiveEvidenceKept(t *testing.T) {
	for _, network := range []string{"udp", "tcp"} {
		t.Run(network, func(t *testing.T) {
			z := dnstest.NewZone(t,
				"crawler1.bot.lohisoft.com. 3600 IN A 192.0.2.98",
				"crawler2.bot.lohisoft.com. 3600 IN A 203.0.113.250",
			)
			z.PTR(t, "192.0.2.98", "crawler1.bot.lohisoft.com")
			z.PTR(t, "192.0.2.99", "msnbot-1.search.msn.com.evil.example")
			z.PTR(t, "192.0.2.100", "crawler2.bot.lohisoft.com")
			z.PTR(t, "192.0.2.101", "crawler3.bot.lohisoft.com") // no A record
			z.DenyRoot(true)
			z.TCPOnly(network == "tcp")
			server := dnstest.Serve(t, z)
			want := map[string]string{
				"192.0.2.98":  "genuine/fcrdns//",
				"192.0.2.99":  "spoofed/fcrdns/ptr-mismatch/",
				"192.0.2.100": "spoofed/fcrdns/forward-mismatch/",
				"192.0.2.101": "unverified/fcrdns/dns-error/broken-resolver",
			}
			addrs := []netip.Addr{}
			for a := range want {
				addrs = append(addrs, netip.MustParseAddr(a))
			}
			// Addresses without any record, answered NXDOMAIN: many of
			// them, so that the root zone is asked while the other
			// lookups are in flight.
			for i := range 30 {
				a := netip.AddrFrom4([4]byte{198, 51, 100, byte(i + 1)})
				addrs = append(addrs, a)
				want[a.String()] = "unverified/fcrdns/dns-error/broken-resolver"
			}
			for run := range 50 {
				cache := t.TempDir()
				for _, name := range []string{"fresh", "cached"} {
					c, err := OpenDNSCache(cache, time.Now)
					if err != nil {
						t.Fatal(err)
					}
					v := &Verifier{Profile: lohiProfile, Servers: []string{server}, Timeout: dnsTestHang, Concurrency: 16, Cache: c}
					for _, r := range v.Verify(context.Background(), addrs) {
						got := string(r.Verdict) + "/" + r.Method + "/" + r.Reason + "/" + r.DNSFailure
						if got != want[r.Addr.String()] {
							t.Fatalf("run %d (%s): %s: %s (%s), want %s", run+1, name, r.Addr, got, r.DNSError, want[r.Addr.String()])
						}
					}
					if err := c.Save(); err != nil {
						t.Fatal(err)
					}
					if w := v.Warnings(); len(w) != 1 || !strings.Contains(w[0], "answers NXDOMAIN even for the root zone") {
						t.Fatalf("run %d (%s): warnings %q, want one about the resolver", run+1, name, w)
					}
				}
			}
			if network == "tcp" && z.TCPCount() == 0 {
				t.Error("no query came over tcp")
			}
		})
	}
}

// TestVerifyProxy: a CDN edge or a trusted proxy is unverified with
// reason proxy, named, and never looked up: whatever its DNS says, it is
// not the claimant.
func TestVerifyProxy(t *testing.T) {
	z := dnstest.NewZone(t)
	server := dnstest.Serve(t, z)
	trust, err := proxy.NewSet(nil, []string{"203.0.113.0/24"}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		proxies *proxy.Set
		addr    string
		name    string
	}{
		{nil, "162.158.106.126", "cloudflare"},
		{nil, "2a04:4e42::1", "fastly"},
		{trust, "203.0.113.9", "203.0.113.0/24"},
		{trust, "130.211.0.9", "google-lb"},
	} {
		v := &Verifier{Profile: lohiProfile, Servers: []string{server}, Timeout: dnsTestHang, Proxies: tc.proxies, Offline: tc.addr == "2a04:4e42::1"}
		r := v.Verify(context.Background(), []netip.Addr{netip.MustParseAddr(tc.addr)})[0]
		if r.Verdict != Unverified || r.Reason != ReasonProxy || r.Proxy != tc.name || r.DNSFailure != "" {
			t.Errorf("%s: %s/%s proxy %q, want unverified/proxy %q", tc.addr, r.Verdict, r.Reason, r.Proxy, tc.name)
		}
	}
	if n := z.Total(); n != 0 {
		t.Errorf("%d DNS queries for proxies", n)
	}
}
