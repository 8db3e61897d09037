package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/miekg/dns"
)

// TestDNSQueryWire checks the hand-packed query against what dns.Msg
// packs, and what arm changes: the id and the letter case, nothing else.
func TestDNSQueryWire(t *testing.T) {
	for _, name := range []string{".", "a.example.", "98.58.139.79.in-addr.arpa.", `a\.b.Example.`, "crawl-1.bot.lohisoft.com",
		"8.b.d.0.1.0.0.2.ip6.arpa."} {
		for _, qtype := range []uint16{dns.TypeA, dns.TypeAAAA, dns.TypePTR, dns.TypeNS} {
			m := new(dns.Msg)
			m.SetQuestion(dns.Fqdn(name), qtype)
			m.RecursionDesired = true
			m.SetEdns0(dnsUDPSize, false)
			m.Id = 0
			want, err := m.Pack()
			if err != nil {
				t.Fatal(err)
			}
			q, err := newDNSQuery(name, qtype, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(q.wire, want) {
				t.Fatalf("%s %s:\n got %x\nwant %x", name, dns.TypeToString[qtype], q.wire, want)
			}
			for _, fill := range []byte{0x00, 0xff, 0x5a} {
				q.rand = func(b []byte) {
					for i := range b {
						b[i] = fill
					}
				}
				q.arm()
				if q.id() != uint16(fill)<<8|uint16(fill) {
					t.Errorf("%s: id %#x after arm with %#x", name, q.id(), fill)
				}
				var back dns.Msg
				if err := back.Unpack(q.wire); err != nil {
					t.Fatalf("%s: armed query does not unpack: %v", name, err)
				}
				got := back.Question[0].Name
				if !strings.EqualFold(got, dns.Fqdn(name)) || back.Question[0].Qtype != qtype || back.IsEdns0() == nil {
					t.Fatalf("%s: armed query asks %q %d", name, got, back.Question[0].Qtype)
				}
				hasLetter := strings.ContainsAny(strings.ToLower(name), "abcdefghijklmnopqrstuvwxyz")
				switch fill {
				case 0x00:
					if got != strings.ToLower(got) || q.mixed {
						t.Errorf("%s: bits 0 gave %q (mixed %v), want all lower case", name, got, q.mixed)
					}
				case 0xff:
					if got != strings.ToUpper(got) || q.mixed != hasLetter {
						t.Errorf("%s: bits 1 gave %q (mixed %v), want all upper case", name, got, q.mixed)
					}
				}
			}
		}
	}
}

// TestDNSQueryLongName checks that names up to the limit of 255 octets
// on the wire are asked, and longer ones refused, whatever their form.
func TestDNSQueryLongName(t *testing.T) {
	label := strings.Repeat("a", 63)
	for _, tc := range []struct {
		name string
		wire int // octets on the wire
	}{
		{strings.Repeat(label+".", 3) + strings.Repeat("b", 61) + ".", 255},
		{strings.Repeat(label+".", 3) + strings.Repeat("b", 62) + ".", 256},
		{strings.Repeat(label+".", 3) + strings.Repeat("b", 63) + ".", 257},
		{strings.Repeat(label+".", 4) + strings.Repeat("c.", 20), 277},
		{strings.Repeat(label+".", 8), 513},
		{strings.Repeat(`\.`, 60) + ".example.", 70},
	} {
		q, err := newDNSQuery(tc.name, dns.TypeA, nil)
		if tc.wire <= 255 {
			if err != nil {
				t.Errorf("%d octets: %v", tc.wire, err)
				continue
			}
			var m dns.Msg
			if err := m.Unpack(q.wire); err != nil || !strings.EqualFold(m.Question[0].Name, tc.name) {
				t.Errorf("%d octets: asked %v (%v)", tc.wire, m.Question, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%d octets on the wire: asked", tc.wire)
		}
	}
}

// TestDNSQueryMatch checks which packets are taken for the answer to a
// query.
func TestDNSQueryMatch(t *testing.T) {
	q, err := newDNSQuery("a.Example.", dns.TypeA, func(b []byte) {
		b[0], b[1] = 0x12, 0x34
		for i := range b[2:] {
			b[2+i] = 0x0f // the first four bytes of each eight upper
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	q.arm()
	var sent dns.Msg
	if err := sent.Unpack(q.wire); err != nil {
		t.Fatal(err)
	}
	asked := sent.Question[0].Name
	if asked == strings.ToLower(asked) {
		t.Fatalf("armed name %q has no capital", asked)
	}
	reply := func(change func(m *dns.Msg)) []byte {
		m := new(dns.Msg)
		m.SetReply(&sent)
		m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: asked, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.IPv4(192, 0, 2, 1)})
		if change != nil {
			change(m)
		}
		b, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name          string
		p             []byte
		exact, folded bool
	}{
		{"the answer", reply(nil), true, true},
		{"another case", reply(func(m *dns.Msg) { m.Question[0].Name = strings.ToLower(asked) }), false, true},
		{"another id", reply(func(m *dns.Msg) { m.Id++ }), false, false},
		{"not a response", reply(func(m *dns.Msg) { m.Response = false }), false, false},
		{"another type", reply(func(m *dns.Msg) { m.Question[0].Qtype = dns.TypeAAAA }), false, false},
		{"another class", reply(func(m *dns.Msg) { m.Question[0].Qclass = dns.ClassCHAOS }), false, false},
		{"another name", reply(func(m *dns.Msg) { m.Question[0].Name = "b.example." }), false, false},
		{"a longer name", reply(func(m *dns.Msg) { m.Question[0].Name = "a.example.org." }), false, false},
		{"two questions", reply(func(m *dns.Msg) { m.Question = append(m.Question, m.Question[0]) }), false, false},
		{"no question", reply(func(m *dns.Msg) { m.Question = nil }), false, false},
		{"cut short", reply(nil)[:14], false, false},
		{"empty", nil, false, false},
	} {
		exact, folded := q.match(tc.p)
		if exact != tc.exact || folded != tc.folded {
			t.Errorf("%s: exact %v folded %v, want %v %v", tc.name, exact, folded, tc.exact, tc.folded)
		}
	}
	// '@' and '`' differ in the case bit but are not letters.
	r, _ := newDNSQuery("@.example.", dns.TypeA, nil)
	r.arm()
	p := slices.Clone(r.wire)
	p[2] |= 0x80
	p[13] = '`'
	if _, folded := r.match(p); folded {
		t.Error("'`' was taken for '@'")
	}
}

// dnsPortLog is a zone that notes the source port of every UDP query.
type dnsPortLog struct {
	*dnsTestZone
	mu    sync.Mutex
	ports map[int]int                            // queries per source port
	byQ   map[string][]int                       // source ports of the queries about a name
	hold  chan struct{}                          // when set, queries wait for it to close
	in    chan int                               // source port of each query held, as it comes
	after func(w dns.ResponseWriter, r *dns.Msg) // after the answer (set with setAfter)
}

// setAfter sets what the server does after each answer.
func (l *dnsPortLog) setAfter(f func(w dns.ResponseWriter, r *dns.Msg)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.after = f
}

func newDNSPortLog(t *testing.T, lines ...string) (*dnsPortLog, string) {
	l := &dnsPortLog{dnsTestZone: newDNSTestZone(t, lines...), ports: map[int]int{}, byQ: map[string][]int{}}
	return l, dnstest.Serve(t, l)
}

func (l *dnsPortLog) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	l.mu.Lock()
	after := l.after
	l.mu.Unlock()
	if ua, ok := w.RemoteAddr().(*net.UDPAddr); ok && len(r.Question) == 1 {
		name := strings.ToLower(r.Question[0].Name)
		l.mu.Lock()
		l.ports[ua.Port]++
		l.byQ[name] = append(l.byQ[name], ua.Port)
		hold, in := l.hold, l.in
		l.mu.Unlock()
		if in != nil {
			in <- ua.Port
		}
		if hold != nil {
			<-hold
		}
	}
	l.dnsTestZone.ServeDNS(w, r)
	if after != nil {
		after(w, r)
	}
}

func (l *dnsPortLog) portsOf(name string) []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.byQ[strings.ToLower(dns.Fqdn(name))])
}

// TestDNSSocketReuse checks that queries one after another share UDP
// sockets, each for at most dnsSocketMaxUses queries, and that a socket
// whose query timed out is not used again.
func TestDNSSocketReuse(t *testing.T) {
	var lines []string
	for i := range 300 {
		lines = append(lines, fmt.Sprintf("n%d.example. 300 IN A 192.0.2.%d", i, i%250))
	}
	lines = append(lines, "late.example. 300 IN A 192.0.2.99")
	l, addr := newDNSPortLog(t, lines...)
	l.DropOnce("late.example.")
	dnsSocketsFor(addr).maxAge = time.Hour // reuse decided by use, not by the clock
	r := dnsTestResolver(l.dnsTestZone, 1, addr)
	for i := range 300 {
		got := r.lookup(context.Background(), fmt.Sprintf("n%d.example", i), dns.TypeA)
		if got.Err != nil || !slices.Equal(got.Values, []string{fmt.Sprintf("192.0.2.%d", i%250)}) {
			t.Fatalf("n%d: %+v", i, got)
		}
	}
	l.mu.Lock()
	ports := len(l.ports)
	for p, n := range l.ports {
		if n > dnsSocketMaxUses {
			t.Errorf("port %d served %d queries, more than %d", p, n, dnsSocketMaxUses)
		}
	}
	l.mu.Unlock()
	if want := (300 + dnsSocketMaxUses - 1) / dnsSocketMaxUses; ports != want {
		t.Errorf("300 queries in turn went out from %d ports, want %d", ports, want)
	}
	// The first query about late.example goes unanswered and times out;
	// its retry must not come from the same socket (a late answer would
	// wait there).
	got := r.lookup(context.Background(), "late.example", dns.TypeA)
	if got.Err != nil || !slices.Equal(got.Values, []string{"192.0.2.99"}) {
		t.Fatalf("late.example: %+v", got)
	}
	if p := l.portsOf("late.example"); len(p) != 2 || p[0] == p[1] {
		t.Errorf("late.example asked from ports %v, want two different", p)
	}
	if r.ignored.Load() != 0 {
		t.Errorf("%d packets ignored", r.ignored.Load())
	}
}

// TestDNSSocketsConcurrent checks that queries in flight at once never
// share a socket, each gets its own answer, and the sockets serve the
// next round.
func TestDNSSocketsConcurrent(t *testing.T) {
	const n, rounds = 16, 4
	var lines []string
	for i := range n * rounds {
		lines = append(lines, fmt.Sprintf("c%d.example. 300 IN A 198.51.100.%d", i, i))
	}
	l, addr := newDNSPortLog(t, lines...)
	dnsSocketsFor(addr).maxAge = time.Hour
	r := dnsTestResolver(l.dnsTestZone, 0, addr)
	seen := map[int]bool{}
	for round := range rounds {
		hold := make(chan struct{})
		l.mu.Lock()
		l.hold, l.in = hold, make(chan int, n)
		in := l.in
		l.mu.Unlock()
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			k := round*n + i
			wg.Go(func() {
				got := r.lookup(context.Background(), fmt.Sprintf("c%d.example", k), dns.TypeA)
				if want := fmt.Sprintf("198.51.100.%d", k); got.Err != nil || !slices.Equal(got.Values, []string{want}) {
					errs[i] = fmt.Errorf("c%d: got %+v, want %s", k, got, want)
				}
			})
		}
		// Every query of the round is in flight at once.
		inFlight := map[int]bool{}
		for range n {
			inFlight[<-in] = true
		}
		close(hold)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if len(inFlight) != n {
			t.Fatalf("round %d: %d queries in flight at once went out from %d ports", round, n, len(inFlight))
		}
		for p := range inFlight {
			seen[p] = true
		}
	}
	if len(seen) != n {
		t.Errorf("%d rounds of %d queries at once used %d ports, want the same %d", rounds, n, len(seen), n)
	}
	if r.ignored.Load() != 0 {
		t.Errorf("%d packets ignored", r.ignored.Load())
	}
}

// dnsCaseServer answers from a zone and, as told, lower-cases the
// question of its answers, or sends a lower-cased copy ahead of each
// answer.
type dnsCaseServer struct {
	*dnsTestZone
	lower, forge atomic.Bool
	// keep: a question answered in another case is not taken for
	// dropped (the resolver is expected to take the answer).
	keep atomic.Bool
}

func (c *dnsCaseServer) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	rw := &dnsCaseWriter{ResponseWriter: w, s: c}
	c.dnsTestZone.ServeDNS(rw, r)
	if c.lower.Load() && !c.keep.Load() && len(r.Question) == 1 && r.Question[0].Name != strings.ToLower(r.Question[0].Name) {
		// The resolver times out on this event, not on the clock: it
		// ignores the answer sent.
		c.drop(r.Question[0].Name)
	}
}

type dnsCaseWriter struct {
	dns.ResponseWriter
	s *dnsCaseServer
}

func (w *dnsCaseWriter) WriteMsg(m *dns.Msg) error {
	if len(m.Question) == 1 && (w.s.lower.Load() || w.s.forge.Load()) {
		low := m.Copy()
		low.Question[0].Name = strings.ToLower(low.Question[0].Name)
		if w.s.lower.Load() {
			return w.ResponseWriter.WriteMsg(low)
		}
		low.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: low.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300}, A: net.IPv4(203, 0, 113, 66)}}
		w.ResponseWriter.WriteMsg(low)
	}
	return w.ResponseWriter.WriteMsg(m)
}

// TestDNSLetterCase checks 0x20: a resolver that echoes the case of
// questions has answers in another case ignored; one that lower-cases
// them is noticed at once and answered as before; one that stops echoing
// is noticed after dnsCaseRelearn answers in another case, all ignored.
func TestDNSLetterCase(t *testing.T) {
	upper := func(b []byte) {
		dnsRandom(b[:2])
		for i := range b[2:] {
			b[2+i] = 0xff
		}
	}
	lines := []string{"a.example. 300 IN A 192.0.2.1", "b.example. 300 IN A 192.0.2.2"}
	for i := range dnsCaseRelearn + 1 {
		lines = append(lines, fmt.Sprintf("r%d.example. 300 IN A 192.0.2.%d", i, 10+i))
	}

	t.Run("echoes: forged case ignored", func(t *testing.T) {
		c := &dnsCaseServer{dnsTestZone: newDNSTestZone(t, lines...)}
		r := dnsTestResolver(c.dnsTestZone, 0, dnstest.Serve(t, c))
		r.rand = upper
		if got := r.lookup(context.Background(), "a.example", dns.TypeA); got.Err != nil {
			t.Fatal(got.Err)
		}
		if e := r.servers[0].echo.Load(); e != dnsEchoExact {
			t.Fatalf("echo %d after an exact echo", e)
		}
		c.forge.Store(true)
		got := r.lookup(context.Background(), "b.example", dns.TypeA)
		if got.Err != nil || !slices.Equal(got.Values, []string{"192.0.2.2"}) || r.ignored.Load() != 1 {
			t.Fatalf("got %+v with %d ignored; want the real answer, the lower-cased one ignored", got, r.ignored.Load())
		}
	})

	t.Run("lower-cases: matched without case", func(t *testing.T) {
		c := &dnsCaseServer{dnsTestZone: newDNSTestZone(t, lines...)}
		c.lower.Store(true)
		r := newDNSResolver([]string{dnstest.Serve(t, c)}, dnsTestHang, 0, nil)
		r.rand = upper
		for _, n := range []string{"a.example", "b.example"} {
			if got := r.lookup(context.Background(), n, dns.TypeA); got.Err != nil || len(got.Values) != 1 {
				t.Fatalf("%s: %+v", n, got)
			}
		}
		if e := r.servers[0].echo.Load(); e != dnsEchoFolded || r.ignored.Load() != 0 {
			t.Fatalf("echo %d, %d ignored; want the resolver taken for one that lower-cases", e, r.ignored.Load())
		}
	})

	t.Run("stops echoing", func(t *testing.T) {
		c := &dnsCaseServer{dnsTestZone: newDNSTestZone(t, lines...)}
		var warnings []string
		var mu sync.Mutex
		r := dnsTestResolver(c.dnsTestZone, 0, dnstest.Serve(t, c))
		r.warn = func(s string) { mu.Lock(); warnings = append(warnings, s); mu.Unlock() }
		r.rand = upper
		if got := r.lookup(context.Background(), "a.example", dns.TypeA); got.Err != nil {
			t.Fatal(got.Err)
		}
		// Each query times out once its answer in another case was
		// read and ignored.
		var want atomic.Int64
		r.after = func(name string, d time.Duration, f func()) func() bool {
			return c.after(name, d, func() {
				for r.ignored.Load() < want.Load() {
					time.Sleep(time.Millisecond)
				}
				f()
			})
		}
		c.lower.Store(true)
		for i := range dnsCaseRelearn {
			want.Store(int64(i + 1))
			got := r.lookup(context.Background(), fmt.Sprintf("r%d.example", i), dns.TypeA)
			if !errors.Is(got.Err, ErrDNSBadAnswer) {
				t.Fatalf("answer %d in another case: %+v, want it ignored", i, got)
			}
		}
		// Now answers in another case are taken: the query must not time
		// out on the server's drop.
		c.keep.Store(true)
		got := r.lookup(context.Background(), fmt.Sprintf("r%d.example", dnsCaseRelearn), dns.TypeA)
		if got.Err != nil || len(got.Values) != 1 {
			t.Fatalf("after %d answers in another case: %+v, want the answer taken", dnsCaseRelearn, got)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(warnings) != 1 || !strings.Contains(warnings[0], "no longer echoes the letter case") {
			t.Errorf("warnings %q", warnings)
		}
	})
}

// dnsForgeLog is a dnsPortLog that, while forge is set, sends ahead of
// each UDP answer the packets a spoofer racing the resolver would:
// another id (with another address), another question, a query, a
// packet cut short.
type dnsForgeLog struct {
	*dnsPortLog
	forge  atomic.Bool
	forged atomic.Int64
}

func (f *dnsForgeLog) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	if _, udp := w.RemoteAddr().(*net.UDPAddr); udp && f.forge.Load() && len(r.Question) == 1 {
		q := r.Question[0]
		real := new(dns.Msg)
		real.SetReply(r)
		real.Answer = append(real.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.IPv4(203, 0, 113, 66)})
		wrongID := real.Copy()
		wrongID.Id = r.Id + 1
		wrongQuestion := real.Copy()
		wrongQuestion.Question[0].Name = "other.example."
		notAnAnswer := real.Copy()
		notAnAnswer.Response = false
		for _, m := range []*dns.Msg{wrongID, wrongQuestion, notAnAnswer} {
			w.WriteMsg(m)
		}
		b, _ := real.Pack()
		w.Write(b[:7])
		f.forged.Add(4)
	}
	f.dnsPortLog.ServeDNS(w, r)
}

// TestDNSSocketForgedRetired checks packets with another id or question
// on a reused socket: they are ignored, the real answer is taken, and the
// socket that received them is not used again (its port may be known).
func TestDNSSocketForgedRetired(t *testing.T) {
	l, _ := newDNSPortLog(t, "a1.example. 300 IN A 192.0.2.1", "a2.example. 300 IN A 192.0.2.2",
		"a3.example. 300 IN A 192.0.2.3", "a4.example. 300 IN A 192.0.2.4", "a5.example. 300 IN A 192.0.2.5")
	f := &dnsForgeLog{dnsPortLog: l}
	addr := dnstest.Serve(t, f)
	dnsSocketsFor(addr).maxAge = time.Hour
	r := dnsTestResolver(l.dnsTestZone, 0, addr)
	ask := func(i int) int {
		t.Helper()
		name := fmt.Sprintf("a%d.example", i)
		got := r.lookup(context.Background(), name, dns.TypeA)
		if want := fmt.Sprintf("192.0.2.%d", i); got.Err != nil || !slices.Equal(got.Values, []string{want}) {
			t.Fatalf("%s: got %+v, want %s", name, got, want)
		}
		p := l.portsOf(name)
		if len(p) != 1 {
			t.Fatalf("%s asked from ports %v, want one query", name, p)
		}
		return p[0]
	}
	p1, p2 := ask(1), ask(2)
	if p1 != p2 {
		t.Fatalf("clean answers: ports %d then %d, want the socket reused", p1, p2)
	}
	f.forge.Store(true)
	p3 := ask(3)
	if p3 != p1 {
		t.Fatalf("port %d, want the idle socket %d", p3, p1)
	}
	if n := r.ignored.Load(); n != 4 || f.forged.Load() != 4 {
		t.Fatalf("%d packets ignored, %d forged; want the 4 forged ignored", n, f.forged.Load())
	}
	f.forge.Store(false)
	p4 := ask(4)
	if p4 == p3 {
		t.Errorf("port %d used again after it received forged packets", p4)
	}
	if p5 := ask(5); p5 != p4 {
		t.Errorf("ports %d then %d: a new socket with clean answers is reused", p4, p5)
	}
}

// TestDNSSocketsConcurrentMixed runs many lookups at once, some truncated
// over UDP (asked again over TCP), all with forged packets ahead of each
// UDP answer: every lookup gets its own answer, never a forged one nor
// another's, and every forged packet is ignored.
func TestDNSSocketsConcurrentMixed(t *testing.T) {
	const workers, each = 8, 12
	var lines []string
	for i := range workers * each {
		lines = append(lines, fmt.Sprintf("m%d.example. 300 IN A 198.51.%d.%d", i, i/200, i%200))
	}
	l, _ := newDNSPortLog(t, lines...)
	truncated := 0
	for i := range workers * each {
		if i%3 == 0 {
			l.Truncate(fmt.Sprintf("m%d.example.", i))
			truncated++
		}
	}
	f := &dnsForgeLog{dnsPortLog: l}
	f.forge.Store(true)
	addr := dnstest.Serve(t, f)
	r := dnsTestResolver(l.dnsTestZone, 0, addr)
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for k := range each {
				i := w*each + k
				got := r.lookup(context.Background(), fmt.Sprintf("m%d.example", i), dns.TypeA)
				if want := fmt.Sprintf("198.51.%d.%d", i/200, i%200); got.Err != nil || !slices.Equal(got.Values, []string{want}) {
					errs <- fmt.Errorf("m%d: got %+v, want %s", i, got, want)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := l.TCPCount(); n != truncated {
		t.Errorf("%d queries over tcp, want one for each of the %d truncated", n, truncated)
	}
	if n := r.ignored.Load(); n != f.forged.Load() || n != 4*workers*each {
		t.Errorf("%d packets ignored, %d forged; want all %d", n, f.forged.Load(), 4*workers*each)
	}
}

// TestDNSTruncatedSocketKept checks that a truncated UDP answer, taken and
// followed over TCP, leaves its socket fit for the next query.
func TestDNSTruncatedSocketKept(t *testing.T) {
	l, addr := newDNSPortLog(t, "t.example. 300 IN A 192.0.2.7", "u.example. 300 IN A 192.0.2.8")
	l.Truncate("t.example.")
	dnsSocketsFor(addr).maxAge = time.Hour
	r := dnsTestResolver(l.dnsTestZone, 0, addr)
	for _, q := range []struct{ name, want string }{{"t.example", "192.0.2.7"}, {"u.example", "192.0.2.8"}} {
		got := r.lookup(context.Background(), q.name, dns.TypeA)
		if got.Err != nil || !slices.Equal(got.Values, []string{q.want}) {
			t.Fatalf("%s: got %+v, want %s", q.name, got, q.want)
		}
	}
	if n := l.TCPCount(); n != 1 {
		t.Errorf("%d queries over tcp, want 1", n)
	}
	if a, b := l.portsOf("t.example"), l.portsOf("u.example"); len(a) != 1 || len(b) != 1 || a[0] != b[0] {
		t.Errorf("udp ports %v then %v, want the socket of the truncated answer reused", a, b)
	}
}

// TestReverseName checks the PTR names asked against miekg/dns's
// ReverseAddr, for fixed and random IPv4 and IPv6 addresses.
func TestReverseName(t *testing.T) {
	addrs := []netip.Addr{netip.MustParseAddr("0.0.0.0"), netip.MustParseAddr("255.255.255.255"), netip.MustParseAddr("79.139.58.98"),
		netip.MustParseAddr("10.0.100.9"), netip.MustParseAddr("::"), netip.MustParseAddr("2001:db8::abcd:ef01"),
		netip.MustParseAddr("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b [16]byte
		for i := range b {
			b[i] = byte(rnd.Uint32())
		}
		addrs = append(addrs, netip.AddrFrom16(b), netip.AddrFrom4([4]byte(b[:4])))
	}
	for _, a := range addrs {
		want, err := dns.ReverseAddr(a.String())
		if err != nil {
			t.Fatal(err)
		}
		if got := reverseName(a); got != want {
			t.Fatalf("%s: %q, want %q", a, got, want)
		}
	}
	if got, want := reverseName(netip.MustParseAddr("::ffff:192.0.2.1")), "1.2.0.192.in-addr.arpa."; got != want {
		t.Errorf("mapped: %q, want %q", got, want)
	}
}

// FuzzDNSQuery packs arbitrary names (PTR answers are written by
// strangers, and their names are asked about): never a panic, and a name
// asked is packed as dns.Msg packs it.
func FuzzDNSQuery(f *testing.F) {
	for _, s := range []string{"a.example.", ".", `a\.b.example`, strings.Repeat("a.", 130), `\255\000.x`, "crawl-1.bot.lohisoft.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		q, err := newDNSQuery(name, dns.TypePTR, nil)
		if err != nil {
			return
		}
		m := new(dns.Msg)
		m.SetQuestion(dns.Fqdn(name), dns.TypePTR)
		m.RecursionDesired = true
		m.SetEdns0(dnsUDPSize, false)
		m.Id = 0
		want, err := m.Pack()
		if err != nil {
			t.Fatalf("%q: asked, but dns.Msg does not pack it: %v", name, err)
		}
		if !bytes.Equal(q.wire, want) {
			t.Fatalf("%q:\n got %x\nwant %x", name, q.wire, want)
		}
		q.arm()
		if exact, _ := q.match(append([]byte{q.wire[0], q.wire[1], q.wire[2] | 0x80}, q.wire[3:]...)); !exact {
			t.Fatalf("%q: its own echo does not match", name)
		}
	})
}
