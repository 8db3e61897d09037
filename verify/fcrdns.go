package verify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/addrset"
	"github.com/lohisoft/lohibot-audit/proxy"
	"github.com/miekg/dns"
)

// ReasonNoIPList is the reason of an unverified address when DNS was not
// asked (--offline) or could not answer and the crawler has no IP list at
// all: neither fetched, cached nor built in.
const ReasonNoIPList = "no-ip-list"

// errTooManyNames: the PTR answer has more names under the crawler's
// FCrDNS suffixes than are looked at.
var errTooManyNames = errors.New("too many ptr names")

// fcrdnsMaxNames is the most PTR names looked at for one address, those
// under the crawler's suffixes first. When more names under them came and
// none of those looked at passes, the address is not judged: the set
// looked at was not the whole answer.
const fcrdnsMaxNames = 16

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
	// dot, at most sixteen, those under the crawler's suffixes first,
	// sorted);
	// Forward the addresses their A or AAAA lookups returned (all of
	// them, sorted). Both are empty, not nil, when there were none.
	PTR, Forward []string
	// InIPList says whether the IP list in force covers Addr.
	InIPList bool
	// Warnings are per-address warnings, such as WarningFCrDNSFailed.
	Warnings []string
	// DNSError says why DNS could not answer, when it could not, and
	// DNSFailure says it as one of the DNSFailure constants (timeout,
	// servfail, refused, forged, unreachable, ...). Both are empty when
	// DNS answered.
	DNSError   string
	DNSFailure string
	// Proxy names the proxy the address is when Reason is ReasonProxy:
	// a CDN ("cloudflare"), or the --trusted-proxy value that holds it
	// ("private", "203.0.113.0/24").
	Proxy string
	// DNS are the lookups the verdict rests on, with the resolver, the
	// time asked and the TTL of each (see DNSAnswer): the PTR lookup
	// first, then the forward ones; nil when DNS was not asked. The
	// answers are shared between results: do not change them.
	DNS []*DNSAnswer
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
	// RetryTimeout is the time one query may take in the second pass:
	// addresses left unverified because DNS could not answer are tried
	// once more at the end of Verify, with this longer timeout. Zero
	// means three times Timeout; negative means no second pass.
	RetryTimeout time.Duration
	// Cache keeps answers between runs; nil keeps nothing.
	Cache *DNSCache
	// Offline means no DNS at all: the IP list decides.
	Offline bool
	// Profile is the crawler verified: its FCrDNS suffixes, its IPv6
	// policy and its built-in list. nil is a crawler with none of them:
	// no PTR name passes, and only List can make an address genuine.
	Profile *crawler.Profile
	// List is the IP list in force; nil means the profile's built-in list
	// ([BuiltinList]).
	List *IPList
	// OnQuery, when set, is told of every DNS query sent, from the
	// goroutines that send them (watch's resolver health and metrics).
	OnQuery func(DNSQuery)
	// Proxies are the CDN edges and trusted proxies: an address among
	// them is unverified with reason proxy, and never looked up. nil
	// means the built-in CDN edges only (see proxy.Set).
	Proxies *proxy.Set
	// Now tells when a question is asked, for the evidence; nil means the
	// DNS cache's clock, else time.Now.
	Now func() time.Time

	// share, when set, is the verifier whose resolver, DNS answers,
	// warnings and progress this one uses (see For).
	share *Verifier
	// suffixes are the profile's FCrDNS suffixes, as FQDNs.
	suffixes []string

	once     sync.Once
	res      *dnsResolver
	memo     *dnsMemo
	list     *IPList
	listed   *addrset.Set // list's prefixes, looked up
	mu       sync.Mutex
	done     map[netip.Addr]Result
	warnings []string
	// after replaces time.AfterFunc for query timeouts (tests).
	after dnsAfterFunc

	// progress counters, see Progress.
	total, finished, retryTotal, retried atomic.Int64
}

// Progress is how far a Verifier has got. Done and Total count the
// addresses of the first pass (those that need DNS), over every call to
// Verify so far; Retried and RetryTotal those of the second pass.
type Progress struct {
	Done, Total         int64
	Retried, RetryTotal int64
}

// IgnoredAnswers is the number of packets that came in answer to a query
// without answering it (another id or question, or not a DNS message):
// forged packets racing the resolver's answers, or a broken server. They
// are skipped and the real answer waited for.
func (v *Verifier) IgnoredAnswers() int64 {
	v.init()
	return v.res.ignored.Load()
}

// Progress returns how far verification has got. It is safe to call while
// Verify runs (to show progress on a terminal, say).
func (v *Verifier) Progress() Progress {
	r := v.root()
	return Progress{Done: r.finished.Load(), Total: r.total.Load(), Retried: r.retried.Load(), RetryTotal: r.retryTotal.Load()}
}

func (v *Verifier) init() {
	v.once.Do(func() {
		if p := v.Profile; p != nil {
			v.suffixes = fqdns(p.FCrDNS)
		}
		v.list = v.List
		if v.list == nil {
			v.list = BuiltinList(v.Profile)
		}
		v.listed = addrset.New(v.list.Prefixes)
		v.done = map[netip.Addr]Result{}
		if v.share != nil {
			v.share.init()
			v.res, v.memo = v.share.res, v.share.memo
			return
		}
		v.res = newDNSResolver(v.Servers, v.Timeout, v.Retries, v.warn)
		v.res.keep = slices.Clone(v.suffixes)
		v.res.onQuery = v.OnQuery
		if v.after != nil {
			v.res.after = v.after
		}
		v.memo = &dnsMemo{cache: v.Cache, clock: v.Now, calls: map[string]*dnsCall{}}
		if v.memo.clock == nil && v.Cache != nil {
			v.memo.clock = v.Cache.now
		}
		if !v.Offline && len(v.Servers) == 0 {
			v.warn(NoResolverWarning)
		}
	})
}

// For returns a verifier of another crawler, p, with list in force (nil:
// p's built-in list), that shares v's DNS: its servers and settings, the
// answers of this run and the cache, its warnings and its progress. Call
// For on every profile of a run before the first Verify, so that PTR
// answers are kept whole enough for all of them.
func (v *Verifier) For(p *crawler.Profile, list *IPList) *Verifier {
	root := v.root()
	w := &Verifier{
		Servers: root.Servers, Timeout: root.Timeout, Retries: root.Retries,
		Concurrency: root.Concurrency, RetryTimeout: root.RetryTimeout,
		Cache: root.Cache, Offline: root.Offline, Proxies: root.Proxies, Now: root.Now, OnQuery: root.OnQuery,
		Profile: p, List: list, share: root,
	}
	root.init()
	for _, f := range fqdns(p.FCrDNS) {
		if !slices.Contains(root.res.keep, f) {
			root.res.keep = append(root.res.keep, f)
		}
	}
	return w
}

// root is the verifier whose DNS v uses.
func (v *Verifier) root() *Verifier {
	if v.share != nil {
		return v.share
	}
	return v
}

func (v *Verifier) warn(msg string) {
	r := v.root()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.warnings, msg) {
		r.warnings = append(r.warnings, msg)
	}
}

// Warnings returns the run-level warnings so far, such as a resolver found
// unreachable, each once, in the order they arose (shared by the verifiers
// of one run, see For).
func (v *Verifier) Warnings() []string {
	r := v.root()
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.warnings)
}

// Verify classifies addrs and returns one Result per element, in the same
// order. Each distinct address is resolved once per Verifier, however often
// it appears here or in earlier calls; up to Concurrency addresses are
// resolved at once, in an order that spreads neighbouring addresses apart
// (a block of addresses with a slow reverse zone does not hold up the
// rest). Addresses left unverified because DNS could not answer are tried
// once more at the end, with RetryTimeout, and lookups that failed are then
// asked again. When ctx is done, addresses not yet resolved count as DNS
// failures.
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
	// Addresses that need no DNS are settled here, outside the count.
	todo = slices.DeleteFunc(todo, func(a netip.Addr) bool {
		if _, ok := v.Settled(a); !ok && a.IsValid() {
			return false
		}
		r := v.verifyOne(ctx, v.res, a)
		v.mu.Lock()
		v.done[a] = r
		v.mu.Unlock()
		return true
	})
	slices.SortFunc(todo, func(a, b netip.Addr) int { return cmp.Compare(fcrdnsSpread(a), fcrdnsSpread(b)) })

	counts := v.root()
	counts.total.Add(int64(len(todo)))
	v.run(ctx, v.res, todo, &counts.finished)

	if again := v.retryable(todo); len(again) > 0 && ctx.Err() == nil && !v.res.allDown() {
		counts.retryTotal.Add(int64(len(again)))
		v.memo.forgetFailures()
		v.run(ctx, v.res.withTimeout(v.retryTimeout()), again, &counts.retried)
	}

	out := make([]Result, len(addrs))
	v.mu.Lock()
	defer v.mu.Unlock()
	for i, a := range addrs {
		out[i] = fcrdnsCopy(v.done[fcrdnsKey(a)])
	}
	return out
}

// run verifies todo with up to Concurrency workers, asking res, and counts
// each address done in done. One address (watch judges them one by one)
// is verified in the caller's goroutine.
func (v *Verifier) run(ctx context.Context, res *dnsResolver, todo []netip.Addr, done *atomic.Int64) {
	if len(todo) == 1 {
		r := v.verifyOne(ctx, res, todo[0])
		v.mu.Lock()
		v.done[todo[0]] = r
		v.mu.Unlock()
		done.Add(1)
		return
	}
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
				r := v.verifyOne(ctx, res, a)
				v.mu.Lock()
				v.done[a] = r
				v.mu.Unlock()
				done.Add(1)
			}
		})
	}
	for _, a := range todo {
		next <- a
	}
	close(next)
	wg.Wait()
}

// retryable returns the addresses of todo that are unverified because DNS
// could not answer, in a way that asking again may mend.
func (v *Verifier) retryable(todo []netip.Addr) []netip.Addr {
	if v.RetryTimeout < 0 {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	var again []netip.Addr
	for _, a := range todo {
		r := v.done[a]
		if r.Verdict != Unverified || r.Reason != ReasonDNSError {
			continue
		}
		switch r.DNSFailure {
		case DNSFailureNoResolver, DNSFailureTooManyNames, DNSFailureCanceled, DNSFailureBrokenResolver:
			// Asking again gives the same: a broken resolver's
			// negative answers stay distrusted for the run.
			continue
		}
		again = append(again, a)
	}
	return again
}

func (v *Verifier) retryTimeout() time.Duration {
	if v.RetryTimeout > 0 {
		return v.RetryTimeout
	}
	return dnsRetryFactor * v.res.timeout
}

// fcrdnsSpread is the order addresses are verified in: a hash of the
// address, so that neighbours (often behind one reverse zone) are apart.
func fcrdnsSpread(a netip.Addr) uint64 {
	h := fnv.New64a()
	b := a.As16()
	h.Write(b[:])
	return h.Sum64()
}

// inList reports whether the IP list in force covers a (unmapped, without
// its zone).
func (v *Verifier) inList(a netip.Addr) bool { return v.listed.Contains(fcrdnsKey(a)) }

// reverseName is the name of a's PTR record, under in-addr.arpa. (IPv4,
// IPv4-mapped IPv6 unmapped) or ip6.arpa., in lower case, fully qualified:
// what dns.ReverseAddr makes of its text, without parsing it again.
func reverseName(a netip.Addr) string {
	a = a.Unmap()
	if a.Is4() {
		b := a.As4()
		buf := make([]byte, 0, len("255.255.255.255.in-addr.arpa."))
		for i := 3; i >= 0; i-- {
			buf = strconv.AppendUint(buf, uint64(b[i]), 10)
			buf = append(buf, '.')
		}
		return string(append(buf, "in-addr.arpa."...))
	}
	const hex = "0123456789abcdef"
	b := a.As16()
	buf := make([]byte, 0, 64+len("ip6.arpa."))
	for i := 15; i >= 0; i-- {
		buf = append(buf, hex[b[i]&0xf], '.', hex[b[i]>>4], '.')
	}
	return string(append(buf, "ip6.arpa."...))
}

// fcrdnsKey is the form of a verified: IPv4-mapped IPv6 addresses
// unmapped, zones dropped.
func fcrdnsKey(a netip.Addr) netip.Addr { return a.Unmap().WithZone("") }

func fcrdnsCopy(r Result) Result {
	r.PTR = slices.Clone(r.PTR)
	r.Forward = slices.Clone(r.Forward)
	r.Warnings = slices.Clone(r.Warnings)
	r.DNS = slices.Clone(r.DNS)
	return r
}

// fcrdnsOutcome is what DNS said about an address.
type fcrdnsOutcome int

const (
	fcrdnsPass     fcrdnsOutcome = iota // forward-confirmed
	fcrdnsFail                          // definitively not (Reason says why)
	fcrdnsNoAnswer                      // DNS could not answer
)

// Settled returns the verdict of a valid address when it needs no DNS: a
// CDN edge or trusted proxy (unverified, reason proxy), an IPv6 address
// the IP list does not cover when the crawler makes no IPv6 requests, any
// address with Offline set, and any address of a crawler that has no
// FCrDNS suffixes (its IP lists alone decide). ok is false when FCrDNS has
// to decide.
func (v *Verifier) Settled(a netip.Addr) (r Result, ok bool) {
	v.init()
	r = Result{Addr: a, PTR: []string{}, Forward: []string{}, InIPList: v.inList(a)}
	listOnly := v.Offline || len(v.suffixes) == 0
	name, isProxy := v.Proxies.Proxy(a)
	switch {
	case !a.IsValid():
		return r, false
	case isProxy:
		// Before the IP list: an edge forwards everyone's requests,
		// the crawler's and its impostors' alike.
		r.Verdict, r.Reason, r.Proxy = Unverified, ReasonProxy, name
	case a.Unmap().Is6() && !r.InIPList && !v.ipv6():
		r.Verdict, r.Method, r.Reason = Spoofed, MethodIPList, ReasonIPv6
	case listOnly && r.InIPList:
		r.Verdict, r.Method = Genuine, MethodIPList
	case listOnly && len(v.list.Prefixes) == 0:
		// Nothing to judge by: neither DNS nor a list.
		r.Verdict, r.Method, r.Reason = Unverified, MethodIPList, ReasonNoIPList
	case listOnly && !v.list.Snapshot.IsZero():
		// Not in an old copy: perhaps an address the crawler took since.
		r.Verdict, r.Method, r.Reason = Unverified, MethodIPList, ReasonNotInSnapshot
	case listOnly:
		r.Verdict, r.Method, r.Reason = Spoofed, MethodIPList, ReasonNotInIPList
	default:
		return r, false
	}
	return r, true
}

// ipv6 says whether the crawler may make IPv6 requests.
func (v *Verifier) ipv6() bool { return v.Profile != nil && v.Profile.IPv6 }

// verifyOne applies the table of SPEC §3 to one address, asking res.
func (v *Verifier) verifyOne(ctx context.Context, res *dnsResolver, a netip.Addr) Result {
	r := Result{Addr: a, PTR: []string{}, Forward: []string{}}
	if !a.IsValid() {
		r.Verdict, r.Reason = Unverified, ReasonNotAnAddress
		return r
	}
	if s, ok := v.Settled(a); ok {
		return s
	}
	r.InIPList = v.inList(a)

	outcome, reason := v.fcrdns(ctx, res, a, &r)
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

// BuiltinList returns p's built-in list as an IPList (Source
// IPListSourceBuiltin, CreationTime the date of the page it was taken
// from): the last fallback when no other list can be had. A profile
// without built-in addresses (and nil) gives an empty list whose Source is
// IPListSourceNone. Each call returns a new value.
func BuiltinList(p *crawler.Profile) *IPList {
	if p == nil {
		return &IPList{Source: IPListSourceNone, Missing: "no crawler profile"}
	}
	if len(p.BuiltinIPs) == 0 {
		return &IPList{Source: IPListSourceNone, Missing: p.Name + " has no built-in list"}
	}
	return &IPList{Prefixes: slices.Clone(p.BuiltinIPs), Source: IPListSourceBuiltin, CreationTime: p.BuiltinIPsDate}
}

// fcrdns does the reverse lookup and the forward confirmation, filling in
// r's evidence. A definitive failure comes with its reason.
func (v *Verifier) fcrdns(ctx context.Context, res *dnsResolver, a netip.Addr, r *Result) (fcrdnsOutcome, string) {
	noAnswer := func(err error) (fcrdnsOutcome, string) {
		r.DNSError, r.DNSFailure = err.Error(), dnsFailureKind(err)
		return fcrdnsNoAnswer, ""
	}
	arpa := reverseName(a)
	ptr := v.memo.lookup(ctx, res, arpa, dns.TypePTR)
	r.DNS = append(r.DNS, ptr.ans)
	if ptr.Err != nil {
		return noAnswer(ptr.Err)
	}
	names, more := fcrdnsNames(ptr.Values, v.suffixes)
	if len(names) == 0 {
		return fcrdnsFail, ReasonNoPTR
	}
	r.PTR = names
	qtype := dns.TypeA
	if a.Is6() {
		qtype = dns.TypeAAAA
	}
	candidates := 0
	var fwdErr error
	var forward []string
	for _, name := range names {
		if !nameUnder(name, v.suffixes) {
			continue
		}
		candidates++
		fwd := v.memo.lookup(ctx, res, name, qtype)
		r.DNS = append(r.DNS, fwd.ans)
		if fwd.Err != nil {
			fwdErr = fwd.Err
			continue
		}
		forward = append(forward, fwd.Values...)
		if slices.ContainsFunc(fwd.Values, func(s string) bool {
			b, err := netip.ParseAddr(s)
			return err == nil && b.Unmap() == a
		}) {
			r.Forward = fcrdnsAddrs(forward)
			return fcrdnsPass, ""
		}
	}
	r.Forward = fcrdnsAddrs(forward)
	switch {
	case candidates == 0:
		return fcrdnsFail, ReasonPTRMismatch
	case fwdErr != nil:
		return noAnswer(fwdErr)
	case more:
		return noAnswer(fmt.Errorf("%w: more than %d under %s; the first %d do not resolve to the address", errTooManyNames, fcrdnsMaxNames, suffixList(v.suffixes), fcrdnsMaxNames))
	}
	return fcrdnsFail, ReasonForwardMismatch
}

// fcrdnsNames returns the PTR names to look at: lower case, without the
// trailing dot, deduplicated, those under suffixes (FQDNs) first, at most
// fcrdnsMaxNames, sorted. more says names under suffixes were left out.
func fcrdnsNames(values []string, suffixes []string) (names []string, more bool) {
	var under, other []string
	for _, v := range values {
		n := fcrdnsNorm(v)
		if n == "" || slices.Contains(under, n) || slices.Contains(other, n) {
			continue
		}
		if nameUnder(n, suffixes) {
			under = append(under, n)
		} else {
			other = append(other, n)
		}
	}
	slices.Sort(under)
	slices.Sort(other)
	more = len(under) > fcrdnsMaxNames
	names = append(under, other...)
	if len(names) > fcrdnsMaxNames {
		names = names[:fcrdnsMaxNames]
	}
	slices.Sort(names)
	return names, more
}

// fcrdnsKeepNames reduces the names of a PTR answer (which the owner of
// the reverse zone, anyone, writes, up to thousands) to what fcrdnsNames
// needs for any crawler of the run, normalised: for each of suffixes
// (FQDNs), the fcrdnsMaxNames+1 first names under it in sorted order (one
// more than are looked at, so that their excess shows), and the
// fcrdnsMaxNames first others.
func fcrdnsKeepNames(values []string, suffixes []string) []string {
	under := make([][]string, len(suffixes))
	var other []string
	for _, v := range values {
		n := fcrdnsNorm(v)
		if n == "" {
			continue
		}
		kept := false
		for i := range suffixes {
			if nameUnder(n, suffixes[i:i+1]) {
				under[i] = fcrdnsInsert(under[i], n, fcrdnsMaxNames+1)
				kept = true
			}
		}
		if !kept {
			other = fcrdnsInsert(other, n, fcrdnsMaxNames)
		}
	}
	var out []string
	for _, u := range under {
		for _, n := range u {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return append(out, other...)
}

// fcrdnsInsert inserts n into the sorted set s, keeping its limit first
// elements.
func fcrdnsInsert(s []string, n string, limit int) []string {
	i, found := slices.BinarySearch(s, n)
	if found || i >= limit {
		return s
	}
	s = slices.Insert(s, i, n)
	if len(s) > limit {
		s = s[:limit]
	}
	return s
}

// fcrdnsNorm is a PTR name as looked at: lower case, without the trailing
// dot.
func fcrdnsNorm(v string) string {
	n := strings.ToLower(v)
	if dns.IsFqdn(n) {
		n = n[:len(n)-1]
	}
	return n
}

// fcrdnsAddrs returns the addresses in values, deduplicated and sorted.
func fcrdnsAddrs(values []string) []string {
	addrs := make([]netip.Addr, 0, len(values))
	for _, s := range values {
		if a, err := netip.ParseAddr(s); err == nil {
			addrs = append(addrs, a)
		}
	}
	slices.SortFunc(addrs, netip.Addr.Compare)
	addrs = slices.Compact(addrs)
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a.String()
	}
	return out
}

// NameUnder reports whether name (in DNS presentation form, any case, with
// or without the trailing dot) is strictly under one of suffixes (domain
// names such as crawler.Profile.FCrDNS holds) at a label boundary. Under
// bot.lohisoft.com, crawler1.bot.lohisoft.com is; the bare
// bot.lohisoft.com, xbot.lohisoft.com, lohisoft.com,
// crawler1.bot.lohisoft.com.evil.example and crawler1\.bot.lohisoft.com
// (an escaped dot: the label "crawler1.bot" under lohisoft.com) are not.
func NameUnder(name string, suffixes []string) bool {
	return nameUnder(name, fqdns(suffixes))
}

// nameUnder is NameUnder with suffixes already in canonical FQDN form.
func nameUnder(name string, suffixes []string) bool {
	if name == "" || name == "." || len(suffixes) == 0 {
		return false
	}
	if _, ok := dns.IsDomainName(name); !ok {
		return false
	}
	name = dns.CanonicalName(name)
	for _, parent := range suffixes {
		if dns.IsSubDomain(parent, name) && dns.CountLabel(name) > dns.CountLabel(parent) {
			return true
		}
	}
	return false
}

// fqdns returns domain names in canonical FQDN form (lower case, trailing
// dot).
func fqdns(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, dns.CanonicalName(n))
	}
	return out
}

// suffixList names suffixes (FQDNs) for a message: "a.example or
// b.example".
func suffixList(suffixes []string) string {
	parts := make([]string, len(suffixes))
	for i, s := range suffixes {
		parts[i] = strings.TrimSuffix(s, ".")
	}
	return strings.Join(parts, " or ")
}
