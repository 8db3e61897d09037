package verify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/miekg/dns"
)

// dnsTestHang is the query timeout of tests: far beyond the time any
// answer takes, it only catches a hang. Queries that must time out do so
// on an event instead (dnsTestTimeouts).
const dnsTestHang = 30 * time.Second

// dnsTestTimeouts decides when test queries time out: a query about a
// name times out once a server has let a query about that name go
// unanswered, never on the wall clock (the real timer stays as a guard
// against a hang).
type dnsTestTimeouts struct {
	mu      sync.Mutex
	dropped map[string]chan struct{}
	// asked records the timeout of every query but probes, in the order
	// sent.
	asked []time.Duration
}

func (tt *dnsTestTimeouts) ch(name string) chan struct{} {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if tt.dropped == nil {
		tt.dropped = map[string]chan struct{}{}
	}
	name = strings.ToLower(dns.Fqdn(name))
	c, ok := tt.dropped[name]
	if !ok {
		c = make(chan struct{}, 1<<16)
		tt.dropped[name] = c
	}
	return c
}

// drop says a server left a query about name unanswered.
func (tt *dnsTestTimeouts) drop(name string) { tt.ch(name) <- struct{}{} }

// after is the resolver's timer: f runs when a query about name was
// dropped (or, should that never come, after d).
func (tt *dnsTestTimeouts) after(name string, d time.Duration, f func()) func() bool {
	if name != "." { // probes aside
		tt.mu.Lock()
		tt.asked = append(tt.asked, d)
		tt.mu.Unlock()
	}
	ch := tt.ch(name)
	stop := make(chan struct{})
	var once sync.Once
	go func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ch:
			f()
		case <-t.C:
			f()
		case <-stop:
		}
	}()
	return func() bool {
		once.Do(func() { close(stop) })
		return true
	}
}

// timeouts returns the timeouts queries were sent with, in order.
func (tt *dnsTestTimeouts) timeouts() []time.Duration {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return slices.Clone(tt.asked)
}

// dnsTestZone is dnstest's zone whose dropped queries time out at once
// for the resolvers of the test (see dnsTestTimeouts).
type dnsTestZone struct {
	*dnstest.Zone
	dnsTestTimeouts
}

// newDNSTestZone parses zone lines ("owner TTL IN TYPE data").
func newDNSTestZone(t testing.TB, lines ...string) *dnsTestZone {
	t.Helper()
	z := &dnsTestZone{Zone: dnstest.NewZone(t, lines...)}
	z.OnDrop = z.dnsTestTimeouts.drop
	return z
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

// dnsTestResolver is a resolver for tests: queries time out when z
// drops them, never on the clock.
func dnsTestResolver(z *dnsTestZone, retries int, servers ...string) *dnsResolver {
	r := newDNSResolver(servers, dnsTestHang, retries, nil)
	r.after = z.after
	return r
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
	bigWant := []string{"192.0.2.9"}
	for i := range 100 {
		// Enough records that the UDP answer to big.example does not fit.
		z.AddRR(&dns.A{
			Hdr: dns.RR_Header{Name: "big.example.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 100},
			A:   net.IPv4(198, 51, 100, byte(i)),
		})
		bigWant = append(bigWant, fmt.Sprintf("198.51.100.%d", i))
	}
	z.NoChase("far.example.")
	z.ServFail("fail.example.")
	z.Refuse("refused.example.")
	z.Drop("drop.example.")
	z.Truncate("trunc.example.")
	z.AddRR(&dns.A{Hdr: dns.RR_Header{Name: "trunc.example.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: net.IPv4(192, 0, 2, 7)})
	addr := dnstest.Serve(t, z)

	tests := []struct {
		name     string
		qname    string
		want     []string
		rcode    int
		ttl      uint32
		wantErr  error
		wantKind string
	}{
		{name: "a records", qname: "a.example", want: []string{"192.0.2.1", "192.0.2.2"}, ttl: 300},
		{name: "upper case", qname: "A.EXAMPLE.", want: []string{"192.0.2.1", "192.0.2.2"}, ttl: 300},
		{name: "cname chain", qname: "alias2.example", want: []string{"192.0.2.1", "192.0.2.2"}, ttl: 60},
		{name: "chain not chased by server", qname: "far.example", want: []string{"192.0.2.1", "192.0.2.2"}, ttl: 300},
		{name: "cname loop has no data", qname: "loop1.example", ttl: 300},
		{name: "nxdomain", qname: "nope.example", rcode: dns.RcodeNameError, ttl: 300},
		{name: "nodata", qname: "txt.example", ttl: 300},
		{name: "servfail", qname: "fail.example", wantErr: ErrDNSServerFailure, wantKind: DNSFailureServFail},
		{name: "refused", qname: "refused.example", wantErr: ErrDNSServerFailure, wantKind: DNSFailureRefused},
		{name: "timeout", qname: "drop.example", wantErr: ErrDNSTimeout, wantKind: DNSFailureTimeout},
		{name: "truncated then tcp", qname: "trunc.example", want: []string{"192.0.2.7"}, ttl: 30},
		{name: "large answer over tcp, read whole", qname: "big.example", want: bigWant, ttl: 100},
	}
	t.Run("lookups", func(t *testing.T) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				r := dnsTestResolver(z, 1, addr)
				got := r.lookup(context.Background(), tc.qname, dns.TypeA)
				if tc.wantErr != nil {
					if !errors.Is(got.Err, tc.wantErr) || dnsFailureKind(got.Err) != tc.wantKind {
						t.Fatalf("err = %v (%s), want %v (%s)", got.Err, dnsFailureKind(got.Err), tc.wantErr, tc.wantKind)
					}
					return
				}
				if got.Err != nil {
					t.Fatalf("unexpected error %v", got.Err)
				}
				if !slices.Equal(got.Values, tc.want) || got.Rcode != tc.rcode || got.TTL != tc.ttl {
					t.Fatalf("got %v rcode %d ttl %d, want %v rcode %d ttl %d", got.Values, got.Rcode, got.TTL, tc.want, tc.rcode, tc.ttl)
				}
			})
		}
	})
	if n := z.Count(dns.TypeA, "big.example"); n != 2 {
		t.Errorf("big.example asked %d times, want 2 (udp truncated, then tcp)", n)
	}
	if z.Count(dns.TypeA, "trunc.example") != 2 {
		t.Errorf("trunc.example asked %d times, want 2 (udp then tcp)", z.Count(dns.TypeA, "trunc.example"))
	}
	if n := z.Count(dns.TypeA, "fail.example"); n != 1 {
		t.Errorf("servfail asked %d times, want 1 (an answer is not retried on the same server)", n)
	}
	if n := z.Count(dns.TypeA, "drop.example"); n != 2 {
		t.Errorf("timeout asked %d times, want 2 (one retry)", n)
	}
}

// TestDNSNegativeTTL checks how long negative answers are kept: RFC 2308
// with a SOA, a floor without one.
func TestDNSNegativeTTL(t *testing.T) {
	for _, tc := range []struct {
		name  string
		noSOA bool
		want  uint32
	}{
		{"with a soa: min of its ttl and minimum", false, 300},
		{"without a soa: the floor", true, uint32(dnsNoSOANegativeTTL / time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := newDNSTestZone(t, "txt.example. 300 IN TXT \"x\"")
			z.NoSOA(tc.noSOA)
			r := dnsTestResolver(z, 0, dnstest.Serve(t, z))
			for _, q := range []string{"nope.example", "txt.example"} {
				got := r.lookup(context.Background(), q, dns.TypeA)
				if got.Err != nil || len(got.Values) != 0 || got.TTL != tc.want {
					t.Errorf("%s: got %+v, want no data for %d s", q, got, tc.want)
				}
			}
		})
	}
}

func TestDNSServersInTurn(t *testing.T) {
	good := newDNSTestZone(t, "a.example. 300 IN A 192.0.2.1")
	bad := newDNSTestZone(t)
	bad.Refuse("a.example.")
	badAddr := dnstest.Serve(t, bad)
	goodAddr := dnstest.Serve(t, good)
	tests := []struct {
		name    string
		servers []string
	}{
		{"refused then good", []string{badAddr, goodAddr}},
		{"unreachable then good", []string{closedUDPAddr(t), goodAddr}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := dnsTestResolver(good, 0, tc.servers...)
			got := r.lookup(context.Background(), "a.example", dns.TypeA)
			if got.Err != nil || len(got.Values) != 1 || got.Values[0] != "192.0.2.1" {
				t.Fatalf("got %+v, want 192.0.2.1 from the second server", got)
			}
		})
	}
}

// dnsForger answers each query with packets that are not its answer
// (another id, another question, not a DNS message), and then, unless
// onlyForged, with the real answer, all on the same socket.
type dnsForger struct {
	dnsTestTimeouts
	onlyForged bool
	sent       atomic.Int64
}

func (f *dnsForger) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	q := r.Question[0]
	real := new(dns.Msg)
	real.SetReply(r)
	real.Answer = append(real.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.IPv4(192, 0, 2, 1)})

	wrongID := real.Copy()
	wrongID.Id = r.Id + 1
	wrongID.Answer[0].(*dns.A).A = net.IPv4(203, 0, 113, 66)
	wrongQuestion := real.Copy()
	wrongQuestion.Question[0].Name = "other.example."
	wrongQuestion.Answer[0].Header().Name = "other.example."
	wrongQuestion.Answer[0].(*dns.A).A = net.IPv4(203, 0, 113, 67)
	notAnAnswer := real.Copy()
	notAnAnswer.Response = false
	for _, m := range []*dns.Msg{wrongID, wrongQuestion, notAnAnswer} {
		w.WriteMsg(m)
		f.sent.Add(1)
	}
	b, _ := real.Pack()
	w.Write(b[:7]) // cut short: not a DNS message
	f.sent.Add(1)
	if f.onlyForged {
		f.drop(q.Name)
		return
	}
	w.WriteMsg(real)
}

// TestDNSForgedAnswersIgnored sends, ahead of each real answer, packets a
// spoofer racing the resolver would: they are ignored and the real answer
// is waited for.
func TestDNSForgedAnswersIgnored(t *testing.T) {
	f := &dnsForger{}
	addr := dnstest.Serve(t, f)
	r := newDNSResolver([]string{addr}, dnsTestHang, 0, nil)
	r.after = f.after
	got := r.lookup(context.Background(), "a.example", dns.TypeA)
	if got.Err != nil || !slices.Equal(got.Values, []string{"192.0.2.1"}) {
		t.Fatalf("got %+v, want the real answer 192.0.2.1", got)
	}
	if f.sent.Load() != 4 || r.ignored.Load() != 4 {
		t.Fatalf("the server sent %d forged packets, %d were ignored; want 4", f.sent.Load(), r.ignored.Load())
	}
}

func TestDNSBadAnswer(t *testing.T) {
	// A server (or a spoofer ahead of a silent one) that only sends
	// answers to other questions.
	f := &dnsForger{onlyForged: true}
	addr := dnstest.Serve(t, f)
	r := newDNSResolver([]string{addr}, dnsTestHang, 0, nil)
	// The query times out once its four forged packets were read (and
	// ignored).
	r.after = func(name string, d time.Duration, fn func()) func() bool {
		return f.after(name, d, func() {
			for r.ignored.Load() < 4 {
				time.Sleep(time.Millisecond)
			}
			fn()
		})
	}
	got := r.lookup(context.Background(), "a.example", dns.TypeA)
	if !errors.Is(got.Err, ErrDNSBadAnswer) || dnsFailureKind(got.Err) != DNSFailureForged {
		t.Fatalf("got %+v (%s), want ErrDNSBadAnswer, kind forged", got, dnsFailureKind(got.Err))
	}
	if !strings.Contains(got.Err.Error(), "4 answers with another id or question were ignored") || r.ignored.Load() != 4 {
		t.Errorf("error %q does not say what was ignored (%d)", got.Err, r.ignored.Load())
	}
}

// TestDNSUnreachable checks when a server counts as unreachable: failures
// in a row with no answer since; for a server that has answered, a failed
// probe too.
func TestDNSUnreachable(t *testing.T) {
	names := func(prefix string, n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("%s%d.example.", prefix, i))
		}
		return out
	}
	lookupAll := func(r *dnsResolver, qnames []string) (errs int) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, n := range qnames {
			wg.Go(func() {
				if got := r.lookup(context.Background(), n, dns.TypeA); got.Err != nil {
					mu.Lock()
					errs++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return errs
	}

	t.Run("never answered", func(t *testing.T) {
		z := newDNSTestZone(t)
		z.Silence(true)
		addr := dnstest.Serve(t, z)
		var warnings []string
		var mu sync.Mutex
		r := dnsTestResolver(z, 2, addr)
		r.warn = func(s string) { mu.Lock(); warnings = append(warnings, s); mu.Unlock() }
		qnames := names("n", 50)
		if errs := lookupAll(r, qnames[:4]); errs != 4 {
			t.Fatalf("%d errors: want 4", errs)
		}
		// The probe sent at the first failure may end after the lookups
		// do: wait for it to take the server down.
		for deadline := time.Now().Add(30 * time.Second); !r.allDown(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the server was not marked down after its failures and a failed probe")
			}
		}
		// Counted by name: a retry of the failed lookups may still reach
		// the server after they returned, but none is for this name.
		got := r.lookup(context.Background(), qnames[10], dns.TypeA)
		if sent := z.Count(dns.TypeA, qnames[10]); !errors.Is(got.Err, ErrDNSUnreachable) || dnsFailureKind(got.Err) != DNSFailureUnreachable || sent != 0 {
			t.Fatalf("after: %v, %d queries for %s; want ErrDNSUnreachable at once", got.Err, sent, qnames[10])
		}
		if n := z.Count(dns.TypeNS, "."); n != 1 {
			t.Errorf("the server was probed %d times, want once", n)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(warnings) != 1 || !strings.Contains(warnings[0], "resolver "+addr+" unreachable (dns timeout") {
			t.Errorf("warnings %q, want one", warnings)
		}
	})

	t.Run("slow names are not a dead server", func(t *testing.T) {
		z := newDNSTestZone(t, "a.example. 300 IN A 192.0.2.1")
		slow := names("slow", 40)
		for _, n := range slow {
			z.Drop(n)
		}
		addr := dnstest.Serve(t, z)
		var warnings atomic.Int64
		r := dnsTestResolver(z, 1, addr)
		r.warn = func(string) { warnings.Add(1) }
		if got := r.lookup(context.Background(), "a.example", dns.TypeA); got.Err != nil {
			t.Fatal(got.Err)
		}
		// 40 names whose own servers never answer, all at once, after
		// the server answered: every one of them fails, the server stays.
		if errs := lookupAll(r, slow); errs != len(slow) {
			t.Fatalf("%d of %d slow names failed", errs, len(slow))
		}
		if r.allDown() || warnings.Load() != 0 {
			t.Fatalf("down %v, %d warnings: a working server was taken for dead", r.allDown(), warnings.Load())
		}
		// The probe runs on its own: wait for it to reach the server.
		for deadline := time.Now().Add(30 * time.Second); z.Count(dns.TypeNS, ".") == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the server was never probed")
			}
		}
		if got := r.lookup(context.Background(), "a.example", dns.TypeA); got.Err != nil {
			t.Fatalf("after the slow names: %v", got.Err)
		}
	})

	t.Run("answered, then went silent", func(t *testing.T) {
		z := newDNSTestZone(t, "a.example. 300 IN A 192.0.2.1")
		addr := dnstest.Serve(t, z)
		var warnings []string
		var mu sync.Mutex
		r := dnsTestResolver(z, 0, addr)
		r.warn = func(s string) { mu.Lock(); warnings = append(warnings, s); mu.Unlock() }
		if got := r.lookup(context.Background(), "a.example", dns.TypeA); got.Err != nil {
			t.Fatal(got.Err)
		}
		z.Silence(true)
		// Sequentially: each failure comes after the one before, so the
		// server is found dead after exactly dnsDownAfter failures and a
		// failed probe.
		for i, n := range names("late", dnsDownAfter) {
			if got := r.lookup(context.Background(), n, dns.TypeA); got.Err == nil {
				t.Fatalf("lookup %d answered", i)
			}
		}
		// The probe runs on its own: wait for its outcome.
		for !r.allDown() {
			select {
			case <-r.servers[0].downCtx.Done():
			case <-time.After(dnsTestHang):
				t.Fatal("the silent server was never marked down")
			}
		}
		if z.Count(dns.TypeNS, ".") != 1 {
			t.Errorf("probed %d times, want once", z.Count(dns.TypeNS, "."))
		}
		mu.Lock()
		defer mu.Unlock()
		if len(warnings) != 1 || !strings.Contains(warnings[0], addr+" unreachable") {
			t.Errorf("warnings %q, want one", warnings)
		}
	})

	t.Run("failures sent before an answer do not count", func(t *testing.T) {
		z := newDNSTestZone(t)
		r := dnsTestResolver(z, 0, "127.0.0.1:1")
		s := r.servers[0]
		seqs := []uint64{s.sent(), s.sent(), s.sent()}
		s.answered()
		for _, seq := range seqs {
			r.failed(context.Background(), s, seq, ErrDNSTimeout)
		}
		if s.down.Load() || s.streak != 0 {
			t.Fatalf("down %v, streak %d: stale failures counted", s.down.Load(), s.streak)
		}
	})
}
