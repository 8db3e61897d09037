package verify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/miekg/dns"
)

// Errors of DNS lookups. A lookup that fails with one of them "could not
// answer" in the sense of SPEC §3: it never makes an address spoofed.
var (
	// ErrDNSUnreachable means every configured resolver was found
	// unreachable during the run; later lookups fail at once with it.
	ErrDNSUnreachable = errors.New("dns resolver unreachable")
	// ErrDNSNoResolver means no resolver was configured.
	ErrDNSNoResolver = errors.New("no dns resolver configured")
	// ErrDNSServerFailure means the resolver answered SERVFAIL, REFUSED or
	// another error code.
	ErrDNSServerFailure = errors.New("dns server failure")
	// ErrDNSTimeout means no answer came in time.
	ErrDNSTimeout = errors.New("dns timeout")
	// ErrDNSBadAnswer means the answer did not match the question.
	ErrDNSBadAnswer = errors.New("dns answer does not match the question")
)

// DNS defaults and limits.
const (
	// DefaultDNSTimeout is the time one query may take when
	// Verifier.Timeout is zero.
	DefaultDNSTimeout = 2 * time.Second
	// DefaultDNSConcurrency is how many addresses are verified at once
	// when Verifier.Concurrency is zero.
	DefaultDNSConcurrency = 32
	// dnsMaxCNAME is the longest CNAME chain followed.
	dnsMaxCNAME = 8
	// dnsMaxValues is the most records kept from one answer.
	dnsMaxValues = 32
	// dnsUDPSize is the EDNS0 buffer size advertised (the DNS flag day
	// 2020 value: no IP fragmentation).
	dnsUDPSize = 1232
	// dnsDownFirst is how many network failures in a row (timeouts,
	// refused, no route), before any answer came, make a server count as
	// unreachable. dnsDownLater is the same once it has answered: high
	// enough that names whose own servers are slow (a spoofer's reverse
	// zone, say) do not take a working resolver down.
	dnsDownFirst = 3
	dnsDownLater = 64
)

// dnsLookup is the outcome of one lookup (one name and type, CNAMEs
// followed). Err is set when DNS could not answer; otherwise Rcode is
// dns.RcodeSuccess (Values may then be empty: no data) or
// dns.RcodeNameError.
type dnsLookup struct {
	Rcode  int
	Values []string // PTR names (presentation form) or addresses
	TTL    uint32   // how long the outcome may be kept; 0 for not at all
	Err    error
}

// dnsServer is one resolver address with its reachability state.
type dnsServer struct {
	addr     string
	everOK   atomic.Bool
	failures atomic.Int32
	down     atomic.Bool
	// downCtx is canceled when the server is marked down: queries in
	// flight to it give up at once.
	downCtx    context.Context
	markedDown context.CancelFunc
}

// dnsResolver sends queries to a list of servers, in turn, with retries and
// TCP fallback on truncation, and notices when the servers are unreachable.
type dnsResolver struct {
	servers []*dnsServer
	timeout time.Duration
	retries int
	udp     *dns.Client
	tcp     *dns.Client
	// warn is called once per server found unreachable.
	warn func(string)
}

func newDNSResolver(servers []string, timeout time.Duration, retries int, warn func(string)) *dnsResolver {
	if timeout <= 0 {
		timeout = DefaultDNSTimeout
	}
	if retries < 0 {
		retries = 0
	}
	r := &dnsResolver{
		timeout: timeout,
		retries: retries,
		udp:     &dns.Client{Net: "udp", Timeout: timeout, UDPSize: dnsUDPSize},
		tcp:     &dns.Client{Net: "tcp", Timeout: timeout},
		warn:    warn,
	}
	for _, s := range servers {
		ctx, cancel := context.WithCancel(context.Background())
		r.servers = append(r.servers, &dnsServer{addr: s, downCtx: ctx, markedDown: cancel})
	}
	return r
}

// allDown reports whether no server is left to ask.
func (r *dnsResolver) allDown() bool {
	for _, s := range r.servers {
		if !s.down.Load() {
			return false
		}
	}
	return true
}

// exchange asks the servers, in turn, the question (name, qtype) and
// returns the first NOERROR or NXDOMAIN answer. A server that answers with
// another code is not asked again for this question; one that does not
// answer is tried again up to r.retries times.
func (r *dnsResolver) exchange(ctx context.Context, name string, qtype uint16) (*dns.Msg, error) {
	if len(r.servers) == 0 {
		return nil, ErrDNSNoResolver
	}
	if r.allDown() {
		return nil, ErrDNSUnreachable
	}
	q := new(dns.Msg)
	q.SetQuestion(name, qtype)
	q.RecursionDesired = true
	q.SetEdns0(dnsUDPSize, false)

	var lastErr error
	answered := make([]bool, len(r.servers))
	for attempt := 0; attempt <= r.retries; attempt++ {
		asked := false
		for i, s := range r.servers {
			if answered[i] || s.down.Load() {
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			asked = true
			q.Id = dns.Id()
			resp, err := r.try(ctx, s, q)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				if s.down.Load() {
					lastErr = fmt.Errorf("%s: %w", s.addr, ErrDNSUnreachable)
					continue
				}
				if errors.Is(err, ErrDNSBadAnswer) {
					lastErr = fmt.Errorf("%s: %w", s.addr, err)
					continue
				}
				lastErr = fmt.Errorf("%s: %w", s.addr, dnsNetError(err, r.timeout))
				r.failed(s, lastErr)
				continue
			}
			r.succeeded(s)
			switch resp.Rcode {
			case dns.RcodeSuccess, dns.RcodeNameError:
				return resp, nil
			}
			answered[i] = true
			lastErr = fmt.Errorf("%s: %w: %s", s.addr, ErrDNSServerFailure, dnsRcodeName(resp.Rcode))
		}
		if !asked {
			break
		}
	}
	if lastErr == nil {
		lastErr = ErrDNSUnreachable
	}
	return nil, lastErr
}

// try sends q to one server over UDP, and again over TCP when the UDP
// answer is truncated.
func (r *dnsResolver) try(ctx context.Context, s *dnsServer, q *dns.Msg) (*dns.Msg, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	stop := context.AfterFunc(s.downCtx, cancel)
	defer stop()
	resp, err := dnsExchange(ctx, r.udp, q, s.addr)
	if err == nil && resp.Truncated {
		resp, err = dnsExchange(ctx, r.tcp, q, s.addr)
	}
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, context.DeadlineExceeded
		}
		return nil, err
	}
	if !dnsAnswers(q, resp) {
		return nil, ErrDNSBadAnswer
	}
	return resp, nil
}

// dnsExchange sends q to addr with c and reads the answer. Unlike
// dns.Client.ExchangeContext it gives up as soon as ctx is canceled, not
// only at its deadline.
func dnsExchange(ctx context.Context, c *dns.Client, q *dns.Msg, addr string) (*dns.Msg, error) {
	conn, err := c.DialContext(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	resp, _, err := c.ExchangeWithConnContext(ctx, q, conn)
	return resp, err
}

// dnsAnswers reports whether resp is a response to q.
func dnsAnswers(q, resp *dns.Msg) bool {
	if !resp.Response || resp.Id != q.Id || len(resp.Question) != 1 {
		return false
	}
	a, b := q.Question[0], resp.Question[0]
	return a.Qtype == b.Qtype && a.Qclass == b.Qclass && strings.EqualFold(a.Name, b.Name)
}

func (r *dnsResolver) succeeded(s *dnsServer) {
	s.everOK.Store(true)
	s.failures.Store(0)
}

// failed counts a network failure of s and marks it down after too many in
// a row.
func (r *dnsResolver) failed(s *dnsServer, err error) {
	n := s.failures.Add(1)
	limit := int32(dnsDownLater)
	if !s.everOK.Load() {
		limit = dnsDownFirst
	}
	if n < limit || !s.down.CompareAndSwap(false, true) {
		return
	}
	s.markedDown()
	if r.warn != nil {
		why := err.Error()
		why = strings.TrimPrefix(why, s.addr+": ")
		r.warn(fmt.Sprintf("dns: resolver %s unreachable (%s); the ip list decides", s.addr, why))
	}
}

// dnsNetError turns a network error into a short, stable message.
func dnsNetError(err error, timeout time.Duration) error {
	var ne net.Error
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("%w: no answer within %s", ErrDNSTimeout, timeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		return errors.New("connection refused")
	case errors.Is(err, syscall.ENETUNREACH):
		return errors.New("network is unreachable")
	case errors.Is(err, syscall.EHOSTUNREACH):
		return errors.New("no route to host")
	}
	return err
}

func dnsRcodeName(rcode int) string {
	if s, ok := dns.RcodeToString[rcode]; ok {
		return s
	}
	return fmt.Sprintf("RCODE%d", rcode)
}

// lookup resolves (name, qtype), following CNAMEs in the answer and, when
// the server did not include the whole chain, asking again for the target.
// A chain that loops or is longer than dnsMaxCNAME counts as an answer
// without data: the server did answer, and what it said is unusable.
func (r *dnsResolver) lookup(ctx context.Context, name string, qtype uint16) dnsLookup {
	cur := dns.Fqdn(name)
	seen := map[string]bool{strings.ToLower(cur): true}
	ttl := uint32(dnsMaxTTL / time.Second)
	for query := 0; query <= dnsMaxCNAME; query++ {
		resp, err := r.exchange(ctx, cur, qtype)
		if err != nil {
			return dnsLookup{Err: err}
		}
		for {
			values, next, t := dnsRecords(resp.Answer, cur, qtype)
			ttl = min(ttl, t)
			if len(values) > 0 {
				return dnsLookup{Rcode: dns.RcodeSuccess, Values: values, TTL: ttl}
			}
			if next == "" {
				break
			}
			cur = dns.Fqdn(next)
			if seen[strings.ToLower(cur)] || len(seen) > dnsMaxCNAME {
				return dnsLookup{Rcode: dns.RcodeSuccess, TTL: ttl}
			}
			seen[strings.ToLower(cur)] = true
		}
		if resp.Rcode == dns.RcodeNameError || strings.EqualFold(cur, resp.Question[0].Name) {
			// The name (or the end of its chain) has no data, or does not
			// exist: this answer is final.
			return dnsLookup{Rcode: resp.Rcode, TTL: min(ttl, dnsNegativeTTL(resp))}
		}
		// The answer stopped at a CNAME target without its records: ask
		// about the target.
	}
	return dnsLookup{Rcode: dns.RcodeSuccess, TTL: ttl}
}

// dnsRecords returns the records of type qtype owned by owner in answer
// (PTR names in presentation form, addresses as text, at most
// dnsMaxValues), else the target of owner's CNAME, with the least TTL of
// the records used (the maximum when none is).
func dnsRecords(answer []dns.RR, owner string, qtype uint16) (values []string, cname string, ttl uint32) {
	ttl = uint32(dnsMaxTTL / time.Second)
	var cnameTTL uint32
	for _, rr := range answer {
		h := rr.Header()
		if h.Class != dns.ClassINET || !strings.EqualFold(h.Name, owner) || len(values) >= dnsMaxValues {
			continue
		}
		switch v := rr.(type) {
		case *dns.PTR:
			if qtype == dns.TypePTR {
				values = append(values, v.Ptr)
				ttl = min(ttl, h.Ttl)
			}
		case *dns.A:
			if a, ok := netip.AddrFromSlice(v.A); ok && qtype == dns.TypeA {
				values = append(values, a.Unmap().String())
				ttl = min(ttl, h.Ttl)
			}
		case *dns.AAAA:
			if a, ok := netip.AddrFromSlice(v.AAAA); ok && qtype == dns.TypeAAAA {
				values = append(values, a.String())
				ttl = min(ttl, h.Ttl)
			}
		case *dns.CNAME:
			if cname == "" {
				cname, cnameTTL = v.Target, h.Ttl
			}
		}
	}
	if len(values) == 0 && cname != "" {
		ttl = min(ttl, cnameTTL)
	} else {
		cname = ""
	}
	return values, cname, ttl
}

// dnsNegativeTTL is how long a negative answer may be kept (RFC 2308 §5:
// the SOA's TTL or MINIMUM, whichever is less; not at all without a SOA),
// at most an hour.
func dnsNegativeTTL(resp *dns.Msg) uint32 {
	for _, rr := range resp.Ns {
		if soa, ok := rr.(*dns.SOA); ok {
			t := min(soa.Hdr.Ttl, soa.Minttl, uint32(dnsMaxNegativeTTL/time.Second))
			return t
		}
	}
	return 0
}

// dnsCall is one lookup in flight or done, shared by every address that
// needs it during a run.
type dnsCall struct {
	done chan struct{}
	res  dnsLookup
}

// dnsMemo resolves each (name, type) once per run: from the disk cache,
// or from the resolver (then written to the cache).
type dnsMemo struct {
	res   *dnsResolver
	cache *DNSCache
	mu    sync.Mutex
	calls map[string]*dnsCall
}

func dnsKey(name string, qtype uint16) string {
	return dns.TypeToString[qtype] + " " + dns.CanonicalName(name)
}

func (m *dnsMemo) lookup(ctx context.Context, name string, qtype uint16) dnsLookup {
	key := dnsKey(name, qtype)
	m.mu.Lock()
	if c, ok := m.calls[key]; ok {
		m.mu.Unlock()
		select {
		case <-c.done:
			return c.res
		case <-ctx.Done():
			return dnsLookup{Err: ctx.Err()}
		}
	}
	c := &dnsCall{done: make(chan struct{})}
	m.calls[key] = c
	m.mu.Unlock()

	if got, ok := m.cache.get(key); ok {
		c.res = got
	} else {
		c.res = m.res.lookup(ctx, name, qtype)
		if c.res.Err == nil {
			m.cache.put(key, c.res)
		}
	}
	close(c.done)
	return c.res
}
