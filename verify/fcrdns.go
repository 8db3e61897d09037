package verify

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// CrawlerDomain is the domain the crawler's host names are under: a PTR
// name must end in ".bot.lohisoft.com" at a label boundary. The bare name
// itself does not qualify.
const CrawlerDomain = "bot.lohisoft.com"

// fcrdnsMaxNames is the most PTR names looked at for one address.
const fcrdnsMaxNames = 5

// NoResolverWarning is the run-level warning of a Verifier that has no DNS
// server to ask (and is not Offline).
const NoResolverWarning = "dns: no resolver configured; the ip list decides"

// Result is the verdict for one address, with its evidence.
type Result struct {
	// Addr is the address verified (IPv4-mapped IPv6 addresses unmapped,
	// without a zone).
	Addr    netip.Addr
	Verdict Verdict
	// Method is how the verdict was reached: MethodFCrDNS or MethodIPList.
	Method string
	// Reason is empty for genuine addresses, else one of the Reason
	// constants.
	Reason string
	// PTR holds the PTR names looked at (lower case, without the trailing
	// dot, at most five, sorted); Forward the addresses their A or AAAA
	// lookups returned (sorted). Both are empty, not nil, when there were
	// none.
	PTR, Forward []string
	// InIPList says whether the IP list in force covers Addr.
	InIPList bool
	// Warnings are per-address warnings, such as WarningFCrDNSFailed.
	Warnings []string
	// DNSError says why DNS could not answer, when it could not.
	DNSError string
}

// IPReport returns r as a report entry (SPEC §5) with no hits.
func (r Result) IPReport() IPReport {
	rep := IPReport{
		IP:         r.Addr.String(),
		Verdict:    r.Verdict,
		Method:     r.Method,
		Reason:     r.Reason,
		PTR:        slices.Clone(r.PTR),
		Forward:    slices.Clone(r.Forward),
		InIPList:   r.InIPList,
		UserAgents: []string{},
		Warnings:   slices.Clone(r.Warnings),
	}
	if rep.PTR == nil {
		rep.PTR = []string{}
	}
	if rep.Forward == nil {
		rep.Forward = []string{}
	}
	if !r.Addr.IsValid() {
		rep.IP = ""
	}
	return rep
}

// Verifier classifies addresses that claim to be the crawler (SPEC §3). Set
// its fields before the first call to Verify and leave them alone after.
// The zero value has no resolver: every address is then decided by the
// built-in IP list as when DNS cannot answer.
type Verifier struct {
	// Servers are the DNS servers (HOST:PORT), asked in turn.
	Servers []string
	// Timeout is the time one query may take; zero means
	// DefaultDNSTimeout.
	Timeout time.Duration
	// Retries is how many more times a query that got no answer is sent
	// before it counts as failed; negative counts as zero.
	Retries int
	// Concurrency is how many addresses are verified at once; zero means
	// DefaultDNSConcurrency.
	Concurrency int
	// Cache keeps answers between runs; nil keeps nothing.
	Cache *DNSCache
	// Offline means no DNS at all: the IP list decides.
	Offline bool
	// List is the IP list in force; nil means BuiltinIPList().
	List *IPList

	once     sync.Once
	memo     *dnsMemo
	list     *IPList
	mu       sync.Mutex
	done     map[netip.Addr]Result
	warnings []string
}

func (v *Verifier) init() {
	v.once.Do(func() {
		v.list = v.List
		if v.list == nil {
			v.list = BuiltinIPList()
		}
		v.done = map[netip.Addr]Result{}
		res := newDNSResolver(v.Servers, v.Timeout, v.Retries, v.warn)
		v.memo = &dnsMemo{res: res, cache: v.Cache, calls: map[string]*dnsCall{}}
		if !v.Offline && len(v.Servers) == 0 {
			v.warn(NoResolverWarning)
		}
	})
}

func (v *Verifier) warn(msg string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !slices.Contains(v.warnings, msg) {
		v.warnings = append(v.warnings, msg)
	}
}

// Warnings returns the run-level warnings so far, such as a resolver found
// unreachable, each once, in the order they arose.
func (v *Verifier) Warnings() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.warnings)
}

// Verify classifies addrs and returns one Result per element, in the same
// order. Each distinct address is resolved once per Verifier, however often
// it appears here or in earlier calls; up to Concurrency addresses are
// resolved at once. When ctx is done, addresses not yet resolved count as
// DNS failures.
func (v *Verifier) Verify(ctx context.Context, addrs []netip.Addr) []Result {
	v.init()
	var todo []netip.Addr
	queued := map[netip.Addr]bool{}
	v.mu.Lock()
	for _, a := range addrs {
		a = fcrdnsKey(a)
		if _, ok := v.done[a]; !ok && !queued[a] {
			queued[a] = true
			todo = append(todo, a)
		}
	}
	v.mu.Unlock()

	workers := v.Concurrency
	if workers <= 0 {
		workers = DefaultDNSConcurrency
	}
	workers = min(workers, len(todo))
	next := make(chan netip.Addr)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for a := range next {
				r := v.verifyOne(ctx, a)
				v.mu.Lock()
				v.done[a] = r
				v.mu.Unlock()
			}
		})
	}
	for _, a := range todo {
		next <- a
	}
	close(next)
	wg.Wait()

	out := make([]Result, len(addrs))
	v.mu.Lock()
	defer v.mu.Unlock()
	for i, a := range addrs {
		out[i] = fcrdnsCopy(v.done[fcrdnsKey(a)])
	}
	return out
}

// fcrdnsKey is the form of a verified: IPv4-mapped IPv6 addresses
// unmapped, zones dropped.
func fcrdnsKey(a netip.Addr) netip.Addr { return a.Unmap().WithZone("") }

func fcrdnsCopy(r Result) Result {
	r.PTR = slices.Clone(r.PTR)
	r.Forward = slices.Clone(r.Forward)
	r.Warnings = slices.Clone(r.Warnings)
	return r
}

// fcrdnsOutcome is what DNS said about an address.
type fcrdnsOutcome int

const (
	fcrdnsPass     fcrdnsOutcome = iota // forward-confirmed
	fcrdnsFail                          // definitively not (Reason says why)
	fcrdnsNoAnswer                      // DNS could not answer
)

// Settled returns the verdict of a valid address when it needs no DNS: an
// IPv6 address the IP list does not cover (the crawler makes no IPv6
// requests), or any address with Offline set. ok is false when FCrDNS has
// to decide.
func (v *Verifier) Settled(a netip.Addr) (r Result, ok bool) {
	v.init()
	r = Result{Addr: a, PTR: []string{}, Forward: []string{}, InIPList: v.list.Contains(a)}
	switch {
	case !a.IsValid():
		return r, false
	case a.Unmap().Is6() && !r.InIPList:
		r.Verdict, r.Method, r.Reason = Spoofed, MethodIPList, ReasonIPv6
	case v.Offline && r.InIPList:
		r.Verdict, r.Method = Genuine, MethodIPList
	case v.Offline:
		r.Verdict, r.Method, r.Reason = Spoofed, MethodIPList, ReasonNotInIPList
	default:
		return r, false
	}
	return r, true
}

// verifyOne applies the table of SPEC §3 to one address.
func (v *Verifier) verifyOne(ctx context.Context, a netip.Addr) Result {
	r := Result{Addr: a, PTR: []string{}, Forward: []string{}}
	if !a.IsValid() {
		r.Verdict, r.Reason = Unverified, ReasonInvalidAddress
		return r
	}
	if s, ok := v.Settled(a); ok {
		return s
	}
	r.InIPList = v.list.Contains(a)

	outcome, reason := v.fcrdns(ctx, a, &r)
	switch {
	case outcome == fcrdnsPass:
		r.Verdict, r.Method = Genuine, MethodFCrDNS
	case r.InIPList:
		r.Verdict, r.Method = Genuine, MethodIPList
		if outcome == fcrdnsFail {
			r.Warnings = append(r.Warnings, WarningFCrDNSFailed)
		}
	case outcome == fcrdnsFail:
		r.Verdict, r.Method, r.Reason = Spoofed, MethodFCrDNS, reason
	default:
		r.Verdict, r.Method, r.Reason = Unverified, MethodFCrDNS, ReasonDNSError
	}
	return r
}

// fcrdns does the reverse lookup and the forward confirmation, filling in
// r's evidence. A definitive failure comes with its reason.
func (v *Verifier) fcrdns(ctx context.Context, a netip.Addr, r *Result) (fcrdnsOutcome, string) {
	arpa, err := dns.ReverseAddr(a.String())
	if err != nil {
		r.DNSError = err.Error()
		return fcrdnsNoAnswer, ""
	}
	ptr := v.memo.lookup(ctx, arpa, dns.TypePTR)
	if ptr.Err != nil {
		r.DNSError = ptr.Err.Error()
		return fcrdnsNoAnswer, ""
	}
	names := fcrdnsNames(ptr.Values)
	if len(names) == 0 {
		return fcrdnsFail, ReasonNoPTR
	}
	r.PTR = names
	qtype := dns.TypeA
	if a.Is6() {
		qtype = dns.TypeAAAA
	}
	candidates := 0
	var dnsErr string
	for _, name := range names {
		if !IsCrawlerName(name) {
			continue
		}
		candidates++
		fwd := v.memo.lookup(ctx, name, qtype)
		if fwd.Err != nil {
			dnsErr = fwd.Err.Error()
			continue
		}
		match := false
		for _, s := range fwd.Values {
			if b, err := netip.ParseAddr(s); err == nil && b.Unmap() == a {
				match = true
			}
			if !slices.Contains(r.Forward, s) {
				r.Forward = append(r.Forward, s)
			}
		}
		if match {
			fcrdnsSortAddrs(r.Forward)
			return fcrdnsPass, ""
		}
	}
	fcrdnsSortAddrs(r.Forward)
	switch {
	case candidates == 0:
		return fcrdnsFail, ReasonPTRMismatch
	case dnsErr != "":
		r.DNSError = dnsErr
		return fcrdnsNoAnswer, ""
	}
	return fcrdnsFail, ReasonForwardMismatch
}

// fcrdnsNames returns the PTR names to look at: lower case, without the
// trailing dot, deduplicated, those under CrawlerDomain first, at most
// fcrdnsMaxNames, sorted.
func fcrdnsNames(values []string) []string {
	var under, other []string
	for _, v := range values {
		n := strings.ToLower(v)
		if dns.IsFqdn(n) {
			n = n[:len(n)-1]
		}
		if n == "" || slices.Contains(under, n) || slices.Contains(other, n) {
			continue
		}
		if IsCrawlerName(n) {
			under = append(under, n)
		} else {
			other = append(other, n)
		}
	}
	slices.Sort(under)
	slices.Sort(other)
	names := append(under, other...)
	if len(names) > fcrdnsMaxNames {
		names = names[:fcrdnsMaxNames]
	}
	slices.Sort(names)
	return names
}

// IsCrawlerName reports whether name (in DNS presentation form, any case,
// with or without the trailing dot) is strictly under CrawlerDomain at a
// label boundary. crawler1.bot.lohisoft.com is; the bare bot.lohisoft.com,
// xbot.lohisoft.com, lohisoft.com, crawler1.bot.lohisoft.com.evil.example
// and crawler1\.bot.lohisoft.com (an escaped dot: the label
// "crawler1.bot" under lohisoft.com) are not.
func IsCrawlerName(name string) bool {
	if name == "" || name == "." {
		return false
	}
	if _, ok := dns.IsDomainName(name); !ok {
		return false
	}
	name = dns.CanonicalName(name)
	parent := dns.Fqdn(CrawlerDomain)
	return dns.IsSubDomain(parent, name) && dns.CountLabel(name) > dns.CountLabel(parent)
}

func fcrdnsSortAddrs(s []string) {
	slices.SortFunc(s, func(x, y string) int {
		a, errA := netip.ParseAddr(x)
		b, errB := netip.ParseAddr(y)
		if errA != nil || errB != nil {
			return strings.Compare(x, y)
		}
		return a.Compare(b)
	})
}
