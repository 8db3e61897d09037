package verify

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// dnsTestZone is a small authoritative-and-recursive server for tests: it
// answers from zone-file lines, follows CNAMEs within them, and misbehaves
// on purpose for the names listed in its behaviour sets.
type dnsTestZone struct {
	records map[string][]dns.RR // by lower-case owner
	// Names (lower case, with the trailing dot) that get special answers.
	servfail, refused, drop, truncate, noChase map[string]bool
	mu                                         sync.Mutex
	queries                                    map[string]int // "TYPE name" -> count, over UDP and TCP
	tcp                                        int
}

// newDNSTestZone parses zone lines ("owner TTL IN TYPE data").
func newDNSTestZone(t testing.TB, lines ...string) *dnsTestZone {
	t.Helper()
	z := &dnsTestZone{
		records:  map[string][]dns.RR{},
		servfail: map[string]bool{}, refused: map[string]bool{}, drop: map[string]bool{},
		truncate: map[string]bool{}, noChase: map[string]bool{},
		queries: map[string]int{},
	}
	for _, l := range lines {
		rr, err := dns.NewRR(l)
		if err != nil {
			t.Fatalf("bad zone line %q: %v", l, err)
		}
		owner := strings.ToLower(rr.Header().Name)
		z.records[owner] = append(z.records[owner], rr)
	}
	return z
}

func (z *dnsTestZone) count(qtype uint16, name string) int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.queries[dns.TypeToString[qtype]+" "+strings.ToLower(dns.Fqdn(name))]
}

func (z *dnsTestZone) total() int {
	z.mu.Lock()
	defer z.mu.Unlock()
	n := 0
	for _, c := range z.queries {
		n += c
	}
	return n
}

func (z *dnsTestZone) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	if len(r.Question) != 1 {
		dns.HandleFailed(w, r)
		return
	}
	q := r.Question[0]
	name := strings.ToLower(q.Name)
	isTCP := w.RemoteAddr().Network() == "tcp"
	z.mu.Lock()
	z.queries[dns.TypeToString[q.Qtype]+" "+name]++
	if isTCP {
		z.tcp++
	}
	z.mu.Unlock()

	m := new(dns.Msg)
	m.SetReply(r)
	m.RecursionAvailable = true
	switch {
	case z.drop[name]:
		return
	case z.servfail[name]:
		m.Rcode = dns.RcodeServerFailure
		w.WriteMsg(m)
		return
	case z.refused[name]:
		m.Rcode = dns.RcodeRefused
		w.WriteMsg(m)
		return
	case z.truncate[name] && !isTCP:
		m.Truncated = true
		w.WriteMsg(m)
		return
	}
	cur := name
	for range 10 {
		rrs := z.records[cur]
		var cname *dns.CNAME
		found := false
		for _, rr := range rrs {
			if rr.Header().Rrtype == q.Qtype {
				m.Answer = append(m.Answer, rr)
				found = true
			}
			if c, ok := rr.(*dns.CNAME); ok {
				cname = c
			}
		}
		if found || cname == nil || q.Qtype == dns.TypeCNAME {
			break
		}
		m.Answer = append(m.Answer, cname)
		cur = strings.ToLower(cname.Target)
		if z.noChase[name] {
			break
		}
	}
	if len(m.Answer) == 0 || m.Answer[len(m.Answer)-1].Header().Rrtype == dns.TypeCNAME && !z.noChase[name] {
		if len(z.records[cur]) == 0 {
			m.Rcode = dns.RcodeNameError
		}
		m.Ns = append(m.Ns, &dns.SOA{
			Hdr: dns.RR_Header{Name: "example.", Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 600},
			Ns:  "ns.example.", Mbox: "hostmaster.example.", Serial: 1, Refresh: 3600, Retry: 600, Expire: 86400, Minttl: 300,
		})
	}
	if !isTCP {
		size := dns.MinMsgSize
		if opt := r.IsEdns0(); opt != nil {
			size = int(opt.UDPSize())
		}
		m.Truncate(size)
	}
	w.WriteMsg(m)
}

// startDNSServer serves h on 127.0.0.1, UDP and TCP on one port, until the
// test ends, and returns "127.0.0.1:PORT".
func startDNSServer(t testing.TB, h dns.Handler) string {
	t.Helper()
	var pc net.PacketConn
	var l net.Listener
	for try := 0; ; try++ {
		var err error
		pc, err = net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		l, err = net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			break
		}
		pc.Close()
		if try == 10 {
			t.Fatalf("cannot bind tcp beside udp: %v", err)
		}
	}
	udp := &dns.Server{PacketConn: pc, Handler: h}
	tcp := &dns.Server{Listener: l, Handler: h}
	go udp.ActivateAndServe()
	go tcp.ActivateAndServe()
	t.Cleanup(func() {
		udp.Shutdown()
		tcp.Shutdown()
	})
	return pc.LocalAddr().String()
}

// closedUDPAddr returns a loopback address where nothing listens: queries
// to it are refused at once.
func closedUDPAddr(t testing.TB) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	return addr
}

func TestDNSLookup(t *testing.T) {
	z := newDNSTestZone(t,
		"a.example. 300 IN A 192.0.2.1",
		"a.example. 300 IN A 192.0.2.2",
		"alias.example. 60 IN CNAME A.EXAMPLE.",
		"alias2.example. 120 IN CNAME alias.example.",
		"loop1.example. 300 IN CNAME loop2.example.",
		"loop2.example. 300 IN CNAME loop1.example.",
		"far.example. 300 IN CNAME a.example.",
		"txt.example. 300 IN TXT \"hello\"",
		"big.example. 300 IN TXT \""+strings.Repeat("x", 250)+"\"",
		"big.example. 100 IN A 192.0.2.9",
	)
	for i := range 100 {
		// Enough records that the UDP answer to big.example does not fit.
		z.records["big.example."] = append(z.records["big.example."], &dns.A{
			Hdr: dns.RR_Header{Name: "big.example.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 100},
			A:   net.IPv4(198, 51, 100, byte(i)),
		})
	}
	z.noChase["far.example."] = true
	z.servfail["fail.example."] = true
	z.refused["refused.example."] = true
	z.drop["drop.example."] = true
	z.truncate["trunc.example."] = true
	z.records["trunc.example."] = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: "trunc.example.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: net.IPv4(192, 0, 2, 7)}}
	addr := startDNSServer(t, z)

	tests := []struct {
		name    string
		qname   string
		want    []string
		rcode   int
		ttl     uint32
		wantErr error
	}{
		{name: "a records", qname: "a.example", want: []string{"192.0.2.1", "192.0.2.2"}, ttl: 300},
		{name: "upper case", qname: "A.EXAMPLE.", want: []string{"192.0.2.1", "192.0.2.2"}, ttl: 300},
		{name: "cname chain", qname: "alias2.example", want: []string{"192.0.2.1", "192.0.2.2"}, ttl: 60},
		{name: "chain not chased by server", qname: "far.example", want: []string{"192.0.2.1", "192.0.2.2"}, ttl: 300},
		{name: "cname loop has no data", qname: "loop1.example", ttl: 300},
		{name: "nxdomain", qname: "nope.example", rcode: dns.RcodeNameError, ttl: 300},
		{name: "nodata", qname: "txt.example", ttl: 300},
		{name: "servfail", qname: "fail.example", wantErr: ErrDNSServerFailure},
		{name: "refused", qname: "refused.example", wantErr: ErrDNSServerFailure},
		{name: "timeout", qname: "drop.example", wantErr: ErrDNSTimeout},
		{name: "truncated then tcp", qname: "trunc.example", want: []string{"192.0.2.7"}, ttl: 30},
		{name: "large answer over tcp", qname: "big.example", ttl: 100},
	}
	t.Run("lookups", func(t *testing.T) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				dnsLookupCase(t, addr, tc.qname, tc.want, tc.rcode, tc.ttl, tc.wantErr, tc.name == "large answer over tcp")
			})
		}
	})
	if n := z.count(dns.TypeA, "big.example"); n != 2 {
		t.Errorf("big.example asked %d times, want 2 (udp truncated, then tcp)", n)
	}
	if z.count(dns.TypeA, "trunc.example") != 2 {
		t.Errorf("trunc.example asked %d times, want 2 (udp then tcp)", z.count(dns.TypeA, "trunc.example"))
	}
	if n := z.count(dns.TypeA, "fail.example"); n != 1 {
		t.Errorf("servfail asked %d times, want 1 (an answer is not retried on the same server)", n)
	}
	if n := z.count(dns.TypeA, "drop.example"); n != 2 {
		t.Errorf("timeout asked %d times, want 2 (one retry)", n)
	}
}

func dnsLookupCase(t *testing.T, addr, qname string, want []string, rcode int, ttl uint32, wantErr error, capped bool) {
	r := newDNSResolver([]string{addr}, time.Second, 1, nil)
	got := r.lookup(context.Background(), qname, dns.TypeA)
	if wantErr != nil {
		if !errors.Is(got.Err, wantErr) {
			t.Fatalf("err = %v, want %v", got.Err, wantErr)
		}
		return
	}
	if got.Err != nil {
		t.Fatalf("unexpected error %v", got.Err)
	}
	if capped {
		if len(got.Values) != dnsMaxValues {
			t.Fatalf("got %d values, want the cap of %d", len(got.Values), dnsMaxValues)
		}
		return
	}
	if strings.Join(got.Values, ",") != strings.Join(want, ",") || got.Rcode != rcode || got.TTL != ttl {
		t.Fatalf("got %v rcode %d ttl %d, want %v rcode %d ttl %d", got.Values, got.Rcode, got.TTL, want, rcode, ttl)
	}
}

func TestDNSServersInTurn(t *testing.T) {
	good := newDNSTestZone(t, "a.example. 300 IN A 192.0.2.1")
	bad := newDNSTestZone(t)
	bad.refused["a.example."] = true
	badAddr := startDNSServer(t, bad)
	goodAddr := startDNSServer(t, good)
	tests := []struct {
		name    string
		servers []string
	}{
		{"refused then good", []string{badAddr, goodAddr}},
		{"unreachable then good", []string{closedUDPAddr(t), goodAddr}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newDNSResolver(tc.servers, time.Second, 0, nil)
			got := r.lookup(context.Background(), "a.example", dns.TypeA)
			if got.Err != nil || len(got.Values) != 1 || got.Values[0] != "192.0.2.1" {
				t.Fatalf("got %+v, want 192.0.2.1 from the second server", got)
			}
		})
	}
}

func TestDNSBadAnswer(t *testing.T) {
	// A server that answers a different question (as a spoofer might).
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		m.Question[0].Name = "other.example."
		m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: "other.example.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.IPv4(192, 0, 2, 1)})
		w.WriteMsg(m)
	})
	addr := startDNSServer(t, h)
	r := newDNSResolver([]string{addr}, time.Second, 0, nil)
	got := r.lookup(context.Background(), "a.example", dns.TypeA)
	if !errors.Is(got.Err, ErrDNSBadAnswer) {
		t.Fatalf("got %+v, want ErrDNSBadAnswer", got)
	}
}
