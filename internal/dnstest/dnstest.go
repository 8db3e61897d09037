// Package dnstest runs real DNS servers on the loopback interface for
// tests: miekg/dns servers on 127.0.0.1, UDP and TCP on one port, each
// test with its own handler, so that tests can run in parallel.
package dnstest

import (
	"maps"
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
// an SOA for a name without records (a CNAME chain that ends nowhere too),
// "." for a query of the root's NS records (a resolver's probe), and a UDP
// answer cut to the size the query allows, with TC set. It misbehaves on
// purpose for the names given to ServFail, Refuse, Drop, DropOnce,
// Truncate and NoChase, and for every name while silenced. It counts the
// queries it gets, over UDP and TCP, and those over TCP.
type Zone struct {
	// OnDrop, when set before the first query, is called with the name
	// (lower case, with the final dot) of every query the zone leaves
	// unanswered: a test's resolver can time out on that event rather
	// than on the clock.
	OnDrop func(name string)

	mu      sync.Mutex
	records map[string][]dns.RR // by lower-case owner
	behave  map[string]behaviour
	noSOA   bool
	silent  bool
	lie     bool
	// denyRoot answers NXDOMAIN for the root's NS records while
	// answering the zone's own names; tcpOnly truncates every UDP answer.
	denyRoot bool
	tcpOnly  bool
	queries  map[string]int // "TYPE name."
	tcp      int
}

// behaviour is how the zone misbehaves for one name.
type behaviour struct {
	servfail, refused, drop, dropOnce, truncate, noChase bool
}

// NewZone parses zone lines ("owner TTL IN TYPE data").
func NewZone(t testing.TB, lines ...string) *Zone {
	t.Helper()
	z := &Zone{records: map[string][]dns.RR{}, behave: map[string]behaviour{}, queries: map[string]int{}}
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
	z.AddRR(rr)
}

// AddRR adds a record.
func (z *Zone) AddRR(rr dns.RR) {
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

// set changes the behaviour for name.
func (z *Zone) set(name string, f func(b *behaviour)) {
	name = strings.ToLower(dns.Fqdn(name))
	z.mu.Lock()
	b := z.behave[name]
	f(&b)
	z.behave[name] = b
	z.mu.Unlock()
}

// ServFail makes the zone answer SERVFAIL about name.
func (z *Zone) ServFail(name string) { z.set(name, func(b *behaviour) { b.servfail = true }) }

// Refuse makes the zone answer REFUSED about name.
func (z *Zone) Refuse(name string) { z.set(name, func(b *behaviour) { b.refused = true }) }

// Drop makes the zone leave every query about name unanswered.
func (z *Zone) Drop(name string) { z.set(name, func(b *behaviour) { b.drop = true }) }

// DropOnce makes the zone leave the first query of each type about name
// unanswered, and answer the next ones.
func (z *Zone) DropOnce(name string) { z.set(name, func(b *behaviour) { b.dropOnce = true }) }

// Truncate makes the zone answer queries about name over UDP with an
// empty truncated answer (TC set), so that the resolver asks again over
// TCP, where it answers.
func (z *Zone) Truncate(name string) { z.set(name, func(b *behaviour) { b.truncate = true }) }

// NoChase makes the zone answer name's CNAME without following it, as a
// resolver that leaves the chase to its client.
func (z *Zone) NoChase(name string) { z.set(name, func(b *behaviour) { b.noChase = true }) }

// Heal makes the zone answer queries about name as it should again,
// undoing ServFail, Refuse, Drop, DropOnce, Truncate and NoChase.
func (z *Zone) Heal(name string) { z.set(name, func(b *behaviour) { *b = behaviour{} }) }

// NoSOA leaves the SOA out of negative answers (on) or puts it back.
func (z *Zone) NoSOA(on bool) {
	z.mu.Lock()
	z.noSOA = on
	z.mu.Unlock()
}

// Silence makes the zone leave every query unanswered from now on (on),
// or answer again.
func (z *Zone) Silence(on bool) {
	z.mu.Lock()
	z.silent = on
	z.mu.Unlock()
}

// Lie makes the zone answer NXDOMAIN to every query from now on (on),
// the root's NS records included, as a resolver that lies (a sandbox's,
// a captive portal's) does; or answer again.
func (z *Zone) Lie(on bool) {
	z.mu.Lock()
	z.lie = on
	z.mu.Unlock()
}

// DenyRoot makes the zone answer NXDOMAIN for the root zone's NS records
// (on) while it keeps answering its own names, records and NXDOMAIN alike:
// a sandbox's or a split-horizon resolver that knows a few names and
// denies the rest, the root included.
func (z *Zone) DenyRoot(on bool) {
	z.mu.Lock()
	z.denyRoot = on
	z.mu.Unlock()
}

// TCPOnly makes the zone answer every UDP query with an empty truncated
// answer (on), so that every answer a resolver uses comes over TCP.
func (z *Zone) TCPOnly(on bool) {
	z.mu.Lock()
	z.tcpOnly = on
	z.mu.Unlock()
}

// Count returns how many queries of qtype about name came.
func (z *Zone) Count(qtype uint16, name string) int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.queries[dns.TypeToString[qtype]+" "+strings.ToLower(dns.Fqdn(name))]
}

// Queries returns how many queries came, keyed by type and name as
// "A crawler1.example." (a copy).
func (z *Zone) Queries() map[string]int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return maps.Clone(z.queries)
}

// Total returns how many queries came.
func (z *Zone) Total() int {
	z.mu.Lock()
	defer z.mu.Unlock()
	n := 0
	for _, c := range z.queries {
		n += c
	}
	return n
}

// TCPCount returns how many queries came over TCP.
func (z *Zone) TCPCount() int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.tcp
}

// ServeDNS answers one query.
func (z *Zone) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	if len(r.Question) != 1 {
		dns.HandleFailed(w, r)
		return
	}
	q := r.Question[0]
	name := strings.ToLower(q.Name)
	isTCP := w.RemoteAddr().Network() == "tcp"
	m := new(dns.Msg)
	m.SetReply(r)
	m.RecursionAvailable = true
	m.Compress = true

	z.mu.Lock()
	key := dns.TypeToString[q.Qtype] + " " + name
	z.queries[key]++
	if isTCP {
		z.tcp++
	}
	b := z.behave[name]
	drop := z.silent || b.drop || b.dropOnce && z.queries[key] == 1
	if z.lie {
		b, drop = behaviour{}, false
	}
	if z.tcpOnly {
		b.truncate = true
	}
	switch {
	case z.lie, z.denyRoot && q.Qtype == dns.TypeNS && name == "." && !(b.truncate && !isTCP):
		m.Rcode = dns.RcodeNameError
	case !drop && !b.servfail && !b.refused && !(b.truncate && !isTCP):
		z.answer(m, q, name, b)
	}
	z.mu.Unlock()
	switch {
	case drop:
		if z.OnDrop != nil {
			z.OnDrop(name)
		}
		return
	case b.servfail:
		m.Rcode = dns.RcodeServerFailure
		w.WriteMsg(m)
		return
	case b.refused:
		m.Rcode = dns.RcodeRefused
		w.WriteMsg(m)
		return
	case b.truncate && !isTCP:
		m.Truncated = true
		w.WriteMsg(m)
		return
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

// answer fills m with the zone's answer to q about name; z.mu is held.
func (z *Zone) answer(m *dns.Msg, q dns.Question, name string, b behaviour) {
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
		if b.noChase {
			break
		}
	}
	if q.Qtype == dns.TypeNS && name == "." {
		m.Answer = append(m.Answer, &dns.NS{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: 518400}, Ns: "a.root-servers.net."})
	}
	if len(m.Answer) == 0 || m.Answer[len(m.Answer)-1].Header().Rrtype == dns.TypeCNAME && !b.noChase {
		if len(z.records[cur]) == 0 {
			m.Rcode = dns.RcodeNameError
		}
		if !z.noSOA {
			m.Ns = append(m.Ns, &dns.SOA{
				Hdr: dns.RR_Header{Name: "example.", Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 600},
				Ns:  "ns.example.", Mbox: "hostmaster.example.", Serial: 1, Refresh: 3600, Retry: 600, Expire: 86400, Minttl: 300,
			})
		}
	}
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
