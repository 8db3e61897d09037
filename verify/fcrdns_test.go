package verify

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

func TestIsCrawlerName(t *testing.T) {
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
			if got := IsCrawlerName(tc.name); got != tc.want {
				t.Errorf("IsCrawlerName(%q) = %v, want %v", tc.name, got, tc.want)
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
	z.servfail["20.113.0.203.in-addr.arpa."] = true
	z.refused["21.113.0.203.in-addr.arpa."] = true
	z.drop["22.113.0.203.in-addr.arpa."] = true
	z.servfail["99.58.139.80.in-addr.arpa."] = true
	z.servfail["broken.bot.lohisoft.com."] = true
	z.truncate["12.113.0.203.in-addr.arpa."] = true
	z.truncate["crawler12.bot.lohisoft.com."] = true
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
	addr := startDNSServer(t, z)
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
			PTR: []string{"broken.bot.lohisoft.com"}}},
		{ip: "203.0.113.11", want: Result{Verdict: Genuine, Method: MethodFCrDNS,
			PTR: []string{"crawler11.bot.lohisoft.com"}, Forward: []string{"203.0.113.11"}}},
		{ip: "203.0.113.12", want: Result{Verdict: Genuine, Method: MethodFCrDNS,
			PTR: []string{"crawler12.bot.lohisoft.com"}, Forward: []string{"203.0.113.12"}}},
		{ip: "203.0.113.13", want: Result{Verdict: Spoofed, Method: MethodFCrDNS, Reason: ReasonForwardMismatch,
			PTR: []string{"loop.bot.lohisoft.com"}}},
		{ip: "203.0.113.20", want: Result{Verdict: Unverified, Method: MethodFCrDNS, Reason: ReasonDNSError}},
		{ip: "203.0.113.21", want: Result{Verdict: Unverified, Method: MethodFCrDNS, Reason: ReasonDNSError}},
		{ip: "203.0.113.22", want: Result{Verdict: Unverified, Method: MethodFCrDNS, Reason: ReasonDNSError}},
		// Listed: a DNS failure leaves the list to decide, silently.
		{ip: "80.139.58.99", want: Result{Verdict: Genuine, Method: MethodIPList, InIPList: true}},
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
			v := &Verifier{Servers: []string{addr}, Timeout: time.Second, Retries: 1,
				List: fcrdnsTestList(), Offline: tc.offline}
			a := netip.MustParseAddr(tc.ip)
			got := v.Verify(context.Background(), []netip.Addr{a})[0]
			got.DNSError = ""
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
	addr := startDNSServer(t, z)
	v := &Verifier{Servers: []string{addr}, Timeout: time.Second}
	got := v.Verify(context.Background(), []netip.Addr{netip.MustParseAddr("203.0.113.20")})[0]
	if got.Verdict != Unverified || !strings.Contains(got.DNSError, "SERVFAIL") {
		t.Fatalf("got %+v, want unverified with SERVFAIL in DNSError", got)
	}
}

func TestVerifyNoDNSForIPv6OrOffline(t *testing.T) {
	z := fcrdnsTestZone(t)
	addr := startDNSServer(t, z)
	v := &Verifier{Servers: []string{addr}, List: fcrdnsTestList()}
	v.Verify(context.Background(), []netip.Addr{netip.MustParseAddr("2001:db8:1::5"), netip.MustParseAddr("fe80::1")})
	off := &Verifier{Servers: []string{addr}, Offline: true}
	off.Verify(context.Background(), []netip.Addr{netip.MustParseAddr("79.139.58.98"), netip.MustParseAddr("203.0.113.7")})
	if n := z.total(); n != 0 {
		t.Fatalf("the server was asked %d questions, want none", n)
	}
}

func TestVerifyEachAddressOnce(t *testing.T) {
	z := fcrdnsTestZone(t)
	addr := startDNSServer(t, z)
	v := &Verifier{Servers: []string{addr}, Concurrency: 8}
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
		if n := z.count(q.qtype, q.name); n != 1 {
			t.Errorf("%s %s asked %d times, want once", dns.TypeToString[q.qtype], q.name, n)
		}
	}
}

func TestVerifyResolverUnreachable(t *testing.T) {
	tests := []struct {
		name    string
		server  func(t testing.TB) string
		timeout time.Duration
		limit   time.Duration
	}{
		{name: "refused", server: closedUDPAddr, timeout: 2 * time.Second, limit: 2 * time.Second},
		{name: "blackhole", server: func(t testing.TB) string {
			return startDNSServer(t, dns.HandlerFunc(func(dns.ResponseWriter, *dns.Msg) {}))
		}, timeout: 200 * time.Millisecond, limit: 1500 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			server := tc.server(t)
			v := &Verifier{Servers: []string{server}, Timeout: tc.timeout, Retries: 2, Concurrency: 4}
			var addrs []netip.Addr
			for i := range 200 {
				addrs = append(addrs, netip.AddrFrom4([4]byte{198, 51, byte(i / 250), byte(i%250 + 1)}))
			}
			addrs = append(addrs, netip.MustParseAddr("79.139.58.121"))
			start := time.Now()
			got := v.Verify(context.Background(), addrs)
			if d := time.Since(start); d > tc.limit {
				t.Errorf("took %s, want under %s: the run must notice the resolver is down", d, tc.limit)
			}
			for _, r := range got[:200] {
				if r.Verdict != Unverified || r.Reason != ReasonDNSError {
					t.Fatalf("%s: %s/%s, want unverified/dns-error", r.Addr, r.Verdict, r.Reason)
				}
			}
			if last := got[200]; last.Verdict != Genuine || last.Method != MethodIPList {
				t.Errorf("listed address: %s/%s, want genuine/ip-list", last.Verdict, last.Method)
			}
			w := v.Warnings()
			if len(w) != 1 || !strings.Contains(w[0], "dns: resolver "+server+" unreachable") || !strings.HasSuffix(w[0], "the ip list decides") {
				t.Errorf("warnings = %q, want one saying %s is unreachable", w, server)
			}
		})
	}
}

func TestVerifyNoResolver(t *testing.T) {
	v := &Verifier{}
	got := v.Verify(context.Background(), []netip.Addr{netip.MustParseAddr("79.139.58.98"), netip.MustParseAddr("192.0.2.1")})
	if got[0].Verdict != Genuine || got[0].Method != MethodIPList || got[1].Verdict != Unverified || got[1].Reason != ReasonDNSError {
		t.Fatalf("got %+v", got)
	}
	if w := v.Warnings(); len(w) != 1 || !strings.Contains(w[0], "no resolver") {
		t.Fatalf("warnings = %q", w)
	}
}

func TestVerifyCanceled(t *testing.T) {
	addr := startDNSServer(t, dns.HandlerFunc(func(dns.ResponseWriter, *dns.Msg) {}))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	v := &Verifier{Servers: []string{addr}, Timeout: 10 * time.Second, Retries: 5}
	start := time.Now()
	got := v.Verify(ctx, []netip.Addr{netip.MustParseAddr("192.0.2.1")})
	if time.Since(start) > 2*time.Second || got[0].Verdict != Unverified {
		t.Fatalf("got %+v after %s, want unverified soon after the context ends", got[0], time.Since(start))
	}
}

// fcrdnsSynthHandler answers PTR and A for any IPv4 address a.b.c.d:
// PTR host-a-b-c-d.bot.lohisoft.com, which has the address as its A record.
type fcrdnsSynthHandler struct{ n atomic.Int64 }

func (h *fcrdnsSynthHandler) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	h.n.Add(1)
	m := new(dns.Msg)
	m.SetReply(r)
	q := r.Question[0]
	hdr := dns.RR_Header{Name: q.Name, Class: dns.ClassINET, Ttl: 3600, Rrtype: q.Qtype}
	switch q.Qtype {
	case dns.TypePTR:
		var o [4]int
		if _, err := fmt.Sscanf(q.Name, "%d.%d.%d.%d.in-addr.arpa.", &o[3], &o[2], &o[1], &o[0]); err == nil {
			m.Answer = append(m.Answer, &dns.PTR{Hdr: hdr, Ptr: fmt.Sprintf("host-%d-%d-%d-%d.bot.lohisoft.com.", o[0], o[1], o[2], o[3])})
		}
	case dns.TypeA:
		var o [4]byte
		if _, err := fmt.Sscanf(q.Name, "host-%d-%d-%d-%d.bot.lohisoft.com.", &o[0], &o[1], &o[2], &o[3]); err == nil {
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
	addr := startDNSServer(b, h)
	addrs := make([]netip.Addr, 10000)
	for i := range addrs {
		addrs[i] = netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
	}
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		v := &Verifier{Servers: []string{addr}, Timeout: 2 * time.Second, Retries: 2}
		res := v.Verify(context.Background(), addrs)
		if res[len(res)-1].Verdict != Genuine || res[0].Verdict != Genuine {
			b.Fatalf("got %+v", res[0])
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
				names := fcrdnsNames(values)
				if len(names) > fcrdnsMaxNames {
					t.Fatalf("%d names kept", len(names))
				}
				for _, n := range names {
					if n != strings.ToLower(n) || dns.IsFqdn(n) {
						t.Fatalf("name %q not normalised", n)
					}
					if IsCrawlerName(n) && !strings.HasSuffix(n, ".bot.lohisoft.com") {
						t.Fatalf("%q passed the suffix check", n)
					}
				}
			}
		}
	})
}
