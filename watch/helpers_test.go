package watch

import (
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/miekg/dns"
)

// hang is how long a test waits for something that must happen before it
// calls it a hang. Nothing depends on it otherwise.
const hang = 30 * time.Second

// zone is a DNS server's data: the crawler's addresses have PTR names
// under bot.lohisoft.com that resolve back to them; other addresses have
// no PTR (NXDOMAIN). Names can be held (the answer waits until released)
// or made to fail (SERVFAIL).
type zone struct {
	mu      sync.Mutex
	ptr     map[string]string // reverse name -> PTR target
	a       map[string]string // name -> address
	hold    map[string]chan struct{}
	fail    map[string]bool
	queries map[string]int
}

func newZone() *zone {
	return &zone{ptr: map[string]string{}, a: map[string]string{}, hold: map[string]chan struct{}{},
		fail: map[string]bool{}, queries: map[string]int{}}
}

// crawler makes addr a genuine crawler address named name.
func (z *zone) crawler(addr, name string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	rev, _ := dns.ReverseAddr(addr)
	z.ptr[rev] = dns.Fqdn(name)
	z.a[dns.Fqdn(name)] = addr
}

// holdAddr makes the PTR query of addr wait until the returned func is
// called.
func (z *zone) holdAddr(addr string) (release func()) {
	rev, _ := dns.ReverseAddr(addr)
	ch := make(chan struct{})
	z.mu.Lock()
	z.hold[rev] = ch
	z.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// failAddr makes the PTR query of addr answer SERVFAIL (or not).
func (z *zone) failAddr(addr string, on bool) {
	rev, _ := dns.ReverseAddr(addr)
	z.mu.Lock()
	z.fail[rev] = on
	z.mu.Unlock()
}

// count is how many queries for addr's PTR came.
func (z *zone) count(addr string) int {
	rev, _ := dns.ReverseAddr(addr)
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.queries[rev]
}

func (z *zone) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	if dnstest.AnswerRoot(w, r) {
		return
	}
	m := new(dns.Msg)
	m.SetReply(r)
	q := r.Question[0]
	name := strings.ToLower(q.Name)
	z.mu.Lock()
	z.queries[name]++
	hold := z.hold[name]
	fail := z.fail[name]
	ptr, okPTR := z.ptr[name]
	a, okA := z.a[name]
	z.mu.Unlock()
	if hold != nil {
		<-hold
	}
	switch {
	case fail:
		m.Rcode = dns.RcodeServerFailure
	case q.Qtype == dns.TypePTR && okPTR:
		m.Answer = append(m.Answer, &dns.PTR{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypePTR, Class: dns.ClassINET, Ttl: 300}, Ptr: ptr})
	case q.Qtype == dns.TypeA && okA:
		m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300}, A: netip.MustParseAddr(a).AsSlice()})
	case okA || okPTR:
	default:
		m.Rcode = dns.RcodeNameError
	}
	w.WriteMsg(m)
}

// serve starts a loopback DNS server for z.
func (z *zone) serve(t testing.TB) string { return dnstest.Serve(t, z) }

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// checkerFor is a VerifierChecker asking server, without retries or a
// second pass, so that a SERVFAIL is unverified at once.
// lohiProfile, lohiName and lohiTokens are the crawler the tests watch:
// LohiSoftBot.
var (
	lohiProfile, _ = crawler.Builtin("lohisoftbot")
	lohiName       = lohiProfile.Name
	lohiTokens     = lohiProfile.Tokens
)

func checkerFor(server string, list *verify.IPList, now func() time.Time) *VerifierChecker {
	return &VerifierChecker{Now: now, New: func() *verify.Verifier {
		return &verify.Verifier{Profile: lohiProfile, Servers: []string{server}, Timeout: hang, Retries: 0, RetryTimeout: -1, List: list}
	}}
}

// verdicts collects judgements.
type verdicts struct {
	ch chan Verdict
}

func newVerdicts() *verdicts { return &verdicts{ch: make(chan Verdict, 1024)} }

func (v *verdicts) on(x Verdict) { v.ch <- x }

func (v *verdicts) next(t *testing.T) Verdict {
	t.Helper()
	select {
	case x := <-v.ch:
		return x
	case <-time.After(hang):
		t.Fatal("no verdict came")
	}
	return Verdict{}
}
