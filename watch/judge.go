// Package watch is the live mode of lohibot-audit (SPEC §11): it follows
// access logs as they grow, judges each new address that claims a crawler
// in the background, reports every verdict and every conduct violation as
// one event the moment it is known, and blocks new spoofers (nftables
// through netlink, or a command per address).
//
// The pieces are separate and small: a [Judge] verifies addresses without
// ever holding up the reader, a [Guard] decides with emit's safety rules
// whether an address may be acted on, [Actions] carry that out, an
// [Events] writer prints what happened, and a [Watcher] ties them to a
// follow.Follower.
package watch

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/lohisoft/lohibot-audit/verify"
)

// Defaults of JudgeOptions.
const (
	// DefaultConcurrency is how many addresses are verified at once.
	DefaultConcurrency = 64
	// DefaultVerdictTTL is how long a verdict stands before the address,
	// seen again, is judged again. The DNS cache keeps each answer for its
	// own TTL, so a judgement within that TTL asks no server.
	DefaultVerdictTTL = 15 * time.Minute
	// DefaultRetryMin and DefaultRetryMax bound the wait before an
	// unverified address (DNS could not answer) is judged again; the wait
	// doubles from the first to the second.
	DefaultRetryMin = 30 * time.Second
	DefaultRetryMax = 15 * time.Minute
	// DefaultMaxAddresses bounds the addresses a judge holds (about 250
	// bytes each): a botnet of 10,000 new addresses a second would
	// otherwise hold nine million for the 15-minute TTL. See
	// JudgeOptions.MaxAddresses.
	DefaultMaxAddresses = 2_000_000
)

// Checker verifies one address. The judge calls it from several goroutines
// at once; a Checker must return when ctx ends.
type Checker interface {
	Check(ctx context.Context, a netip.Addr) verify.Result
}

// Verdict is a judgement of one address, as the judge hands it to
// JudgeOptions.OnVerdict.
type Verdict struct {
	verify.Result
	// Previous is the verdict the address had before this judgement; ""
	// for its first.
	Previous verify.Verdict
	// Attempt counts the judgements of the address in a row that left it
	// unverified, this one included; 0 when this one settled it.
	Attempt int
	// Hits, FirstSeen, LastSeen and UserAgent describe the requests seen
	// from the address so far (since it was last forgotten).
	Hits                int64
	FirstSeen, LastSeen time.Time
	UserAgent           string
}

// New reports whether this judgement changed what is known of the address:
// its first, or another verdict than before.
func (v Verdict) New() bool { return v.Previous != v.Result.Verdict }

// JudgeOptions configure a Judge. Checker is required.
type JudgeOptions struct {
	Checker Checker
	// Concurrency is how many addresses are verified at once; zero means
	// DefaultConcurrency.
	Concurrency int
	// TTL is how long a verdict stands; zero means DefaultVerdictTTL. An
	// address not seen for a TTL is forgotten.
	TTL time.Duration
	// RetryMin and RetryMax bound the backoff of unverified addresses;
	// zero means the defaults.
	RetryMin, RetryMax time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// OnVerdict receives every judgement, from the judge's goroutines,
	// one at a time. It should return at once: judgements wait for it.
	OnVerdict func(Verdict)
	// Prefer, when set, tells the addresses to judge first (those in the
	// crawler's IP list, say). See Judge.
	Prefer func(netip.Addr) bool
	// MaxAddresses bounds the addresses held; zero means
	// DefaultMaxAddresses. Past it, Tick forgets the settled verdicts
	// other than genuine that were seen least recently, down to nine
	// tenths of it: such an address seen again is judged again (a
	// spoofer is blocked again), never let through unjudged. Addresses
	// waiting for their verdict and genuine ones are never forgotten
	// early, so these alone may hold more.
	MaxAddresses int
	// Say, when set, is told the first time the bound is reached.
	Say func(string)
}

// entry is what the judge knows of one address, kept small: a botnet
// puts a million addresses in the judge for a TTL (176 bytes each, and
// the map's slot; a whole verify.Result made it 384). Clock times are
// offsets from the judge's start (Judge.clock), which keep the clock's
// monotonic reading.
//
// Of a result the judge keeps, for its TTL, the verdict, how and why it
// was reached, whether the IP list holds the address, the DNS failure
// and error (the address is the map's key): the names and answers it
// rests on go with its event, and a botnet's million addresses do not
// keep them. Verdict, method, reason and DNS failure are the verify
// package's constants and take no memory of their own; the DNS error,
// free text, is kept apart for the few addresses DNS failed for, and so
// are the PTR names of a verdict restored from a state file.
type entry struct {
	verdict        verify.Verdict
	method, reason string
	dnsFailure     string
	more           *entryMore
	inIPList       bool

	judged  bool // verdict is set
	busy    bool // queued or being checked
	attempt int32
	at      time.Duration // when the verdict was reached
	retryAt time.Duration // unverified: when to judge again
	// lastActivity is the clock time of the last hit, for forgetting.
	lastActivity time.Duration

	hits        int64
	first, last time.Time // as logged
	ua          string    // interned (Judge.intern)
}

// entryMore is what few entries keep beyond the verdict.
type entryMore struct {
	dnsError string
	ptr      []string
}

// set keeps what the judge keeps of r, its PTR names (if any) only with
// keepPTR.
func (e *entry) set(r verify.Result, keepPTR bool) {
	e.verdict, e.method, e.reason, e.dnsFailure, e.inIPList = r.Verdict, r.Method, r.Reason, r.DNSFailure, r.InIPList
	e.more = nil
	if len(r.PTR) == 0 {
		keepPTR = false
	}
	if r.DNSError != "" || keepPTR {
		e.more = &entryMore{dnsError: r.DNSError}
		if keepPTR {
			e.more.ptr = r.PTR
		}
	}
}

// result is the verdict standing for a, as the judge keeps it.
func (e *entry) result(a netip.Addr) verify.Result {
	r := verify.Result{Addr: a, Verdict: e.verdict, Method: e.method, Reason: e.reason, InIPList: e.inIPList,
		DNSFailure: e.dnsFailure}
	if e.more != nil {
		r.DNSError, r.PTR = e.more.dnsError, e.more.ptr
	}
	return r
}

// longAgo is an entry time that every clock time is a TTL after (Stale).
const longAgo = -1 << 62

// maxInterned bounds the user agents the judge interns; past it the
// table starts again (a botnet sends few distinct ones, a crawler one).
const maxInterned = 4096

// Judge judges addresses in the background: Seen never waits for DNS. It
// is safe for concurrent use.
//
// Addresses wait in two queues, and workers take from the first while it
// holds any: so that a botnet's thousands of new addresses a second never
// hold up the verdicts of the genuine crawler, the first queue has the
// addresses likely to be genuine — judged genuine before (judged again
// after the TTL), in the /16 (IPv4) or /32 (IPv6) of an address judged
// genuine now (a crawler's addresses come from few networks, a botnet's
// from everywhere: a million spoofers put about 15 addresses in a /16), or preferred by JudgeOptions.Prefer. Every other
// address waits in the second queue, first come first judged.
type Judge struct {
	o  JudgeOptions
	mu sync.Mutex
	m  map[netip.Addr]*entry
	// genuine are the addresses judged genuine now, for the guard;
	// genuineNets counts them by network; sorted is genuine in order,
	// made again when it is nil.
	genuine     map[netip.Addr]struct{}
	genuineNets map[netip.Prefix]int
	sorted      []netip.Addr
	first       []netip.Addr // likely genuine: judged first
	queue       []netip.Addr // every other address
	wake        chan struct{}
	emitMu      sync.Mutex // OnVerdict one at a time
	busy        int        // addresses queued, being checked or being handed to OnVerdict

	checks, forgotten int64
	// counts are the addresses held by verdict (countOf), kept as they
	// change so that Stats reads no entry.
	counts [4]int
	// early counts the verdicts forgotten before their TTL, at
	// MaxAddresses; said tells the bound was said.
	early int64
	said  bool
	// clock is when the judge was made: entries' clock times are
	// offsets from it.
	clock time.Time
	// uas interns user agents: a botnet's million addresses send a few
	// distinct ones, each kept once.
	uas map[string]string
}

// NewJudge returns a judge; Run starts its workers.
func NewJudge(o JudgeOptions) *Judge {
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.TTL <= 0 {
		o.TTL = DefaultVerdictTTL
	}
	if o.RetryMin <= 0 {
		o.RetryMin = DefaultRetryMin
	}
	if o.RetryMax <= 0 {
		o.RetryMax = DefaultRetryMax
	}
	o.RetryMax = max(o.RetryMax, o.RetryMin)
	if o.MaxAddresses <= 0 {
		o.MaxAddresses = DefaultMaxAddresses
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Judge{o: o, m: map[netip.Addr]*entry{}, genuine: map[netip.Addr]struct{}{}, genuineNets: map[netip.Prefix]int{},
		wake: make(chan struct{}, 1), clock: o.Now(), uas: map[string]string{}}
}

// since is clock time t as an entry keeps it.
func (j *Judge) since(t time.Time) time.Duration { return t.Sub(j.clock) }

// The indexes of Judge.counts.
const (
	countPending = iota
	countGenuine
	countSpoofed
	countUnverified
)

// countOf is the index in Judge.counts of what e holds.
func countOf(e *entry) int {
	switch {
	case !e.judged:
		return countPending
	case e.verdict == verify.Genuine:
		return countGenuine
	case e.verdict == verify.Spoofed:
		return countSpoofed
	}
	return countUnverified
}

// rangeChunk is how many entries of a map rangeLocked visits at a time.
const rangeChunk = 1024

// rangeLocked calls take with each entry of m, holding mu, but lets go of
// mu after every rangeChunk entries and calls flush (when not nil)
// without it, once more at the end: so that those who change m (Seen,
// settle, a block) wait at most for rangeChunk calls of take, never for
// what flush does with them (encode them, write them to a file), however
// large m is. take may delete the entry it is given. m may change while
// mu is let go: the language lets a map change during a range (an entry
// removed before it is reached is not produced, one added may be or
// not), and mu orders the changes before the range goes on. An error of
// flush ends the range and is returned.
func rangeLocked[K comparable, V any](mu *sync.Mutex, m map[K]V, take func(K, V), flush func() error) error {
	mu.Lock()
	i := 0
	for k, v := range m {
		take(k, v)
		if i++; i%rangeChunk == 0 {
			mu.Unlock()
			if flush != nil {
				if err := flush(); err != nil {
					return err
				}
			}
			mu.Lock()
		}
	}
	mu.Unlock()
	if flush != nil {
		return flush()
	}
	return nil
}

// intern returns ua, shared with the entries that have it; j.mu is held.
func (j *Judge) intern(ua string) string {
	if ua == "" {
		return ""
	}
	if s, ok := j.uas[ua]; ok {
		return s
	}
	if len(j.uas) >= maxInterned {
		clear(j.uas)
	}
	j.uas[ua] = ua
	return ua
}

// Hit is what the judge keeps of a request from an address.
type Hit struct {
	Time      time.Time // as logged
	UserAgent string
}

// Seen notes a request from a (IPv4-mapped addresses are unmapped) and
// returns its verdict when one stands. A new address, or one whose verdict
// is older than the TTL, is queued to be judged; Seen itself never waits.
func (j *Judge) Seen(a netip.Addr, h Hit) (verify.Result, bool) {
	a = a.Unmap().WithZone("")
	now := j.since(j.o.Now())
	j.mu.Lock()
	defer j.mu.Unlock()
	e := j.m[a]
	if e == nil {
		e = &entry{first: h.Time, ua: j.intern(h.UserAgent)}
		j.m[a] = e
		j.counts[countPending]++
	}
	e.hits++
	e.last = h.Time
	if e.first.IsZero() || h.Time.Before(e.first) {
		e.first = h.Time
	}
	if e.ua == "" {
		e.ua = j.intern(h.UserAgent)
	}
	e.lastActivity = now
	if !e.busy && (!e.judged || now-e.at >= j.o.TTL) {
		j.enqueue(a, e)
	}
	if !e.judged {
		return verify.Result{}, false
	}
	return e.result(a), true
}

// Stale makes every standing verdict due: each address is judged again
// the next time it is seen (after a reload of the IP lists, whose change
// may turn a verdict). Verdicts stand until then.
func (j *Judge) Stale() {
	rangeLocked(&j.mu, j.m, func(_ netip.Addr, e *entry) { e.at = longAgo }, nil)
}

// Result returns the verdict that stands for a, if any: the address, the
// verdict, its method, reason and DNS failure (see entry).
func (j *Judge) Result(a netip.Addr) (verify.Result, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	a = a.Unmap().WithZone("")
	e := j.m[a]
	if e == nil || !e.judged {
		return verify.Result{}, false
	}
	return e.result(a), true
}

// netOf is the network a crawler's neighbouring addresses share: the /16
// of an IPv4 address (Googlebot's 66.249.64.0/19, Applebot's 17.0.0.0/8),
// the /32 of an IPv6 one (an operator's allocation).
func netOf(a netip.Addr) netip.Prefix {
	bits := 32
	if a.Is4() {
		bits = 16
	}
	p, _ := a.Prefix(bits)
	return p
}

// likely reports whether a is likely genuine, to be judged first; j.mu is
// held.
func (j *Judge) likely(a netip.Addr, e *entry) bool {
	if e.judged && e.verdict == verify.Genuine {
		return true
	}
	if j.genuineNets[netOf(a)] > 0 {
		return true
	}
	return j.o.Prefer != nil && j.o.Prefer(a)
}

// setGenuine notes whether a is judged genuine now; j.mu is held. The
// first genuine address of a network moves the addresses of that network
// that wait in the second queue to the first.
func (j *Judge) setGenuine(a netip.Addr, genuine bool) {
	_, was := j.genuine[a]
	switch {
	case genuine && !was:
		j.genuine[a] = struct{}{}
		j.sorted = nil
		n := netOf(a)
		if j.genuineNets[n]++; j.genuineNets[n] == 1 {
			j.promote(n)
		}
	case !genuine && was:
		delete(j.genuine, a)
		j.sorted = nil
		n := netOf(a)
		if j.genuineNets[n]--; j.genuineNets[n] <= 0 {
			delete(j.genuineNets, n)
		}
	}
}

// promote moves the addresses of network n from the second queue to the
// first, in their order; j.mu is held.
func (j *Judge) promote(n netip.Prefix) {
	k := 0
	for _, a := range j.queue {
		if n.Contains(a) {
			j.first = append(j.first, a)
			continue
		}
		j.queue[k] = a
		k++
	}
	clear(j.queue[k:])
	j.queue = j.queue[:k]
}

// enqueue queues a for a worker; j.mu is held.
func (j *Judge) enqueue(a netip.Addr, e *entry) {
	e.busy = true
	j.busy++
	if j.likely(a, e) {
		j.first = append(j.first, a)
	} else {
		j.queue = append(j.queue, a)
	}
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

// Tick does the judge's housekeeping at the clock's time: unverified
// addresses whose backoff has run out are judged again, and addresses not
// seen for a TTL are forgotten (their verdicts with them), so memory holds
// only what the last TTL saw. Call it every few seconds.
func (j *Judge) Tick() {
	now := j.since(j.o.Now())
	// A chunk at a time: a botnet's million addresses would hold up Seen
	// and the verdicts for the whole pass.
	rangeLocked(&j.mu, j.m, func(a netip.Addr, e *entry) {
		switch {
		case e.busy:
		case now-e.lastActivity >= j.o.TTL && (!e.judged || now-e.at >= j.o.TTL):
			delete(j.m, a)
			j.counts[countOf(e)]--
			j.setGenuine(a, false)
			j.forgotten++
		case e.judged && e.verdict == verify.Unverified && e.attempt > 0 && now >= e.retryAt:
			j.enqueue(a, e)
		}
	}, nil)
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.m) > j.o.MaxAddresses {
		j.forgetEarly(len(j.m) - j.o.MaxAddresses*9/10)
	}
	if cap(j.queue) > 1024 && len(j.queue) < cap(j.queue)/4 {
		j.queue = append([]netip.Addr(nil), j.queue...)
	}
	if cap(j.first) > 1024 && len(j.first) < cap(j.first)/4 {
		j.first = append([]netip.Addr(nil), j.first...)
	}
}

// forgetEarly forgets about n settled verdicts other than genuine, those
// seen least recently, at MaxAddresses; j.mu is held. The time before
// which to forget is read from a sample of them (the map's order is
// random enough), and one pass forgets at most n.
func (j *Judge) forgetEarly(n int) {
	const sampleSize = 4096
	forgettable := func(e *entry) bool { return !e.busy && e.judged && e.verdict != verify.Genuine }
	var sample []time.Duration
	total := 0
	for _, e := range j.m {
		if !forgettable(e) {
			continue
		}
		total++
		if len(sample) < sampleSize {
			sample = append(sample, e.lastActivity)
		}
	}
	if total == 0 {
		return
	}
	slices.Sort(sample)
	// The share of the forgettable to forget, and the time below which
	// about that share was last seen (all of them at the same time: ties
	// are forgotten in the map's order).
	i := min(len(sample)-1, max(0, (n*len(sample)+total-1)/total-1))
	before := sample[i]
	k := 0
	for a, e := range j.m {
		if k >= n {
			break
		}
		if forgettable(e) && e.lastActivity <= before {
			delete(j.m, a)
			j.counts[countOf(e)]--
			k++
		}
	}
	j.forgotten += int64(k)
	j.early += int64(k)
	if !j.said && j.o.Say != nil {
		j.said = true
		j.o.Say(fmt.Sprintf("judge: %d addresses held, the most allowed: verdicts other than genuine seen least recently are forgotten before their TTL (judged again if seen again); %d so far", j.o.MaxAddresses, k))
	}
}

// Run verifies queued addresses with Concurrency workers until ctx ends.
func (j *Judge) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for range j.o.Concurrency {
		wg.Go(func() { j.work(ctx) })
	}
	wg.Wait()
}

func (j *Judge) work(ctx context.Context) {
	for {
		a, ok := j.next()
		if !ok {
			select {
			case <-j.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		r := j.o.Checker.Check(ctx, a)
		if ctx.Err() != nil {
			return
		}
		j.settle(a, r)
	}
}

// next takes the first queued address, from the first queue while it
// holds any; when more remain it passes the wake-up on to another worker.
func (j *Judge) next() (netip.Addr, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var a netip.Addr
	switch {
	case len(j.first) > 0:
		a = j.first[0]
		j.first = j.first[1:]
	case len(j.queue) > 0:
		a = j.queue[0]
		j.queue = j.queue[1:]
	default:
		return netip.Addr{}, false
	}
	if len(j.first)+len(j.queue) > 0 {
		select {
		case j.wake <- struct{}{}:
		default:
		}
	}
	return a, true
}

// retryable reports whether an unverified result may change when asked
// again: DNS failed in a way that time may mend.
func retryable(r verify.Result) bool {
	if r.Verdict != verify.Unverified || r.Reason != verify.ReasonDNSError {
		return false
	}
	switch r.DNSFailure {
	case verify.DNSFailureNoResolver, verify.DNSFailureTooManyNames:
		return false
	}
	return true
}

// settle records a judgement and hands it to OnVerdict.
func (j *Judge) settle(a netip.Addr, r verify.Result) {
	// OnVerdict calls follow one another in the order of settling; it may
	// call the judge, so j.mu is not held around it.
	j.emitMu.Lock()
	defer j.emitMu.Unlock()
	now := j.since(j.o.Now())
	j.mu.Lock()
	e := j.m[a]
	if e == nil { // forgotten meanwhile cannot happen while busy; be safe
		e = &entry{}
		j.m[a] = e
		j.counts[countPending]++
	}
	v := Verdict{Result: r}
	if e.judged {
		v.Previous = e.verdict
	}
	j.counts[countOf(e)]--
	e.set(r, false)
	e.judged, e.busy, e.at = true, false, now
	j.counts[countOf(e)]++
	j.setGenuine(a, r.Verdict == verify.Genuine)
	j.checks++
	if retryable(r) {
		e.attempt++
		wait := j.o.RetryMin << min(e.attempt-1, 20)
		e.retryAt = now + min(wait, j.o.RetryMax)
	} else {
		e.attempt = 0
	}
	v.Attempt = int(e.attempt)
	v.Hits, v.FirstSeen, v.LastSeen, v.UserAgent = e.hits, e.first, e.last, e.ua
	j.mu.Unlock()
	if j.o.OnVerdict != nil {
		j.o.OnVerdict(v)
	}
	j.mu.Lock()
	j.busy--
	j.mu.Unlock()
}

// Idle reports whether the judge has nothing to do: no address queued,
// being checked, or being handed to OnVerdict.
func (j *Judge) Idle() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.busy == 0
}

// JudgeStats counts what the judge holds and did.
type JudgeStats struct {
	// Addresses known now, by verdict; Pending are those not judged yet.
	Genuine, Spoofed, Unverified, Pending int
	// Queued are waiting for a worker (pending ones and judgements again).
	Queued int
	// Checks counts judgements made; Forgotten addresses dropped after a
	// TTL without a request.
	Checks, Forgotten int64
	// Early counts the verdicts forgotten before their TTL because the
	// judge held MaxAddresses (counted in Forgotten too).
	Early int64
}

// Stats returns the counts now; it reads no entry (the state writer asks
// every few seconds, `watch status` at will).
func (j *Judge) Stats() JudgeStats {
	j.mu.Lock()
	defer j.mu.Unlock()
	return JudgeStats{Queued: len(j.first) + len(j.queue), Checks: j.checks, Forgotten: j.forgotten, Early: j.early,
		Pending: j.counts[countPending], Genuine: j.counts[countGenuine], Spoofed: j.counts[countSpoofed],
		Unverified: j.counts[countUnverified]}
}

// Genuine returns the addresses judged genuine now, sorted: the guard
// spares them. The slice is shared: the caller must not change it. It is
// made again only when the genuine addresses change, so that the guard,
// asked about every spoofer, sorts nothing.
func (j *Judge) Genuine() []netip.Addr {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.sorted == nil {
		j.sorted = make([]netip.Addr, 0, len(j.genuine))
		for a := range j.genuine {
			j.sorted = append(j.sorted, a)
		}
		slices.SortFunc(j.sorted, netip.Addr.Compare)
	}
	return j.sorted
}

// Restore sets the verdict r of r.Addr as reached at `at` (a state file's,
// after a restart): it stands until the TTL from at, and the address is
// not judged again before, however often it is seen; unseen, it is
// forgotten then. An address the judge knows already keeps what it has.
// It returns whether r was set.
func (j *Judge) Restore(r verify.Result, at time.Time) bool {
	a := r.Addr.Unmap().WithZone("")
	if !a.IsValid() {
		return false
	}
	r.Addr = a
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.m[a]; ok {
		return false
	}
	e := &entry{judged: true, at: j.since(at), lastActivity: j.since(at)}
	e.set(r, true)
	j.m[a] = e
	j.counts[countOf(e)]++
	j.setGenuine(a, r.Verdict == verify.Genuine)
	return true
}

// Standing is a verdict that stands, as Judge.Verdicts hands it: what
// the judge keeps of it, and when it was reached (it stands until the TTL
// after).
type Standing struct {
	Addr           netip.Addr
	Verdict        verify.Verdict
	Method, Reason string
	PTR            []string // shared: not to be changed
	Listed         bool
	At             time.Time
}

// Verdicts calls f with the verdicts that stand, but for unverified ones
// that DNS may turn when asked again, a few at a time: the judge is
// locked only while it copies them into the slice f is given (reused
// after f returns), never while f runs, so that writing a million of them
// holds up no verdict. f may call the judge. A verdict reached or
// forgotten meanwhile may be in it or not, and an address forgotten and
// seen again meanwhile may be in it twice. An error of f ends it and is
// returned.
func (j *Judge) Verdicts(f func([]Standing) error) error {
	now := j.since(j.o.Now())
	buf := make([]Standing, 0, rangeChunk)
	return rangeLocked(&j.mu, j.m, func(a netip.Addr, e *entry) {
		if !e.judged || now-e.at >= j.o.TTL {
			return
		}
		if e.verdict == verify.Unverified && e.reason == verify.ReasonDNSError && retryable(e.result(a)) {
			return
		}
		s := Standing{Addr: a, Verdict: e.verdict, Method: e.method, Reason: e.reason, Listed: e.inIPList, At: j.clock.Add(e.at)}
		if e.more != nil {
			s.PTR = e.more.ptr
		}
		buf = append(buf, s)
	}, func() error {
		if len(buf) == 0 {
			return nil
		}
		err := f(buf)
		clear(buf)
		buf = buf[:0]
		return err
	})
}

// TTL is how long a verdict stands.
func (j *Judge) TTL() time.Duration { return j.o.TTL }
