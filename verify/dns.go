package verify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
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
	// ErrDNSBadAnswer means only answers that did not match the question
	// (another id, another question, not a DNS message) came: forged
	// packets, or a broken server.
	ErrDNSBadAnswer = errors.New("dns answer does not match the question")
	// ErrDNSBrokenResolver means the resolver gave a negative answer
	// (NXDOMAIN, or no data) and could not answer the root zone's NS
	// records with data either: it says "no" to what it does not know, so
	// none of its negative answers is trusted. Its positive answers still
	// are: they are evidence, whatever it denies.
	ErrDNSBrokenResolver = errors.New("dns resolver broken")
)

// Why DNS could not answer for an address, as Result.DNSFailure says it.
const (
	// DNSFailureTimeout: no answer came in time, retries included.
	DNSFailureTimeout = "timeout"
	// DNSFailureServFail: the resolver answered SERVFAIL (typically: the
	// name's own servers did not answer it).
	DNSFailureServFail = "servfail"
	// DNSFailureRefused: the resolver answered REFUSED.
	DNSFailureRefused = "refused"
	// DNSFailureForged: only answers that did not match the question came
	// (another id or question, or not a DNS message at all).
	DNSFailureForged = "forged"
	// DNSFailureUnreachable: the resolver could not be reached (connection
	// refused, no route), or was found unreachable during the run.
	DNSFailureUnreachable = "unreachable"
	// DNSFailureBrokenResolver: the resolver denied a name (NXDOMAIN or no
	// data) and answers so even for the root zone's NS records: its
	// negative answers (no PTR, no address) are not trusted. It is still
	// asked, and what it does answer (a PTR name, an address) counts.
	DNSFailureBrokenResolver = "broken-resolver"
	// DNSFailureNoResolver: no resolver was configured.
	DNSFailureNoResolver = "no-resolver"
	// DNSFailureTooManyNames: the PTR answer held more names under the
	// crawler's suffixes than are checked, and none of those checked passed:
	// the set looked at was not the whole answer, so it proves nothing.
	DNSFailureTooManyNames = "too-many-names"
	// DNSFailureCanceled: the run was canceled before DNS answered.
	DNSFailureCanceled = "canceled"
	// DNSFailureOther: any other error (an unusual response code, say).
	DNSFailureOther = "error"
)

// DNS defaults and limits.
const (
	// DefaultDNSTimeout is the time one query may take when
	// Verifier.Timeout is zero.
	DefaultDNSTimeout = 2 * time.Second
	// DefaultDNSConcurrency is how many addresses are verified at once
	// when Verifier.Concurrency is zero. Each address needs a PTR lookup
	// and then a forward one: against a resolver that answers in 100 ms,
	// 128 at once verify about 640 addresses a second. It stays below the
	// 150 queries in flight that dnsmasq, a common local resolver, accepts
	// by default.
	DefaultDNSConcurrency = 128
	// dnsMaxCNAME is the longest CNAME chain followed.
	dnsMaxCNAME = 8
	// dnsMaxValues is the most records one DNS message can carry (65,535
	// bytes, less the header, over the smallest record: a compressed
	// owner and ten bytes of type, class, TTL and length, and one byte of
	// data). Answers are read whole: this bounds them, and cache entries
	// claiming more are corrupt.
	dnsMaxValues = (dns.MaxMsgSize - 12) / 13
	// dnsUDPSize is the EDNS0 buffer size advertised (the DNS flag day
	// 2020 value: no IP fragmentation).
	dnsUDPSize = 1232
	// dnsDownAfter is how many queries to one server must fail in a row
	// (timeouts, connection refused, no route), each sent after the
	// server's latest answer, before the server counts as unreachable. It
	// must also fail a probe, sent at the first such failure, for a name
	// every resolver can answer at once (the root's NS records), within
	// half the query timeout: many slow reverse zones at once (a
	// spoofer's block of addresses) do not take a working resolver down.
	dnsDownAfter = 3
	// dnsRetryFactor is how much longer than the first a query may take
	// in the second pass over unverified addresses, when
	// Verifier.RetryTimeout is zero.
	dnsRetryFactor = 3
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
	// Server is the resolver (HOST:PORT) that gave the answer, "" when
	// none did.
	Server string
	// ans is the lookup as evidence, set by dnsMemo.
	ans *DNSAnswer
}

// dnsServer is one resolver address with its reachability state, shared
// by every pass of a run.
type dnsServer struct {
	addr string
	mu   sync.Mutex
	// answers counts the responses the server sent (any response code).
	answers uint64
	// streak counts failed queries in a row that were sent after the
	// latest answer.
	streak int
	// probed says a probe was sent after the latest answer; probeFailed
	// that it failed.
	probed, probeFailed bool
	down                atomic.Bool
	// sanity is what the check of s's negative answers found (see
	// trust); check is the check in flight, nil when none is.
	sanity dnsSanity
	check  *dnsCheck
	// downCtx is canceled when the server is marked down: queries in
	// flight to it give up at once.
	downCtx    context.Context
	markedDown context.CancelFunc
	// sockets are the UDP sockets to it kept for reuse; echo says
	// whether it echoes the letter case of questions (dnsEchoUnknown,
	// dnsEchoExact, dnsEchoFolded), caseMisses how many answers in a
	// row came in another case since it last echoed one exactly.
	sockets    *dnsSockets
	echo       atomic.Int32
	caseMisses atomic.Int32
}

// dnsAfterFunc arranges for f to be called once d has passed for a query
// about name, unless stop is called first. Tests replace it to decide
// when a query times out.
type dnsAfterFunc func(name string, d time.Duration, f func()) (stop func() bool)

func dnsAfter(_ string, d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// dnsResolver sends queries to a list of servers, in turn, with retries and
// TCP fallback on truncation, and notices when the servers are unreachable.
type dnsResolver struct {
	servers []*dnsServer
	timeout time.Duration
	retries int
	after   dnsAfterFunc
	// ignored counts the packets that were not an answer to their query
	// (forged, or from a broken server), shared by every pass.
	ignored *atomic.Int64
	// warn is called once per server found unreachable.
	warn func(string)
	// keep are the FCrDNS suffixes (FQDNs) of the crawlers verified: PTR
	// answers are cut down to the names fcrdnsKeepNames keeps for them.
	keep []string
	// rand fills a query's id and letter case; nil means crypto/rand.
	rand func([]byte)
	// onQuery, when set, is told of every query sent (Verifier.OnQuery).
	onQuery func(DNSQuery)
}

// DNSQuery is one query sent to a resolver, as Verifier.OnQuery is told
// of it: when it was sent, how long it took, and its error when no answer
// came (a timeout, a network error, answers that did not match); an
// answer of any response code is no error.
type DNSQuery struct {
	Server   string
	At       time.Time
	Duration time.Duration
	Err      error
}

func newDNSResolver(servers []string, timeout time.Duration, retries int, warn func(string)) *dnsResolver {
	if timeout <= 0 {
		timeout = DefaultDNSTimeout
	}
	if retries < 0 {
		retries = 0
	}
	r := &dnsResolver{timeout: timeout, retries: retries, after: dnsAfter, warn: warn, ignored: new(atomic.Int64)}
	for _, s := range servers {
		ctx, cancel := context.WithCancel(context.Background())
		r.servers = append(r.servers, &dnsServer{addr: s, downCtx: ctx, markedDown: cancel, sockets: dnsSocketsFor(s)})
	}
	return r
}

// withTimeout returns a resolver that asks the same servers, sharing their
// state, with another timeout per query.
func (r *dnsResolver) withTimeout(d time.Duration) *dnsResolver {
	c := *r
	c.timeout = d
	return &c
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

// downErr is why no server is left to ask.
func (r *dnsResolver) downErr() error { return ErrDNSUnreachable }

// exchange asks the servers, in turn, the question (name, qtype) and
// returns the first NOERROR or NXDOMAIN answer. A server that answers with
// another code is not asked again for this question; one that does not
// answer is tried again up to r.retries times.
func (r *dnsResolver) exchange(ctx context.Context, name string, qtype uint16) (*dns.Msg, string, error) {
	resp, s, err := r.exchangeServer(ctx, name, qtype)
	if err != nil {
		return nil, "", err
	}
	return resp, s.addr, nil
}

// exchangeServer is exchange, returning the server that answered.
func (r *dnsResolver) exchangeServer(ctx context.Context, name string, qtype uint16) (*dns.Msg, *dnsServer, error) {
	if len(r.servers) == 0 {
		return nil, nil, ErrDNSNoResolver
	}
	if r.allDown() {
		return nil, nil, r.downErr()
	}
	q, err := newDNSQuery(name, qtype, r.rand)
	if err != nil {
		return nil, nil, err
	}

	var lastErr error
	answered := make([]bool, len(r.servers))
	for attempt := 0; attempt <= r.retries; attempt++ {
		asked := false
		for i, s := range r.servers {
			if answered[i] || s.down.Load() {
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			asked = true
			q.arm()
			resp, err := r.try(ctx, s, q)
			if err != nil {
				if ctx.Err() != nil {
					return nil, nil, ctx.Err()
				}
				lastErr = fmt.Errorf("%s: %w", s.addr, err)
				continue
			}
			switch resp.Rcode {
			case dns.RcodeSuccess, dns.RcodeNameError:
				if !dnsNegative(resp) {
					return resp, s, nil
				}
				// A negative answer makes an address spoofed: it counts
				// only from a resolver that answers the root zone. A
				// positive one (above) counts from any resolver: the
				// sanity check never holds it up nor takes it back.
				if err := r.trust(ctx, s); err != nil {
					if ctx.Err() != nil {
						return nil, nil, ctx.Err()
					}
					answered[i] = true
					lastErr = err
					continue
				}
				return resp, s, nil
			}
			answered[i] = true
			lastErr = &dnsRcodeError{server: s.addr, rcode: resp.Rcode}
		}
		if !asked {
			break
		}
	}
	if lastErr == nil {
		lastErr = r.downErr()
	}
	return nil, nil, lastErr
}

// try sends q to one server (UDP, then TCP on truncation) and keeps the
// server's reachability state: any answer shows it alive; a timeout or a
// network error counts towards finding it unreachable.
func (r *dnsResolver) try(ctx context.Context, s *dnsServer, q *dnsQuery) (*dns.Msg, error) {
	if s.down.Load() {
		return nil, s.downErr()
	}
	seq := s.sent()
	start := time.Now()
	resp, err := r.send(ctx, s, q)
	if r.onQuery != nil && ctx.Err() == nil {
		r.onQuery(DNSQuery{Server: s.addr, At: start, Duration: time.Since(start), Err: err})
	}
	switch {
	case err == nil:
		s.answered()
	case ctx.Err() != nil, errors.Is(err, ErrDNSUnreachable):
	case errors.Is(err, ErrDNSTimeout), errors.Is(err, ErrDNSBadAnswer) && !dnsIsTCPMismatch(err), dnsIsNetFailure(err):
		r.failed(ctx, s, seq, err)
	}
	return resp, err
}

// errDNSTryTimeout is the cause of a query's context when its time ran
// out.
var errDNSTryTimeout = errors.New("dns query timed out")

// dnsTCPMismatch is a TCP answer that does not match its question: the
// server itself sent it.
type dnsTCPMismatch struct{}

func (dnsTCPMismatch) Error() string        { return ErrDNSBadAnswer.Error() + " (over tcp)" }
func (dnsTCPMismatch) Is(target error) bool { return target == ErrDNSBadAnswer }

func dnsIsTCPMismatch(err error) bool {
	var m dnsTCPMismatch
	return errors.As(err, &m)
}

// send sends q to s over UDP, and again over TCP when the UDP answer is
// truncated, within r.timeout. Answers that do not match q are ignored
// (over UDP anyone can send them) and the real one waited for.
func (r *dnsResolver) send(ctx context.Context, s *dnsServer, q *dnsQuery) (*dns.Msg, error) {
	a := &dnsAbort{}
	stopTimer := r.after(q.name, r.timeout, func() { a.abort(errDNSTryTimeout) })
	defer stopTimer()
	stopDown := context.AfterFunc(s.downCtx, func() { a.abort(ErrDNSUnreachable) })
	defer stopDown()
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { a.abort(context.Cause(ctx)) })
		defer stop()
	}

	resp, ignored, err := r.exchangeUDP(a, s, q)
	if err == nil && resp.Truncated {
		resp, err = exchangeTCP(ctx, a, s, q)
	}
	if err == nil {
		return resp, nil
	}
	switch cause := a.why(); {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case cause == errDNSTryTimeout && ignored > 0:
		return nil, fmt.Errorf("%w: %d answers with another id or question were ignored, and no real one came within %s", ErrDNSBadAnswer, ignored, r.timeout)
	case cause == errDNSTryTimeout:
		return nil, fmt.Errorf("%w: no answer within %s", ErrDNSTimeout, r.timeout)
	case cause == ErrDNSUnreachable:
		return nil, s.downErr()
	}
	return nil, dnsNetError(err, r.timeout)
}

// dnsAbort ends a query before its answer: its time ran out, its server
// was found unreachable, or its context ended. The connection in use is
// given a read deadline in the past, which ends a read waiting on it.
type dnsAbort struct {
	mu     sync.Mutex
	cause  error
	conn   net.Conn
	cancel context.CancelFunc
}

// abort ends the query for cause, unless it was ended already.
func (a *dnsAbort) abort(cause error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cause != nil {
		return
	}
	a.cause = cause
	if a.conn != nil {
		a.conn.SetDeadline(aLongTimeAgo)
	}
	if a.cancel != nil {
		a.cancel()
	}
}

// why is the cause the query was ended for, nil if it was not.
func (a *dnsAbort) why() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cause
}

// attach makes c the connection an abort ends (and cancel the function it
// calls), or returns the cause when the query was ended already.
func (a *dnsAbort) attach(c net.Conn, cancel context.CancelFunc) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cause != nil {
		return a.cause
	}
	a.conn, a.cancel = c, cancel
	return nil
}

// detach lets go of the connection, and reports whether the query was
// ended meanwhile (its deadline may then have been touched).
func (a *dnsAbort) detach() (ended bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.conn, a.cancel = nil, nil
	return a.cause != nil
}

// downErr is why s, marked down, is not asked.
func (s *dnsServer) downErr() error { return ErrDNSUnreachable }

// sent returns the number of answers s has sent so far, to be given back
// to failed when the query sent now fails.
func (s *dnsServer) sent() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.answers
}

// answered notes that s sent an answer: it is alive.
func (s *dnsServer) answered() {
	s.mu.Lock()
	s.answers++
	s.streak = 0
	s.probed, s.probeFailed = false, false
	s.mu.Unlock()
}

// failed counts a failed query to s, sent when s had sent seq answers. A
// failure of a query sent before s's latest answer says nothing (the
// server was answering meanwhile). The first failure that counts sends a
// probe; after dnsDownAfter failures in a row and a failed probe, the
// server is marked down.
func (r *dnsResolver) failed(ctx context.Context, s *dnsServer, seq uint64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down.Load() || seq != s.answers {
		return
	}
	s.streak++
	switch {
	case !s.probed:
		s.probed = true
		go r.probe(ctx, s, seq, err)
	case s.streak >= dnsDownAfter && s.probeFailed:
		r.markDown(s, err)
	}
}

// probe asks s, sent seq answers before, for the root's NS records, which
// every working resolver has at hand, within half the query timeout. An
// answer of any kind shows s alive; no answer, with dnsDownAfter failures
// in a row, marks it down.
func (r *dnsResolver) probe(ctx context.Context, s *dnsServer, seq uint64, why error) {
	q, err := newDNSQuery(".", dns.TypeNS, r.rand)
	if err == nil {
		q.arm()
		_, err = r.withTimeout(r.timeout/2).send(ctx, s, q)
	}
	if err == nil {
		s.answered()
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ctx.Err() != nil || s.down.Load() || seq != s.answers {
		return
	}
	s.probeFailed = true
	if s.streak >= dnsDownAfter {
		r.markDown(s, why)
	}
}

// markDown marks s unreachable, ends the queries in flight to it and says
// so once. s.mu is held.
func (r *dnsResolver) markDown(s *dnsServer, err error) {
	if s.down.Load() {
		return
	}
	if r.warn != nil {
		r.warn(fmt.Sprintf("dns: resolver %s unreachable (%s); the ip list decides", s.addr, err))
	}
	s.down.Store(true)
	s.markedDown()
}

// dnsSanity is what is known of a server's negative answers.
type dnsSanity int

const (
	dnsSanityUnknown dnsSanity = iota
	dnsSanityGood              // it answered the root zone's NS with data
	dnsSanityBroken            // it did not: it says "no" to everything
)

// dnsCheck is a sanity check of a server in flight; err is its outcome,
// set before done is closed.
type dnsCheck struct {
	done chan struct{}
	err  error
}

// dnsNegative reports whether resp (NOERROR or NXDOMAIN) says the name
// does not exist or has no records of the type asked.
func dnsNegative(resp *dns.Msg) bool {
	return resp.Rcode == dns.RcodeNameError || len(resp.Answer) == 0
}

// trust returns nil when s's negative answers can be trusted: at its
// first negative answer of the run, s is asked once for the root zone's
// NS records, which every working resolver has at hand; a resolver that
// cannot answer them with data (NXDOMAIN, no data, an error code) is
// broken, said once, and trust then returns ErrDNSBrokenResolver for each
// of its negative answers. A broken resolver is not marked down: it is
// still asked, and its positive answers are used as they come, so that a
// verdict never depends on whether a lookup ran before or after another
// address's negative answer found it broken. The outcome is kept for the
// run; a check that got no answer at all decides nothing (its error is
// returned, and the next negative answer checks again), and counts
// towards finding s unreachable. Concurrent callers share one check.
func (r *dnsResolver) trust(ctx context.Context, s *dnsServer) error {
	s.mu.Lock()
	switch s.sanity {
	case dnsSanityGood:
		s.mu.Unlock()
		return nil
	case dnsSanityBroken:
		s.mu.Unlock()
		return fmt.Errorf("%s: %w", s.addr, ErrDNSBrokenResolver)
	}
	c := s.check
	if c != nil {
		s.mu.Unlock()
		select {
		case <-c.done:
			return c.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c = &dnsCheck{done: make(chan struct{})}
	s.check = c
	s.mu.Unlock()

	sanity, rcode, err := r.checkRoot(ctx, s)
	s.mu.Lock()
	s.check = nil
	switch sanity {
	case dnsSanityGood:
		s.sanity = dnsSanityGood
	case dnsSanityBroken:
		s.sanity = dnsSanityBroken
		err = fmt.Errorf("%s: %w", s.addr, ErrDNSBrokenResolver)
		if r.warn != nil {
			r.warn(fmt.Sprintf("dns: resolver %s answers %s even for the root zone: its negative answers are not trusted, so addresses it denies stay unverified (broken-resolver) unless the ip list covers them; what it does answer still counts; give a working resolver with --resolver HOST:PORT", s.addr, rcode))
		}
	}
	c.err = err
	s.mu.Unlock()
	close(c.done)
	return err
}

// checkRoot asks s for the root zone's NS records, with the query
// timeout and retries, and says what the answer shows: dnsSanityGood for
// NS (or SOA) records of the root, dnsSanityBroken for any other answer
// (rcode names it), dnsSanityUnknown with the error when none came.
func (r *dnsResolver) checkRoot(ctx context.Context, s *dnsServer) (dnsSanity, string, error) {
	q, err := newDNSQuery(".", dns.TypeNS, r.rand)
	if err != nil {
		return dnsSanityUnknown, "", err
	}
	for attempt := 0; attempt <= r.retries; attempt++ {
		q.arm()
		var resp *dns.Msg
		resp, err = r.try(ctx, s, q)
		if err != nil {
			if ctx.Err() != nil || s.down.Load() {
				break
			}
			continue
		}
		if resp.Rcode == dns.RcodeSuccess && slices.ContainsFunc(resp.Answer, func(rr dns.RR) bool {
			t := rr.Header().Rrtype
			return rr.Header().Name == "." && (t == dns.TypeNS || t == dns.TypeSOA)
		}) {
			return dnsSanityGood, "", nil
		}
		what := dnsRcodeName(resp.Rcode)
		if resp.Rcode == dns.RcodeSuccess {
			what = "no data"
		}
		return dnsSanityBroken, what, nil
	}
	return dnsSanityUnknown, "", fmt.Errorf("%s: a negative answer was not trusted: checking the resolver with the root zone failed: %w", s.addr, err)
}

// dnsRcodeError is an answer with a response code other than NOERROR and
// NXDOMAIN.
type dnsRcodeError struct {
	server string
	rcode  int
}

func (e *dnsRcodeError) Error() string {
	return fmt.Sprintf("%s: %v: %s", e.server, ErrDNSServerFailure, dnsRcodeName(e.rcode))
}

func (e *dnsRcodeError) Is(target error) bool { return target == ErrDNSServerFailure }

// dnsNetFailure is a network error that says the server cannot be
// reached (connection refused, no route).
type dnsNetFailure struct{ msg string }

func (e *dnsNetFailure) Error() string { return e.msg }

func dnsIsNetFailure(err error) bool {
	var nf *dnsNetFailure
	return errors.As(err, &nf)
}

// dnsNetError turns a network error into a short, stable message.
func dnsNetError(err error, timeout time.Duration) error {
	var ne net.Error
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("%w: no answer within %s", ErrDNSTimeout, timeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		return &dnsNetFailure{"connection refused"}
	case errors.Is(err, syscall.ENETUNREACH):
		return &dnsNetFailure{"network is unreachable"}
	case errors.Is(err, syscall.EHOSTUNREACH):
		return &dnsNetFailure{"no route to host"}
	case errors.As(err, &ne):
		return &dnsNetFailure{err.Error()}
	}
	return err
}

func dnsRcodeName(rcode int) string {
	if s, ok := dns.RcodeToString[rcode]; ok {
		return s
	}
	return fmt.Sprintf("RCODE%d", rcode)
}

// dnsFailureKind says why a lookup failed, as one of the DNSFailure
// constants.
func dnsFailureKind(err error) string {
	var rc *dnsRcodeError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return DNSFailureCanceled
	case errors.Is(err, ErrDNSNoResolver):
		return DNSFailureNoResolver
	case errors.Is(err, errTooManyNames):
		return DNSFailureTooManyNames
	case errors.Is(err, ErrDNSBrokenResolver):
		return DNSFailureBrokenResolver
	case errors.Is(err, ErrDNSUnreachable), dnsIsNetFailure(err):
		return DNSFailureUnreachable
	case errors.Is(err, ErrDNSBadAnswer):
		return DNSFailureForged
	case errors.Is(err, ErrDNSTimeout):
		return DNSFailureTimeout
	case errors.As(err, &rc) && rc.rcode == dns.RcodeServerFailure:
		return DNSFailureServFail
	case errors.As(err, &rc) && rc.rcode == dns.RcodeRefused:
		return DNSFailureRefused
	}
	return DNSFailureOther
}

// lookup resolves (name, qtype), following CNAMEs in the answer and, when
// the server did not include the whole chain, asking again for the target.
// A chain that loops or is longer than dnsMaxCNAME counts as an answer
// without data: the server did answer, and what it said is unusable.
func (r *dnsResolver) lookup(ctx context.Context, name string, qtype uint16) dnsLookup {
	cur := dns.Fqdn(name)
	seen := map[string]bool{strings.ToLower(cur): true}
	ttl := uint32(dnsMaxTTL / time.Second)
	last := ""
	for query := 0; query <= dnsMaxCNAME; query++ {
		resp, server, err := r.exchange(ctx, cur, qtype)
		if err != nil {
			return dnsLookup{Err: err}
		}
		for {
			values, next, t := dnsRecords(resp.Answer, cur, qtype)
			ttl = min(ttl, t)
			if len(values) > 0 {
				if qtype == dns.TypePTR {
					values = fcrdnsKeepNames(values, r.keep)
				}
				return dnsLookup{Rcode: dns.RcodeSuccess, Values: values, TTL: ttl, Server: server}
			}
			if next == "" {
				break
			}
			cur = dns.Fqdn(next)
			if seen[strings.ToLower(cur)] || len(seen) > dnsMaxCNAME {
				return dnsLookup{Rcode: dns.RcodeSuccess, TTL: ttl, Server: server}
			}
			seen[strings.ToLower(cur)] = true
		}
		if resp.Rcode == dns.RcodeNameError || strings.EqualFold(cur, resp.Question[0].Name) {
			// The name (or the end of its chain) has no data, or does not
			// exist: this answer is final.
			return dnsLookup{Rcode: resp.Rcode, TTL: min(ttl, dnsNegativeTTL(resp)), Server: server}
		}
		// The answer stopped at a CNAME target without its records: ask
		// about the target.
		last = server
	}
	return dnsLookup{Rcode: dns.RcodeSuccess, TTL: ttl, Server: last}
}

// dnsRecords returns the records of type qtype owned by owner in answer
// (PTR names in presentation form, addresses as text, all of them: the
// message bounds their number), else the target of owner's CNAME, with
// the least TTL of the records used (the maximum when none is).
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

// dnsNegativeTTL is how long a negative answer may be kept: RFC 2308 §5,
// the SOA's TTL or MINIMUM, whichever is less, at most an hour; or, for an
// answer without a SOA (which RFC 2308 would not cache at all; many
// resolvers send them for reverse zones), dnsNoSOANegativeTTL.
func dnsNegativeTTL(resp *dns.Msg) uint32 {
	for _, rr := range resp.Ns {
		if soa, ok := rr.(*dns.SOA); ok {
			return min(soa.Hdr.Ttl, soa.Minttl, uint32(dnsMaxNegativeTTL/time.Second))
		}
	}
	return uint32(dnsNoSOANegativeTTL / time.Second)
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
	cache *DNSCache
	// clock tells when a question is asked; nil means time.Now.
	clock func() time.Time
	mu    sync.Mutex
	calls map[string]*dnsCall
}

func (m *dnsMemo) now() time.Time {
	if m.clock == nil {
		return time.Now()
	}
	return m.clock()
}

func dnsKey(name string, qtype uint16) string {
	return dns.TypeToString[qtype] + " " + dns.CanonicalName(name)
}

func (m *dnsMemo) lookup(ctx context.Context, res *dnsResolver, name string, qtype uint16) dnsLookup {
	key := dnsKey(name, qtype)
	m.mu.Lock()
	if c, ok := m.calls[key]; ok {
		m.mu.Unlock()
		select {
		case <-c.done:
			return c.res
		case <-ctx.Done():
			l := dnsLookup{Err: ctx.Err()}
			l.ans = newDNSAnswer(name, qtype, l, m.now())
			return l
		}
	}
	c := &dnsCall{done: make(chan struct{})}
	m.calls[key] = c
	m.mu.Unlock()

	if got, ans, ok := m.cache.get(key); ok {
		c.res = got
		c.res.ans = ans
	} else {
		asked := m.now()
		c.res = res.lookup(ctx, name, qtype)
		c.res.ans = newDNSAnswer(name, qtype, c.res, asked)
		if c.res.Err == nil {
			m.cache.put(key, c.res, asked)
		}
	}
	close(c.done)
	return c.res
}

// forgetFailures drops the lookups that are done and failed, so that they
// are asked again.
func (m *dnsMemo) forgetFailures() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, c := range m.calls {
		select {
		case <-c.done:
			if c.res.Err != nil {
				delete(m.calls, k)
			}
		default:
		}
	}
}
