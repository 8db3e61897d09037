package verify

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/miekg/dns"
)

// lohiProfile is the crawler most tests verify: LohiSoftBot, whose PTR
// names are under bot.lohisoft.com; lohiSuffixes are its suffixes as the
// resolver keeps them.
var (
	lohiProfile  = mustBuiltin("lohisoftbot")
	lohiSuffixes = fqdns(lohiProfile.FCrDNS)
)

func mustBuiltin(name string) *crawler.Profile {
	p, ok := crawler.Builtin(name)
	if !ok {
		panic("no built-in crawler " + name)
	}
	return p
}

// TestNameUnderCrawlerDomain checks NameUnder with LohiSoftBot's one
// suffix, bot.lohisoft.com.
func TestNameUnderCrawlerDomain(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"crawler1.bot.lohisoft.com", true},
		{"crawler1.bot.lohisoft.com.", true},
		{"CRAWLER1.BOT.LOHISOFT.COM.", true},
		{"a.b.bot.lohisoft.com", true},
		{"bot.lohisoft.com", false},
		{"bot.lohisoft.com.", false},
		{".bot.lohisoft.com", false},
		{"xbot.lohisoft.com", false},
		{"crawler1.xbot.lohisoft.com", false},
		{"lohisoft.com", false},
		{"www.lohisoft.com", false},
		{"crawler1.bot.lohisoft.com.evil.example", false},
		{"crawler1.bot.lohisoft.com.evil.example.", false},
		{`crawler1\.bot.lohisoft.com`, false},
		{`crawler1.bot.lohisoft.com\.`, false},
		{"crawler1.bot.lohisoft.co", false},
		{"crawler1.bot.lohisoft.com..", false},
		{"", false},
		{".", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := NameUnder(tc.name, lohiProfile.FCrDNS); got != tc.want {
				t.Errorf("NameUnder(%q) = %v, want %v", tc.name, got, tc.want)
			}
		})
	}
}

// fcrdnsTestZone is the zone used by TestVerify: the crawler's own names
// and every way of getting them wrong.
func fcrdnsTestZone(t testing.TB) *dnsTestZone {
	z := newDNSTestZone(t,
		// The crawler, as its page documents it.
		"98.58.139.79.in-addr.arpa. 3600 IN PTR crawler1.bot.lohisoft.com.",
		"crawler1.bot.lohisoft.com. 3600 IN A 79.139.58.98",
		"121.58.139.79.in-addr.arpa. 3600 IN PTR CRAWLER2.BOT.LOHISOFT.COM.",
		"CRAWLER2.Bot.Lohisoft.Com. 3600 IN A 79.139.58.121",
		// Suffix tricks.
		"1.113.0.203.in-addr.arpa. 3600 IN PTR xbot.lohisoft.com.",
		"xbot.lohisoft.com. 3600 IN A 203.0.113.1",
		"2.113.0.203.in-addr.arpa. 3600 IN PTR crawler1.bot.lohisoft.com.evil.example.",
		"crawler1.bot.lohisoft.com.evil.example. 3600 IN A 203.0.113.2",
		"3.113.0.203.in-addr.arpa. 3600 IN PTR lohisoft.com.",
		"4.113.0.203.in-addr.arpa. 3600 IN PTR bot.lohisoft.com.",
		"bot.lohisoft.com. 3600 IN A 203.0.113.4",
		// A PTR that claims the crawler's name without owning it.
		"5.113.0.203.in-addr.arpa. 3600 IN PTR crawler1.bot.lohisoft.com.",
		// No PTR: NOERROR without data.
		"6.113.0.203.in-addr.arpa. 3600 IN TXT \"no ptr here\"",
		// Several PTR names: the right one is not the first.
		"7.113.0.203.in-addr.arpa. 3600 IN PTR a.example.",
		"7.113.0.203.in-addr.arpa. 3600 IN PTR b.example.",
		"7.113.0.203.in-addr.arpa. 3600 IN PTR crawler7.bot.lohisoft.com.",
		"crawler7.bot.lohisoft.com. 3600 IN A 192.0.2.1",
		"crawler7.bot.lohisoft.com. 3600 IN A 203.0.113.7",
		// Forward through a CNAME chain.
		"8.113.0.203.in-addr.arpa. 3600 IN PTR crawler8.bot.lohisoft.com.",
		"crawler8.bot.lohisoft.com. 3600 IN CNAME host8.bot.lohisoft.com.",
		"host8.bot.lohisoft.com. 3600 IN CNAME metal8.example.",
		"metal8.example. 3600 IN A 203.0.113.8",
		// Forward name that does not exist.
		"9.113.0.203.in-addr.arpa. 3600 IN PTR ghost.bot.lohisoft.com.",
		// Forward lookup fails.
		"10.113.0.203.in-addr.arpa. 3600 IN PTR broken.bot.lohisoft.com.",
		// RFC 2317 classless delegation: the PTR is behind a CNAME.
		"11.113.0.203.in-addr.arpa. 3600 IN CNAME 11.0-25.113.0.203.in-addr.arpa.",
		"11.0-25.113.0.203.in-addr.arpa. 3600 IN PTR crawler11.bot.lohisoft.com.",
		"crawler11.bot.lohisoft.com. 3600 IN A 203.0.113.11",
		// Truncated over UDP, complete over TCP.
		"12.113.0.203.in-addr.arpa. 3600 IN PTR crawler12.bot.lohisoft.com.",
		"crawler12.bot.lohisoft.com. 3600 IN A 203.0.113.12",
		// Forward CNAME loop.
		"13.113.0.203.in-addr.arpa. 3600 IN PTR loop.bot.lohisoft.com.",
		"loop.bot.lohisoft.com. 3600 IN CNAME loop2.bot.lohisoft.com.",
		"loop2.bot.lohisoft.com. 3600 IN CNAME loop.bot.lohisoft.com.",
		// Listed address whose PTR is wrong.
		"98.58.139.80.in-addr.arpa. 3600 IN PTR mail.lohisoft.com.",
		// IPv6, listed.
		"1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa. 3600 IN PTR crawler6.bot.lohisoft.com.",
		"crawler6.bot.lohisoft.com. 3600 IN AAAA 2001:db8::1",
		"crawler6.bot.lohisoft.com. 3600 IN A 203.0.113.66",
		// IPv6, listed, the forward answer is another address.
		"2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa. 3600 IN PTR crawler6.bot.lohisoft.com.",
	)
	z.ServFail("20.113.0.203.in-addr.arpa.")
	z.Refuse("21.113.0.203.in-addr.arpa.")
	z.Drop("22.113.0.203.in-addr.arpa.")
	z.ServFail("99.58.139.80.in-addr.arpa.")
	z.ServFail("broken.bot.lohisoft.com.")
	z.Truncate("12.113.0.203.in-addr.arpa.")
	z.Truncate("crawler12.bot.lohisoft.com.")
	return z
}

func fcrdnsTestList() *IPList {
	return &IPList{Prefixes: []netip.Prefix{
		netip.MustParsePrefix("79.139.58.98/32"),
		netip.MustParsePrefix("79.139.58.121/32"),
		netip.MustParsePrefix("80.139.58.96/28"),
		netip.MustParsePrefix("2001:db8::/64"),
	}, Source: "test"}
}

func TestVerify(t *testing.T) {
	z := fcrdnsTestZone(t)
	addr := dnstest.Serve(t, z)
	tests := []struct {
		ip      string
		offline bool
		want    Result
	}{
		{ip: "79.139.58.98", want: Result{Verdict: Genuine, Method: MethodFCrDNS,
			PTR: []string{"crawler1.bot.lohisoft.com"}, Forward: []string{"79.139.58.98"}, InIPList: true}},
		{ip: "79.139.58.121", want: Result{Verdict: Genuine, Method: MethodFCrDNS,
			PTR: []string{"crawler2.bot.lohisoft.com"}, Forward: []string{"79.139.58.121"}, InIPList: true}},
		{ip: "::ffff:79.139.58.98", want: Result{Verdict: Genuine, Method: MethodFCrDNS,
			PTR: []string{"crawler1.bot.lohisoft.com"}, Forward: []string{"79.139.58.98"}, InIPList: true}},
		{ip: "203.0.113.1", want: Result{Verdict: Spoofed, Method: MethodFCrDNS, Reason: ReasonPTRMismatch,
			PTR: []string{"xbot.lohisoft.com"}}},
		{ip: "203.0.113.2", want: Result{Verdict: Spoofed, Method: MethodFCrDNS, Reason: ReasonPTRMismatch,
			PTR: []string{"crawler1.bot.lohisoft.com.evil.example"}}},
		{ip: "203.0.113.3", want: Result{Verdict: Spoofed, Method: MethodFCrDNS, Reason: ReasonPTRMismatch,
			PTR: []string{"lohisoft.com"}}},
		{ip: "203.0.113.4", want: Result{Verdict: Spoofed, Method: MethodFCrDNS, Reason: ReasonPTRMismatch,
			PTR: []string{"bot.lohisoft.com"}}},
		{ip: "203.0.113.5", want: Result{Verdict: Spoofed, Method: MethodFCrDNS, Reason: ReasonForwardMismatch,
			PTR: []string{"crawler1.bot.lohisoft.com"}, Forward: []string{"79.139.58.98"}}},
		{ip: "203.0.113.6", want: Result{Verdict: Spoofed, Method: MethodFCrDNS, Reason: ReasonNoPTR}},
		{ip: "203.0.113.99", want: Result{Verdict: Spoofed, Method: MethodFCrDNS, Reason: ReasonNoPTR}},
		{ip: "203.0.113.7", want: Result{Verdict: Genuine, Method: MethodFCrDNS,
			PTR:     []string{"a.example", "b.example", "crawler7.bot.lohisoft.com"},
			Forward: []string{"192.0.2.1", "203.0.113.7"}}},
		{ip: "203.0.113.8", want: Result{Verdict: Genuine, Method: MethodFCrDNS,
			PTR: []string{"crawler8.bot.lohisoft.com"}, Forward: []string{"203.0.113.8"}}},
		{ip: "203.0.113.9", want: Result{Verdict: Spoofed, Method: MethodFCrDNS, Reason: ReasonForwardMismatch,
			PTR: []string{"ghost.bot.lohisoft.com"}}},
		{ip: "203.0.113.10", want: Result{Verdict: Unverified, Method: MethodFCrDNS, Reason: ReasonDNSError,
			PTR: []string{"broken.bot.lohisoft.com"}, DNSFailure: DNSFailureServFail}},
		{ip: "203.0.113.11", want: Result{Verdict: Genuine, Method: MethodFCrDNS,
			PTR: []string{"crawler11.bot.lohisoft.com"}, Forward: []string{"203.0.113.11"}}},
		{ip: "203.0.113.12", want: Result{Verdict: Genuine, Method: MethodFCrDNS,
			PTR: []string{"crawler12.bot.lohisoft.com"}, Forward: []string{"203.0.113.12"}}},
		{ip: "203.0.113.13", want: Result{Verdict: Spoofed, Method: MethodFCrDNS, Reason: ReasonForwardMismatch,
			PTR: []string{"loop.bot.lohisoft.com"}}},
		{ip: "203.0.113.20", want: Result{Verdict: Unverified, Method: MethodFCrDNS, Reason: ReasonDNSError, DNSFailure: DNSFailureServFail}},
		{ip: "203.0.113.21", want: Result{Verdict: Unverified, Method: MethodFCrDNS, Reason: ReasonDNSError, DNSFailure: DNSFailureRefused}},
		{ip: "203.0.113.22", want: Result{Verdict: Unverified, Method: MethodFCrDNS, Reason: ReasonDNSError, DNSFailure: DNSFailureTimeout}},
		// Listed: a DNS failure leaves the list to decide, silently.
		{ip: "80.139.58.99", want: Result{Verdict: Genuine, Method: MethodIPList, InIPList: true, DNSFailure: DNSFailureServFail}},
		// Listed: a definitive FCrDNS failure is a warning, not a verdict.
		{ip: "80.139.58.98", want: Result{Verdict: Genuine, Method: MethodIPList, InIPList: true,
			PTR: []string{"mail.lohisoft.com"}, Warnings: []string{WarningFCrDNSFailed}}},
		{ip: "80.139.58.97", want: Result{Verdict: Genuine, Method: MethodIPList, InIPList: true,
			Warnings: []string{WarningFCrDNSFailed}}},
		// IPv6.
		{ip: "2001:db8:1::1", want: Result{Verdict: Spoofed, Method: MethodIPList, Reason: ReasonIPv6}},
		{ip: "2001:db8::1", want: Result{Verdict: Genuine, Method: MethodFCrDNS, InIPList: true,
			PTR: []string{"crawler6.bot.lohisoft.com"}, Forward: []string{"2001:db8::1"}}},
		{ip: "2001:db8::1%eth0", want: Result{Verdict: Genuine, Method: MethodFCrDNS, InIPList: true,
			PTR: []string{"crawler6.bot.lohisoft.com"}, Forward: []string{"2001:db8::1"}}},
		{ip: "2001:DB8:0:0::2", want: Result{Verdict: Genuine, Method: MethodIPList, InIPList: true,
			PTR: []string{"crawler6.bot.lohisoft.com"}, Forward: []string{"2001:db8::1"}, Warnings: []string{WarningFCrDNSFailed}}},
		// Offline: the list decides, DNS is not asked.
		{ip: "79.139.58.98", offline: true, want: Result{Verdict: Genuine, Method: MethodIPList, InIPList: true}},
		{ip: "203.0.113.7", offline: true, want: Result{Verdict: Spoofed, Method: MethodIPList, Reason: ReasonNotInIPList}},
		{ip: "2001:db8:1::1", offline: true, want: Result{Verdict: Spoofed, Method: MethodIPList, Reason: ReasonIPv6}},
	}
	for _, tc := range tests {
		name := tc.ip
		if tc.offline {
			name += " offline"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			v := &Verifier{Profile: lohiProfile, Servers: []string{addr}, Timeout: dnsTestHang, Retries: 1,
				List: fcrdnsTestList(), Offline: tc.offline, after: z.after}
			a := netip.MustParseAddr(tc.ip)
			got := v.Verify(context.Background(), []netip.Addr{a})[0]
			if (got.DNSError == "") != (tc.want.DNSFailure == "") {
				t.Errorf("DNSError %q with DNSFailure %q", got.DNSError, got.DNSFailure)
			}
			got.DNSError = ""
			checkEvidence(t, got, addr, !tc.offline && got.Reason != ReasonIPv6)
			got.DNS = nil
			want := tc.want
			want.Addr = a.Unmap().WithZone("")
			if want.PTR == nil {
				want.PTR = []string{}
			}
			if want.Forward == nil {
				want.Forward = []string{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestVerifyDNSErrorIsExplained(t *testing.T) {
	z := fcrdnsTestZone(t)
	addr := dnstest.Serve(t, z)
	v := &Verifier{Profile: lohiProfile, Servers: []string{addr}, Timeout: dnsTestHang, after: z.after}
	got := v.Verify(context.Background(), []netip.Addr{netip.MustParseAddr("203.0.113.20")})[0]
	if got.Verdict != Unverified || !strings.Contains(got.DNSError, "SERVFAIL") || got.DNSFailure != DNSFailureServFail {
		t.Fatalf("got %+v, want unverified with SERVFAIL in DNSError", got)
	}
}

func TestVerifyNoDNSForIPv6OrOffline(t *testing.T) {
	z := fcrdnsTestZone(t)
	addr := dnstest.Serve(t, z)
	v := &Verifier{Profile: lohiProfile, Servers: []string{addr}, List: fcrdnsTestList()}
	v.Verify(context.Background(), []netip.Addr{netip.MustParseAddr("2001:db8:1::5"), netip.MustParseAddr("fe80::1")})
	off := &Verifier{Profile: lohiProfile, Servers: []string{addr}, Offline: true}
	off.Verify(context.Background(), []netip.Addr{netip.MustParseAddr("79.139.58.98"), netip.MustParseAddr("203.0.113.7")})
	if n := z.Total(); n != 0 {
		t.Fatalf("the server was asked %d questions, want none", n)
	}
}

func TestVerifyEachAddressOnce(t *testing.T) {
	z := fcrdnsTestZone(t)
	addr := dnstest.Serve(t, z)
	v := &Verifier{Profile: lohiProfile, Servers: []string{addr}, Concurrency: 8, Timeout: dnsTestHang, after: z.after}
	a := netip.MustParseAddr("79.139.58.98")
	b := netip.MustParseAddr("203.0.113.5") // same forward name as a
	in := []netip.Addr{a, b, a, netip.MustParseAddr("::ffff:79.139.58.98"), b, a}
	got := v.Verify(context.Background(), in)
	if len(got) != len(in) {
		t.Fatalf("got %d results for %d addresses", len(got), len(in))
	}
	for i, r := range got {
		want := Genuine
		if in[i].Unmap() == b {
			want = Spoofed
		}
		if r.Verdict != want || r.Addr != in[i].Unmap() {
			t.Errorf("result %d = %s %s, want %s %s", i, r.Addr, r.Verdict, in[i].Unmap(), want)
		}
	}
	v.Verify(context.Background(), []netip.Addr{a, b})
	for _, q := range []struct {
		qtype uint16
		name  string
	}{
		{dns.TypePTR, "98.58.139.79.in-addr.arpa"},
		{dns.TypePTR, "5.113.0.203.in-addr.arpa"},
		{dns.TypeA, "crawler1.bot.lohisoft.com"},
	} {
		if n := z.Count(q.qtype, q.name); n != 1 {
			t.Errorf("%s %s asked %d times, want once", dns.TypeToString[q.qtype], q.name, n)
		}
	}
}

func TestVerifyResolverUnreachable(t *testing.T) {
	tests := []struct {
		name   string
		server func(t testing.TB) (string, *dnsTestZone)
	}{
		{name: "refused", server: func(t testing.TB) (string, *dnsTestZone) { return closedUDPAddr(t), newDNSTestZone(t) }},
		{name: "blackhole", server: func(t testing.TB) (string, *dnsTestZone) {
			z := newDNSTestZone(t)
			z.Silence(true)
			return dnstest.Serve(t, z), z
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			server, z := tc.server(t)
			v := &Verifier{Profile: lohiProfile, Servers: []string{server}, Timeout: dnsTestHang, Retries: 2, Concurrency: 4}
			v.after = probeFirst(z, v)
			var addrs []netip.Addr
			for i := range 200 {
				addrs = append(addrs, netip.AddrFrom4([4]byte{198, 51, byte(i / 250), byte(i%250 + 1)}))
			}
			addrs = append(addrs, netip.MustParseAddr("79.139.58.121"))
			got := v.Verify(context.Background(), addrs)
			// The run must notice the resolver is down and stop asking:
			// without that, 201 addresses would send 603 queries, each
			// waiting out its timeout.
			if n := z.Total(); n > 4*(dnsDownAfter+1) {
				t.Errorf("the server got %d queries, want the run to stop asking after a few failures", n)
			}
			for _, r := range got[:200] {
				if r.Verdict != Unverified || r.Reason != ReasonDNSError {
					t.Fatalf("%s: %s/%s, want unverified/dns-error", r.Addr, r.Verdict, r.Reason)
				}
				if r.DNSFailure != DNSFailureUnreachable && r.DNSFailure != DNSFailureTimeout {
					t.Fatalf("%s: failure %q, want unreachable (or the timeout that found it)", r.Addr, r.DNSFailure)
				}
			}
			if last := got[200]; last.Verdict != Genuine || last.Method != MethodIPList {
				t.Errorf("listed address: %s/%s, want genuine/ip-list", last.Verdict, last.Method)
			}
			w := v.Warnings()
			if len(w) != 1 || !strings.Contains(w[0], "dns: resolver "+server+" unreachable") || !strings.HasSuffix(w[0], "the ip list decides") {
				t.Errorf("warnings = %q, want one saying %s is unreachable", w, server)
			}
			if p := v.Progress(); p.RetryTotal != 0 {
				t.Errorf("progress %+v: a second pass against a dead resolver", p)
			}
		})
	}
}

// probeFirst is z's timer for v's queries with the order a real clock
// gives queries and the probe: the probe, sent at the first failure with
// half the query timeout, has failed before any query sent after that
// failure times out. A query asked after the first query timed out waits
// until the server has recorded the probe's failure (or been marked
// down); without that, a busy machine could run dozens of dropped queries
// through before the probe's goroutine is scheduled, which a real clock
// never allows.
func probeFirst(z *dnsTestZone, v *Verifier) dnsAfterFunc {
	var (
		mu      sync.Mutex
		failing bool
	)
	// probeDone reports whether the server has recorded the probe's
	// failure, or was marked down.
	probeDone := func() bool {
		s := v.res.servers[0]
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.probeFailed || s.down.Load()
	}
	return func(name string, d time.Duration, f func()) func() bool {
		if name == "." {
			return z.after(name, d, f)
		}
		mu.Lock()
		gated := failing
		mu.Unlock()
		return z.after(name, d, func() {
			if gated {
				// The probe's goroutine sets the flag under the
				// server's lock; yield to it until it has.
				for guard := time.Now().Add(d); !probeDone() && time.Now().Before(guard); {
					runtime.Gosched()
				}
			}
			mu.Lock()
			failing = true
			mu.Unlock()
			f()
		})
	}
}

func TestVerifyNoResolver(t *testing.T) {
	v := &Verifier{Profile: lohiProfile}
	got := v.Verify(context.Background(), []netip.Addr{netip.MustParseAddr("79.139.58.98"), netip.MustParseAddr("192.0.2.1")})
	if got[0].Verdict != Genuine || got[0].Method != MethodIPList || got[1].Verdict != Unverified || got[1].Reason != ReasonDNSError {
		t.Fatalf("got %+v", got)
	}
	if w := v.Warnings(); len(w) != 1 || !strings.Contains(w[0], "no resolver") {
		t.Fatalf("warnings = %q", w)
	}
}

func TestVerifyCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The run is canceled while the query waits on a server that never
	// answers.
	addr := dnstest.Serve(t, dns.HandlerFunc(func(dns.ResponseWriter, *dns.Msg) { cancel() }))
	v := &Verifier{Profile: lohiProfile, Servers: []string{addr}, Timeout: dnsTestHang, Retries: 5}
	done := make(chan Result)
	go func() { done <- v.Verify(ctx, []netip.Addr{netip.MustParseAddr("192.0.2.1")})[0] }()
	select {
	case got := <-done:
		if got.Verdict != Unverified || got.DNSFailure != DNSFailureCanceled {
			t.Fatalf("got %+v, want unverified, canceled", got)
		}
	case <-time.After(dnsTestHang / 2):
		t.Fatal("Verify did not return after its context ended")
	}
	if p := v.Progress(); p.RetryTotal != 0 {
		t.Errorf("progress %+v: a canceled run went on to a second pass", p)
	}
}

// TestVerifyLargeForwardAnswer gives the crawler's name many A records,
// the address's own last: over UDP, over UDP truncated then TCP, and in an
// answer near the 64 KiB a DNS message can hold. Every record is read.
func TestVerifyLargeForwardAnswer(t *testing.T) {
	for _, n := range []int{41, 200, 3900} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			a := netip.MustParseAddr("203.0.113.200")
			z := newDNSTestZone(t, "200.113.0.203.in-addr.arpa. 3600 IN PTR many.bot.lohisoft.com.")
			for i := range n - 1 {
				z.AddRR(&dns.A{
					Hdr: dns.RR_Header{Name: "many.bot.lohisoft.com.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 3600},
					A:   net.IPv4(10, byte(i>>16), byte(i>>8), byte(i)),
				})
			}
			z.AddRR(&dns.A{
				Hdr: dns.RR_Header{Name: "many.bot.lohisoft.com.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 3600},
				A:   a.AsSlice(),
			})
			addr := dnstest.Serve(t, z)
			dir := t.TempDir()
			c, _ := OpenDNSCache(dir, nil)
			v := &Verifier{Profile: lohiProfile, Servers: []string{addr}, Timeout: dnsTestHang, after: z.after, Cache: c}
			got := v.Verify(context.Background(), []netip.Addr{a})[0]
			if got.Verdict != Genuine || got.Method != MethodFCrDNS || len(got.Forward) != n || got.Forward[len(got.Forward)-1] != a.String() {
				t.Fatalf("got %s/%s/%s with %d forward addresses, want genuine by fcrdns with all %d", got.Verdict, got.Method, got.Reason, len(got.Forward), n)
			}
			wantTCP := 0
			if n > 70 { // 16 bytes a record: more than 1232 bytes
				wantTCP = 1
			}
			if z.TCPCount() != wantTCP || z.Count(dns.TypeA, "many.bot.lohisoft.com") != 1+wantTCP {
				t.Errorf("%d tcp queries, %d A queries; want %d tcp after a truncated udp answer", z.TCPCount(), z.Count(dns.TypeA, "many.bot.lohisoft.com"), wantTCP)
			}
			// The cache keeps the whole set too.
			if err := c.Save(); err != nil {
				t.Fatal(err)
			}
			c2, err := OpenDNSCache(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			again := (&Verifier{Profile: lohiProfile, Servers: []string{closedUDPAddr(t)}, Cache: c2}).Verify(context.Background(), []netip.Addr{a})[0]
			if again.Verdict != Genuine || len(again.Forward) != n {
				t.Fatalf("from the cache: %s/%s with %d forward addresses", again.Verdict, again.Reason, len(again.Forward))
			}
		})
	}
}

// TestVerifyManyPTRNames gives addresses more PTR names than are looked
// at: the right one is still found when it is among those looked at, and
// an address whose names looked at all fail is not judged on them.
func TestVerifyManyPTRNames(t *testing.T) {
	z := newDNSTestZone(t)
	add := func(line string) { z.Add(t, line) }
	// .1: 2,500 names elsewhere, then the crawler's (last).
	for i := range 2500 {
		add(fmt.Sprintf("1.114.0.203.in-addr.arpa. 3600 IN PTR h%d.example.", i))
	}
	add("1.114.0.203.in-addr.arpa. 3600 IN PTR crawler1.bot.lohisoft.com.")
	add("crawler1.bot.lohisoft.com. 3600 IN A 203.0.114.1")
	// .2: 40 names under the crawler's domain, none with the address.
	// .3: the same, and its own name sorts first.
	for i := range 40 {
		add(fmt.Sprintf("2.114.0.203.in-addr.arpa. 3600 IN PTR fake%02d.bot.lohisoft.com.", i))
		add(fmt.Sprintf("3.114.0.203.in-addr.arpa. 3600 IN PTR fake%02d.bot.lohisoft.com.", i))
	}
	add("3.114.0.203.in-addr.arpa. 3600 IN PTR a3.bot.lohisoft.com.")
	add("a3.bot.lohisoft.com. 3600 IN A 203.0.114.3")
	// .4: 16 crawler-domain names, none right: that is the whole set.
	for i := range fcrdnsMaxNames {
		add(fmt.Sprintf("4.114.0.203.in-addr.arpa. 3600 IN PTR fake%02d.bot.lohisoft.com.", i))
	}
	addr := dnstest.Serve(t, z)
	v := &Verifier{Profile: lohiProfile, Servers: []string{addr}, Timeout: dnsTestHang, after: z.after}
	ips := []netip.Addr{netip.MustParseAddr("203.0.114.1"), netip.MustParseAddr("203.0.114.2"),
		netip.MustParseAddr("203.0.114.3"), netip.MustParseAddr("203.0.114.4")}
	got := v.Verify(context.Background(), ips)
	want := []struct {
		verdict      Verdict
		reason, kind string
		ptrs         int
	}{
		{Genuine, "", "", fcrdnsMaxNames},
		{Unverified, ReasonDNSError, DNSFailureTooManyNames, fcrdnsMaxNames},
		{Genuine, "", "", fcrdnsMaxNames},
		{Spoofed, ReasonForwardMismatch, "", fcrdnsMaxNames},
	}
	for i, w := range want {
		r := got[i]
		if r.Verdict != w.verdict || r.Reason != w.reason || r.DNSFailure != w.kind || len(r.PTR) != w.ptrs {
			t.Errorf("%s: %s/%s/%s with %d ptr names, want %s/%s/%s with %d", r.Addr, r.Verdict, r.Reason, r.DNSFailure, len(r.PTR), w.verdict, w.reason, w.kind, w.ptrs)
		}
	}
	if p := v.Progress(); p.RetryTotal != 0 {
		t.Errorf("progress %+v: too many names is not worth asking again", p)
	}
	if n := z.Count(dns.TypeA, "fake20.bot.lohisoft.com"); n != 0 {
		t.Errorf("a name beyond the %d looked at was asked about", fcrdnsMaxNames)
	}
}

// TestVerifySecondPass checks that addresses DNS could not answer for are
// tried again at the end, with a longer timeout, and say why when they
// stay unverified.
func TestVerifySecondPass(t *testing.T) {
	z := fcrdnsTestZone(t)
	z.DropOnce("98.58.139.79.in-addr.arpa.") // answers the second time
	z.DropOnce("5.113.0.203.in-addr.arpa.")
	addr := dnstest.Serve(t, z)
	v := &Verifier{Profile: lohiProfile, Servers: []string{addr}, Timeout: dnsTestHang, Retries: 0, after: z.after, List: &IPList{}}
	ips := []netip.Addr{
		netip.MustParseAddr("79.139.58.98"),  // dropped once: genuine after all
		netip.MustParseAddr("203.0.113.5"),   // dropped once: spoofed after all
		netip.MustParseAddr("203.0.113.22"),  // always dropped
		netip.MustParseAddr("203.0.113.20"),  // SERVFAIL
		netip.MustParseAddr("203.0.113.7"),   // answers at once
		netip.MustParseAddr("2001:db8:9::1"), // no DNS needed
	}
	got := v.Verify(context.Background(), ips)
	want := []struct {
		verdict Verdict
		kind    string
	}{{Genuine, ""}, {Spoofed, ""}, {Unverified, DNSFailureTimeout}, {Unverified, DNSFailureServFail}, {Genuine, ""}, {Spoofed, ""}}
	for i, w := range want {
		if got[i].Verdict != w.verdict || got[i].DNSFailure != w.kind {
			t.Errorf("%s: %s (%s), want %s (%s)", got[i].Addr, got[i].Verdict, got[i].DNSFailure, w.verdict, w.kind)
		}
	}
	if p := v.Progress(); p != (Progress{Done: 5, Total: 5, Retried: 4, RetryTotal: 4}) {
		t.Errorf("progress %+v, want 5 of 5 and 4 of 4 tried again", p)
	}
	for _, q := range []string{"98.58.139.79.in-addr.arpa", "22.113.0.203.in-addr.arpa", "20.113.0.203.in-addr.arpa"} {
		if n := z.Count(dns.TypePTR, q); n != 2 {
			t.Errorf("PTR %s asked %d times, want twice (once per pass)", q, n)
		}
	}
	if n := z.Count(dns.TypePTR, "7.113.0.203.in-addr.arpa"); n != 1 {
		t.Errorf("an answered address was asked about %d times", n)
	}
	// The first pass asks with Timeout, the second with three times it.
	var first, second int
	for _, d := range z.timeouts() {
		switch d {
		case dnsTestHang:
			first++
		case 3 * dnsTestHang:
			second++
		default:
			t.Errorf("a query with timeout %s", d)
		}
	}
	if first == 0 || second == 0 {
		t.Errorf("%d queries with the first timeout, %d with the longer one", first, second)
	}
	// A later call does not ask again about what is settled.
	before := z.Total()
	v.Verify(context.Background(), ips)
	if z.Total() != before {
		t.Errorf("a second Verify of the same addresses asked %d questions", z.Total()-before)
	}
}

// fcrdnsSynthHandler answers PTR and A for any IPv4 address a.b.c.d:
// PTR host-a-b-c-d.bot.lohisoft.com, which has the address as its A record.
type fcrdnsSynthHandler struct {
	n     atomic.Int64
	delay time.Duration // before each answer
}

func (h *fcrdnsSynthHandler) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	h.n.Add(1)
	if h.delay > 0 {
		time.Sleep(h.delay)
	}
	m := new(dns.Msg)
	m.SetReply(r)
	q := r.Question[0]
	// Names in any letter case, as a server must read them (the
	// resolver sends them in random case).
	name := strings.ToLower(q.Name)
	hdr := dns.RR_Header{Name: q.Name, Class: dns.ClassINET, Ttl: 3600, Rrtype: q.Qtype}
	switch q.Qtype {
	case dns.TypePTR:
		var o [4]int
		if _, err := fmt.Sscanf(name, "%d.%d.%d.%d.in-addr.arpa.", &o[3], &o[2], &o[1], &o[0]); err == nil {
			m.Answer = append(m.Answer, &dns.PTR{Hdr: hdr, Ptr: fmt.Sprintf("host-%d-%d-%d-%d.bot.lohisoft.com.", o[0], o[1], o[2], o[3])})
		}
	case dns.TypeA:
		var o [4]byte
		if _, err := fmt.Sscanf(name, "host-%d-%d-%d-%d.bot.lohisoft.com.", &o[0], &o[1], &o[2], &o[3]); err == nil {
			m.Answer = append(m.Answer, &dns.A{Hdr: hdr, A: net.IP(o[:])})
		}
	}
	if len(m.Answer) == 0 {
		m.Rcode = dns.RcodeNameError
	}
	w.WriteMsg(m)
}

// BenchmarkVerify10k verifies 10,000 distinct addresses against a loopback
// DNS server and reports addresses per second.
func BenchmarkVerify10k(b *testing.B) {
	h := &fcrdnsSynthHandler{}
	addr := dnstest.Serve(b, h)
	addrs := make([]netip.Addr, 10000)
	for i := range addrs {
		addrs[i] = netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
	}
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		v := &Verifier{Profile: lohiProfile, Servers: []string{addr}, Timeout: 2 * time.Second, Retries: 2}
		res := v.Verify(context.Background(), addrs)
		if res[len(res)-1].Verdict != Genuine || res[0].Verdict != Genuine {
			b.Fatalf("got %+v", res[0])
		}
	}
	b.ReportMetric(float64(b.N*len(addrs))/time.Since(start).Seconds(), "addrs/s")
}

// BenchmarkVerifyLatency50ms verifies 4,000 distinct addresses against a
// loopback DNS server that takes 50 ms to answer each query, as a
// recursive resolver does for names it must look up, with the default
// concurrency, and reports addresses per second.
func BenchmarkVerifyLatency50ms(b *testing.B) {
	h := &fcrdnsSynthHandler{delay: 50 * time.Millisecond}
	addr := dnstest.Serve(b, h)
	addrs := make([]netip.Addr, 4000)
	for i := range addrs {
		addrs[i] = netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)})
	}
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		v := &Verifier{Profile: lohiProfile, Servers: []string{addr}}
		res := v.Verify(context.Background(), addrs)
		for _, r := range res {
			if r.Verdict != Genuine {
				b.Fatalf("got %+v", r)
			}
		}
	}
	b.ReportMetric(float64(b.N*len(addrs))/time.Since(start).Seconds(), "addrs/s")
}

// FuzzDNSAnswer feeds arbitrary DNS messages (as a hostile server might
// send) through the answer walk and the PTR name checks.
func FuzzDNSAnswer(f *testing.F) {
	for _, l := range [][]string{
		{"98.58.139.79.in-addr.arpa. 60 IN PTR crawler1.bot.lohisoft.com.", "98.58.139.79.in-addr.arpa. 60 IN PTR X.example."},
		{"crawler8.bot.lohisoft.com. 60 IN CNAME host8.example.", "host8.example. 60 IN A 203.0.113.8"},
		{`a\.b.example. 60 IN PTR crawler1\.bot.lohisoft.com.`},
	} {
		m := new(dns.Msg)
		m.SetQuestion("q.example.", dns.TypeA)
		for _, s := range l {
			rr, err := dns.NewRR(s)
			if err != nil {
				f.Fatal(err)
			}
			m.Answer = append(m.Answer, rr)
		}
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m := new(dns.Msg)
		if err := m.Unpack(data); err != nil {
			return
		}
		owners := []string{"q.example."}
		for _, rr := range m.Answer {
			owners = append(owners, rr.Header().Name)
		}
		for _, owner := range owners {
			for _, qtype := range []uint16{dns.TypePTR, dns.TypeA, dns.TypeAAAA} {
				values, cname, ttl := dnsRecords(m.Answer, owner, qtype)
				if len(values) > dnsMaxValues || ttl > uint32(dnsMaxTTL/time.Second) || len(values) > 0 && cname != "" {
					t.Fatalf("dnsRecords: %d values, cname %q, ttl %d", len(values), cname, ttl)
				}
				names, more := fcrdnsNames(values, lohiSuffixes)
				if len(names) > fcrdnsMaxNames {
					t.Fatalf("%d names kept", len(names))
				}
				// What a PTR lookup keeps decides as the whole answer would.
				kept := fcrdnsKeepNames(values, lohiSuffixes)
				keptNames, keptMore := fcrdnsNames(kept, lohiSuffixes)
				if len(kept) > 2*fcrdnsMaxNames+1 || keptMore != more || !slices.Equal(names, keptNames) {
					t.Fatalf("kept %d names %q (more %v), want the crawler names of %q (more %v)", len(kept), keptNames, keptMore, names, more)
				}
				for _, n := range names {
					if n != strings.ToLower(n) || dns.IsFqdn(n) {
						t.Fatalf("name %q not normalised", n)
					}
					if nameUnder(n, lohiSuffixes) && !strings.HasSuffix(n, ".bot.lohisoft.com") {
						t.Fatalf("%q passed the suffix check", n)
					}
				}
			}
		}
	})
}

// checkEvidence checks that r's DNS evidence is the lookups its verdict
// says were made, each from server, asked and with a TTL: the PTR lookup
// of the address first, then forward lookups of its names.
func checkEvidence(t *testing.T, r Result, server string, asked bool) {
	t.Helper()
	if !asked {
		if r.DNS != nil {
			t.Errorf("%s: DNS evidence %v for a verdict without DNS", r.Addr, r.DNS)
		}
		return
	}
	if len(r.DNS) == 0 {
		t.Fatalf("%s: no DNS evidence for %s/%s", r.Addr, r.Method, r.Reason)
	}
	arpa, _ := dns.ReverseAddr(r.Addr.String())
	if p := r.DNS[0]; p.Type != "PTR" || p.Name != arpa {
		t.Errorf("%s: first answer %s %s, want PTR %s", r.Addr, p.Type, p.Name, arpa)
	}
	for _, a := range r.DNS {
		if a.Asked.IsZero() {
			t.Errorf("%s: %s %s: no time asked", r.Addr, a.Type, a.Name)
		}
		switch {
		case a.Error != "":
			if a.TTL != 0 || a.Rcode != "" || !a.Expires().IsZero() {
				t.Errorf("%s: failed %s %s with ttl %d, rcode %q", r.Addr, a.Type, a.Name, a.TTL, a.Rcode)
			}
		case a.Resolver != server || a.Rcode == "" || a.Cached:
			t.Errorf("%s: %s %s answered by %q (%s, cached %v), want %s", r.Addr, a.Type, a.Name, a.Resolver, a.Rcode, a.Cached, server)
		case a.Type == "PTR" && len(r.PTR) > 0 && !slices.Equal(slices.Sorted(slices.Values(a.Answer)), r.PTR):
			t.Errorf("%s: PTR evidence %v, verdict's PTR %v", r.Addr, a.Answer, r.PTR)
		}
	}
	for _, a := range r.DNS[1:] {
		if a.Type != "A" && a.Type != "AAAA" || !slices.Contains(r.PTR, strings.TrimSuffix(a.Name, ".")) {
			t.Errorf("%s: forward evidence %s %s not of a PTR name %v", r.Addr, a.Type, a.Name, r.PTR)
		}
	}
}
