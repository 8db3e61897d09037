// Package dnstest runs real DNS servers on the loopback interface for
// tests: miekg/dns servers on 127.0.0.1, UDP and TCP on one port, each
// test with its own handler, so that tests can run in parallel.
package dnstest

import (
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// Serve serves h on 127.0.0.1, UDP and TCP on one port, until the test
// ends, and returns "127.0.0.1:PORT".
func Serve(t testing.TB, h dns.Handler) string {
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

// Zone answers from zone-file lines as a recursive resolver would: the
// records of the name asked, CNAMEs followed within the zone, NXDOMAIN with
// an SOA for a name without records, and SERVFAIL for the names given to
// ServFail. Like any working resolver it knows the root zone's NS records.
// It counts the queries it gets.
type Zone struct {
	mu       sync.Mutex
	records  map[string][]dns.RR // by lower-case owner
	servfail map[string]bool
	queries  map[string]int // "TYPE name."
	// nxAll answers NXDOMAIN to everything (NewNXDomain).
	nxAll bool
}

// NewZone parses zone lines ("owner TTL IN TYPE data").
func NewZone(t testing.TB, lines ...string) *Zone {
	t.Helper()
	z := &Zone{records: map[string][]dns.RR{}, servfail: map[string]bool{}, queries: map[string]int{}}
	z.Add(t, ". 518400 IN NS a.root-servers.net.")
	for _, l := range lines {
		z.Add(t, l)
	}
	return z
}

// Add adds the record of one zone line.
func (z *Zone) Add(t testing.TB, line string) {
	t.Helper()
	rr, err := dns.NewRR(line)
	if err != nil {
		t.Fatalf("bad zone line %q: %v", line, err)
	}
	owner := strings.ToLower(rr.Header().Name)
	z.mu.Lock()
	z.records[owner] = append(z.records[owner], rr)
	z.mu.Unlock()
}

// PTR adds a PTR record of addr (an IP address) to name.
func (z *Zone) PTR(t testing.TB, addr, name string) {
	t.Helper()
	arpa, err := dns.ReverseAddr(addr)
	if err != nil {
		t.Fatal(err)
	}
	z.Add(t, arpa+" 3600 IN PTR "+dns.Fqdn(name))
}

// ServFail makes the server answer SERVFAIL about name.
func (z *Zone) ServFail(name string) {
	z.mu.Lock()
	z.servfail[strings.ToLower(dns.Fqdn(name))] = true
	z.mu.Unlock()
}

// Count returns how many queries of qtype about name came.
func (z *Zone) Count(qtype uint16, name string) int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.queries[dns.TypeToString[qtype]+" "+strings.ToLower(dns.Fqdn(name))]
}

// ServeDNS answers one query.
func (z *Zone) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	if len(r.Question) != 1 {
		dns.HandleFailed(w, r)
		return
	}
	q := r.Question[0]
	name := strings.ToLower(q.Name)
	m := new(dns.Msg)
	m.SetReply(r)
	m.RecursionAvailable = true
	z.mu.Lock()
	z.queries[dns.TypeToString[q.Qtype]+" "+name]++
	if z.nxAll {
		z.mu.Unlock()
		m.Rcode = dns.RcodeNameError
		w.WriteMsg(m)
		return
	}
	if z.servfail[name] {
		z.mu.Unlock()
		m.Rcode = dns.RcodeServerFailure
		w.WriteMsg(m)
		return
	}
	cur := name
	for range 10 {
		var cname *dns.CNAME
		found := false
		for _, rr := range z.records[cur] {
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
	}
	if len(m.Answer) == 0 {
		if len(z.records[cur]) == 0 {
			m.Rcode = dns.RcodeNameError
		}
		m.Ns = append(m.Ns, &dns.SOA{
			Hdr: dns.RR_Header{Name: "example.", Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 600},
			Ns:  "ns.example.", Mbox: "hostmaster.example.", Serial: 1, Refresh: 3600, Retry: 600, Expire: 86400, Minttl: 300,
		})
	}
	z.mu.Unlock()
	w.WriteMsg(m)
}

// NewNXDomain returns a server that answers NXDOMAIN to every query, the
// root zone's NS included, as a resolver that lies (a sandbox's, a captive
// portal's) does. It counts the queries it gets.
func NewNXDomain() *Zone {
	return &Zone{records: map[string][]dns.RR{}, servfail: map[string]bool{}, queries: map[string]int{}, nxAll: true}
}

// AnswerRoot answers a query for the root zone's NS records as every
// working resolver does, and reports whether r was one: a handler of
// made-up answers calls it first, so that its NXDOMAIN answers are
// trusted (a resolver that answers NXDOMAIN even for the root zone is
// taken for broken).
func AnswerRoot(w dns.ResponseWriter, r *dns.Msg) bool {
	if len(r.Question) != 1 || r.Question[0].Name != "." || r.Question[0].Qtype != dns.TypeNS {
		return false
	}
	m := new(dns.Msg)
	m.SetReply(r)
	m.RecursionAvailable = true
	m.Answer = append(m.Answer, &dns.NS{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: 518400}, Ns: "a.root-servers.net."})
	w.WriteMsg(m)
	return true
}
