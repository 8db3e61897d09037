package watch

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/lohisoft/lohibot-audit/verify"
)

// startJudge runs a judge until the test ends.
func startJudge(t *testing.T, o JudgeOptions) *Judge {
	t.Helper()
	j := NewJudge(o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { j.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return j
}

func TestJudgeVerdictsFromRealDNS(t *testing.T) {
	z := newZone()
	z.crawler("192.0.2.10", "crawler-1.bot.lohisoft.com")
	srv := z.serve(t)
	clock := newFakeClock()
	got := newVerdicts()
	j := startJudge(t, JudgeOptions{Checker: checkerFor(srv, &verify.IPList{}, clock.Now), Now: clock.Now, OnVerdict: got.on})

	for _, a := range []string{"192.0.2.10", "203.0.113.7"} {
		if _, ok := j.Seen(netip.MustParseAddr(a), Hit{UserAgent: "LohiSoftBot/1.0"}); ok {
			t.Fatalf("%s: a verdict before any judgement", a)
		}
	}
	want := map[string]verify.Verdict{"192.0.2.10": verify.Genuine, "203.0.113.7": verify.Spoofed}
	for range want {
		v := got.next(t)
		if w := want[v.Addr.String()]; v.Verdict != w || !v.New() || v.Hits != 1 || v.UserAgent != "LohiSoftBot/1.0" {
			t.Errorf("%s: got %s (new %v, hits %d, ua %q), want %s, new, 1 hit", v.Addr, v.Verdict, v.New(), v.Hits, v.UserAgent, w)
		}
	}
	if r, ok := j.Result(netip.MustParseAddr("::ffff:203.0.113.7")); !ok || r.Verdict != verify.Spoofed || r.Reason != verify.ReasonNoPTR {
		t.Errorf("mapped form: got %+v %v, want spoofed no-ptr", r, ok)
	}
	if g := j.Genuine(); len(g) != 1 || g[0] != netip.MustParseAddr("192.0.2.10") {
		t.Errorf("Genuine() = %v", g)
	}
}

// A slow DNS answer for one address holds up neither the reading of the
// next line nor the judgement of the next address.
func TestJudgeSlowAnswerHoldsNothingUp(t *testing.T) {
	z := newZone()
	release := z.holdAddr("198.51.100.1")
	defer release()
	srv := z.serve(t)
	got := newVerdicts()
	j := startJudge(t, JudgeOptions{Checker: checkerFor(srv, &verify.IPList{}, nil), Concurrency: 2, OnVerdict: got.on})

	j.Seen(netip.MustParseAddr("198.51.100.1"), Hit{})
	// Seen returns at once however many addresses are slow.
	for i := range 100 {
		j.Seen(netip.MustParseAddr(fmt.Sprintf("203.0.113.%d", i)), Hit{})
	}
	seen := map[string]bool{}
	for range 100 {
		v := got.next(t)
		if v.Addr.String() == "198.51.100.1" {
			t.Fatal("the held address was judged before it was released")
		}
		seen[v.Addr.String()] = true
	}
	if len(seen) != 100 {
		t.Fatalf("judged %d distinct addresses, want 100", len(seen))
	}
	release()
	if v := got.next(t); v.Addr.String() != "198.51.100.1" || v.Verdict != verify.Spoofed {
		t.Fatalf("after release: %s %s", v.Addr, v.Verdict)
	}
}

// A verdict stands for its TTL: the address seen again within it is not
// judged again; after it, it is, with DNS asked again.
func TestJudgeTTL(t *testing.T) {
	z := newZone()
	srv := z.serve(t)
	clock := newFakeClock()
	got := newVerdicts()
	j := startJudge(t, JudgeOptions{Checker: checkerFor(srv, &verify.IPList{}, clock.Now), Now: clock.Now, TTL: time.Hour, OnVerdict: got.on})
	a := netip.MustParseAddr("203.0.113.9")
	j.Seen(a, Hit{})
	if v := got.next(t); v.Verdict != verify.Spoofed || !v.New() {
		t.Fatalf("first: %s new %v", v.Verdict, v.New())
	}
	clock.Advance(59 * time.Minute)
	if r, ok := j.Seen(a, Hit{}); !ok || r.Verdict != verify.Spoofed {
		t.Fatalf("within the TTL: %v %v", r.Verdict, ok)
	}
	if n := z.count("203.0.113.9"); n != 1 {
		t.Fatalf("within the TTL: %d PTR queries, want 1", n)
	}
	clock.Advance(time.Minute)
	j.Seen(a, Hit{})
	v := got.next(t)
	if v.Verdict != verify.Spoofed || v.New() || v.Hits != 3 {
		t.Fatalf("after the TTL: %s new %v hits %d, want spoofed, not new, 3 hits", v.Verdict, v.New(), v.Hits)
	}
	if n := z.count("203.0.113.9"); n != 2 {
		t.Fatalf("after the TTL: %d PTR queries, want 2", n)
	}
	if s := j.Stats(); s.Checks != 2 || s.Spoofed != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// An address left unverified by a DNS failure is judged again when its
// backoff has run out, and not before; the backoff doubles.
func TestJudgeRetriesUnverifiedWithBackoff(t *testing.T) {
	z := newZone()
	z.crawler("192.0.2.20", "crawler-2.bot.lohisoft.com")
	z.failAddr("192.0.2.20", true)
	srv := z.serve(t)
	clock := newFakeClock()
	got := newVerdicts()
	j := startJudge(t, JudgeOptions{Checker: checkerFor(srv, &verify.IPList{}, clock.Now), Now: clock.Now,
		RetryMin: 30 * time.Second, RetryMax: time.Hour, OnVerdict: got.on})
	a := netip.MustParseAddr("192.0.2.20")
	j.Seen(a, Hit{})
	v := got.next(t)
	if v.Verdict != verify.Unverified || v.Attempt != 1 || v.DNSFailure != verify.DNSFailureServFail {
		t.Fatalf("first: %s attempt %d dns %q", v.Verdict, v.Attempt, v.DNSFailure)
	}
	for i, wait := range []time.Duration{30 * time.Second, time.Minute} {
		clock.Advance(wait - time.Second)
		j.Tick()
		if s := j.Stats(); s.Queued != 0 || s.Checks != int64(i+1) {
			t.Fatalf("retry %d: judged again before the backoff ran out: %+v", i+1, s)
		}
		clock.Advance(time.Second)
		j.Tick()
		v = got.next(t)
		if v.Verdict != verify.Unverified || v.Attempt != i+2 {
			t.Fatalf("retry %d: %s attempt %d", i+1, v.Verdict, v.Attempt)
		}
	}
	z.failAddr("192.0.2.20", false)
	clock.Advance(2 * time.Minute)
	j.Tick()
	v = got.next(t)
	if v.Verdict != verify.Genuine || v.Attempt != 0 || v.Previous != verify.Unverified {
		t.Fatalf("after DNS came back: %s attempt %d previous %s", v.Verdict, v.Attempt, v.Previous)
	}
	clock.Advance(time.Hour - time.Second)
	j.Tick()
	if s := j.Stats(); s.Queued != 0 || s.Checks != 4 {
		t.Fatalf("a settled address was judged again by Tick: %+v", s)
	}
}

// Memory holds what the last TTL saw: addresses not seen for a TTL are
// forgotten.
func TestJudgeForgetsIdleAddresses(t *testing.T) {
	z := newZone()
	srv := z.serve(t)
	clock := newFakeClock()
	got := newVerdicts()
	j := startJudge(t, JudgeOptions{Checker: checkerFor(srv, &verify.IPList{}, clock.Now), Now: clock.Now, TTL: 10 * time.Minute, OnVerdict: got.on})
	for round := range 3 {
		for i := range 200 {
			j.Seen(netip.AddrFrom4([4]byte{203, 0, byte(113 + round), byte(i)}), Hit{})
		}
		for range 200 {
			got.next(t)
		}
		if s := j.Stats(); s.Spoofed != 200 {
			t.Fatalf("round %d: %d spoofed held, want 200 (the earlier rounds forgotten)", round, s.Spoofed)
		}
		clock.Advance(10 * time.Minute)
		j.Tick()
		if s := j.Stats(); s.Spoofed+s.Genuine+s.Unverified+s.Pending != 0 {
			t.Fatalf("round %d: still held after a TTL idle: %+v", round, s)
		}
	}
	if s := j.Stats(); s.Forgotten != 600 {
		t.Fatalf("forgotten %d, want 600", s.Forgotten)
	}
}

// What stands for an address for its TTL is what its event said of it
// but the names and answers: verdict, method, reason, IP list, DNS
// failure and error; and the judge keeps one copy of each user agent.
func TestJudgeKeepsWhatStands(t *testing.T) {
	z := newZone()
	z.crawler("192.0.2.30", "crawler-3.bot.lohisoft.com")
	z.failAddr("192.0.2.30", true)
	srv := z.serve(t)
	clock := newFakeClock()
	got := newVerdicts()
	j := startJudge(t, JudgeOptions{Checker: checkerFor(srv, &verify.IPList{}, clock.Now), Now: clock.Now, OnVerdict: got.on})
	ua := func() string { return string([]byte("Mozilla/5.0 (compatible; LohiSoftBot/1.0)")) } // a copy each time, as parsed
	for _, a := range []string{"192.0.2.30", "203.0.113.30"} {
		j.Seen(netip.MustParseAddr(a), Hit{UserAgent: ua()})
	}
	events := map[string]Verdict{}
	for range 2 {
		v := got.next(t)
		events[v.Addr.String()] = v
	}
	for a, v := range events {
		if len(v.DNS) == 0 {
			t.Errorf("%s: the event carries no DNS answers", a)
		}
		want := verify.Result{Addr: v.Addr, Verdict: v.Verdict, Method: v.Method, Reason: v.Reason, InIPList: v.InIPList,
			DNSError: v.DNSError, DNSFailure: v.DNSFailure}
		r, ok := j.Result(netip.MustParseAddr(a))
		if !ok || fmt.Sprintf("%+v", r) != fmt.Sprintf("%+v", want) {
			t.Errorf("%s: stands as\n%+v\nwant\n%+v", a, r, want)
		}
		if s, ok := j.Seen(netip.MustParseAddr(a), Hit{UserAgent: ua()}); !ok || fmt.Sprintf("%+v", s) != fmt.Sprintf("%+v", want) {
			t.Errorf("%s: Seen says\n%+v\nwant\n%+v", a, s, want)
		}
	}
	if v := events["192.0.2.30"]; v.Verdict != verify.Unverified || v.DNSFailure != verify.DNSFailureServFail || v.DNSError == "" {
		t.Errorf("192.0.2.30: %s %q %q, want unverified for a servfail, with its error", v.Verdict, v.DNSFailure, v.DNSError)
	}
	if v := events["203.0.113.30"]; v.Verdict != verify.Spoofed || v.Reason != verify.ReasonNoPTR {
		t.Errorf("203.0.113.30: %s %s, want spoofed no-ptr", v.Verdict, v.Reason)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	a, b := j.m[netip.MustParseAddr("192.0.2.30")].ua, j.m[netip.MustParseAddr("203.0.113.30")].ua
	if a != ua() || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Errorf("user agents %q and %q are kept apart", a, b)
	}
}

// Past MaxAddresses the judge forgets the verdicts other than genuine seen
// least recently, says so once, and judges such an address again when it
// comes back; genuine verdicts and addresses waiting for theirs stay.
func TestJudgeBoundsAddresses(t *testing.T) {
	z := newZone()
	z.crawler("192.0.2.40", "crawler-4.bot.lohisoft.com")
	release := z.holdAddr("198.51.100.40")
	defer release()
	srv := z.serve(t)
	clock := newFakeClock()
	got := newVerdicts()
	var said []string
	j := startJudge(t, JudgeOptions{Checker: checkerFor(srv, &verify.IPList{}, clock.Now), Now: clock.Now, OnVerdict: got.on,
		MaxAddresses: 100, Say: func(m string) { said = append(said, m) }})
	spoofer := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{203, 0, byte(113 + i/200), byte(i)}) }
	j.Seen(netip.MustParseAddr("192.0.2.40"), Hit{})
	got.next(t)
	j.Seen(netip.MustParseAddr("198.51.100.40"), Hit{}) // waits for DNS throughout
	const n = 150
	for i := range n {
		clock.Advance(time.Second)
		j.Seen(spoofer(i), Hit{})
		if v := got.next(t); v.Verdict != verify.Spoofed {
			t.Fatalf("%s: %s", v.Addr, v.Verdict)
		}
	}
	j.Tick() // Tick is the caller of Say: said is not shared
	s := j.Stats()
	// 152 held, 100 allowed: forgotten down to 90.
	if held := s.Genuine + s.Spoofed + s.Unverified + s.Pending; held != 90 || s.Genuine != 1 || s.Pending != 1 || s.Early != 62 || s.Forgotten != 62 {
		t.Fatalf("after the bound: %+v, want 90 held (the genuine and the pending one among them), 62 forgotten early", s)
	}
	for i := range n {
		_, ok := j.Result(spoofer(i))
		if want := i >= 62; ok != want {
			t.Errorf("spoofer %d (seen %d s before the last): held %v, want %v", i, n-1-i, ok, want)
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "100 addresses held") {
		t.Errorf("said %q", said)
	}
	// A forgotten spoofer seen again is judged again.
	if _, ok := j.Seen(spoofer(0), Hit{}); ok {
		t.Fatal("a forgotten verdict still stands")
	}
	if v := got.next(t); v.Addr != spoofer(0) || v.Verdict != verify.Spoofed || !v.New() {
		t.Fatalf("judged again: %s %s new %v", v.Addr, v.Verdict, v.New())
	}
	j.Tick()
	if s := j.Stats(); s.Early != 62 || len(said) != 1 {
		t.Errorf("below the bound: %+v, said %d times", s, len(said))
	}
}

// A verdict restored from a state file stands as it was written, its PTR
// names and time included, and is handed back the same for the next one.
func TestJudgeRestoreRoundTrip(t *testing.T) {
	clock := newFakeClock()
	j := NewJudge(JudgeOptions{Checker: nil, Now: clock.Now, TTL: time.Hour})
	at := clock.Now().Add(-10 * time.Minute).UTC()
	in := []verify.Result{
		{Addr: netip.MustParseAddr("192.0.2.50"), Verdict: verify.Genuine, Method: verify.MethodFCrDNS, PTR: []string{"crawler-5.bot.lohisoft.com"}},
		{Addr: netip.MustParseAddr("203.0.113.50"), Verdict: verify.Spoofed, Method: verify.MethodFCrDNS, Reason: verify.ReasonNoPTR, PTR: []string{}},
	}
	for _, r := range in {
		if !j.Restore(r, at) {
			t.Fatalf("%s not restored", r.Addr)
		}
	}
	got := map[netip.Addr]verify.Result{}
	j.Verdicts(func(vs []Standing) error {
		for _, v := range vs {
			if !v.At.Equal(at) {
				t.Errorf("%s: judged at %s, want %s", v.Addr, v.At, at)
			}
			got[v.Addr] = verify.Result{Addr: v.Addr, Verdict: v.Verdict, Method: v.Method, Reason: v.Reason, PTR: v.PTR, InIPList: v.Listed}
		}
		return nil
	})
	in[1].PTR = nil // none kept: the state file writes none either
	for _, r := range in {
		if fmt.Sprintf("%+v", got[r.Addr]) != fmt.Sprintf("%+v", r) {
			t.Errorf("%s: handed back\n%+v\nwant\n%+v", r.Addr, got[r.Addr], r)
		}
	}
	if g := j.Genuine(); len(g) != 1 || g[0] != in[0].Addr {
		t.Errorf("genuine %v", g)
	}
	clock.Advance(50 * time.Minute)
	n := 0
	j.Verdicts(func(vs []Standing) error { n += len(vs); return nil })
	if n != 0 {
		t.Errorf("%d verdicts handed back after their TTL", n)
	}
}

// rangeLocked holds the lock only while it takes a chunk of entries, never
// while flush runs: flush may lock it, change the map and let go. Each
// entry there from the start and never removed is taken exactly once.
func TestRangeLockedLetsGoBetweenChunks(t *testing.T) {
	var mu sync.Mutex
	m := map[int]int{}
	const n = 5*rangeChunk + 17
	for i := range n {
		m[i] = i
	}
	taken := map[int]int{}
	var chunk []int
	flushes := 0
	next := n
	err := rangeLocked(&mu, m, func(k, v int) {
		if k != v {
			t.Errorf("entry %d holds %d", k, v)
		}
		taken[k]++
		chunk = append(chunk, k)
	}, func() error {
		flushes++
		if !mu.TryLock() {
			t.Fatal("flush called with the lock held")
		}
		// What Seen, settle and Tick do meanwhile: add, remove.
		for range 100 {
			m[next] = next
			next++
		}
		for k := range m {
			if k < n && taken[k] == 0 {
				delete(m, k)
				taken[k] = -1 // removed before it was reached
				break
			}
		}
		mu.Unlock()
		if len(chunk) > rangeChunk {
			t.Errorf("a chunk of %d entries", len(chunk))
		}
		chunk = chunk[:0]
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if flushes < n/rangeChunk {
		t.Errorf("%d flushes for %d entries", flushes, n)
	}
	for k := range n {
		if c := taken[k]; c != 1 && c != -1 {
			t.Errorf("entry %d taken %d times", k, c)
		}
	}
	for k, c := range taken {
		if c > 1 {
			t.Errorf("entry %d taken %d times", k, c)
		}
	}
	// An error of flush ends the range, the lock let go.
	boom := fmt.Errorf("boom")
	calls := 0
	if err := rangeLocked(&mu, m, func(int, int) {}, func() error { calls++; return boom }); err != boom || calls != 1 {
		t.Errorf("got %v after %d flushes", err, calls)
	}
	if !mu.TryLock() {
		t.Error("the lock is held after an error")
	}
}

// Verdicts hands the standing verdicts over with the judge unlocked: a
// verdict is made and read while the one writing them waits in f.
func TestJudgeVerdictsHoldUpNoVerdict(t *testing.T) {
	z := newZone()
	srv := z.serve(t)
	clock := newFakeClock()
	got := newVerdicts()
	j := startJudge(t, JudgeOptions{Checker: checkerFor(srv, &verify.IPList{}, clock.Now), Now: clock.Now, OnVerdict: got.on, TTL: time.Hour})
	const n = 3 * rangeChunk
	for i := range n {
		a := netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)})
		j.Restore(verify.Result{Addr: a, Verdict: verify.Spoofed, Method: verify.MethodFCrDNS, Reason: verify.ReasonNoPTR}, clock.Now())
	}
	fresh := netip.MustParseAddr("203.0.113.77")
	seen := map[netip.Addr]bool{}
	first := true
	err := j.Verdicts(func(vs []Standing) error {
		for _, v := range vs {
			if seen[v.Addr] {
				t.Errorf("%s handed twice", v.Addr)
			}
			seen[v.Addr] = true
		}
		if first {
			// The writer waits here (its file, say, is slow): the judge
			// goes on.
			first = false
			j.Seen(fresh, Hit{UserAgent: "LohiSoftBot/1.0"})
			if v := got.next(t); v.Addr != fresh || v.Verdict != verify.Spoofed {
				t.Errorf("verdict %s %s", v.Addr, v.Verdict)
			}
			if r, ok := j.Result(fresh); !ok || r.Verdict != verify.Spoofed {
				t.Errorf("result %+v %v", r, ok)
			}
			if s := j.Stats(); s.Spoofed != n+1 {
				t.Errorf("stats %+v", s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if a := netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}); !seen[a] {
			t.Fatalf("%s not handed", a)
		}
	}
}

// Stats keeps its counts as verdicts come and go, without reading the
// entries: they match a count of them after every kind of change.
func TestJudgeStatsCountsMatchEntries(t *testing.T) {
	z := newZone()
	z.crawler("192.0.2.10", "crawler-1.bot.lohisoft.com")
	srv := z.serve(t)
	clock := newFakeClock()
	got := newVerdicts()
	j := startJudge(t, JudgeOptions{Checker: checkerFor(srv, &verify.IPList{}, clock.Now), Now: clock.Now, OnVerdict: got.on,
		TTL: time.Hour, MaxAddresses: 20})
	check := func(when string) {
		t.Helper()
		j.mu.Lock()
		var want JudgeStats
		for _, e := range j.m {
			switch countOf(e) {
			case countPending:
				want.Pending++
			case countGenuine:
				want.Genuine++
			case countSpoofed:
				want.Spoofed++
			default:
				want.Unverified++
			}
		}
		c := j.counts
		j.mu.Unlock()
		if s := (JudgeStats{Pending: c[countPending], Genuine: c[countGenuine], Spoofed: c[countSpoofed], Unverified: c[countUnverified]}); s != want {
			t.Errorf("%s: counted %+v, entries %+v", when, s, want)
		}
	}
	z.failAddr("198.51.100.9", true)
	for _, a := range []string{"192.0.2.10", "203.0.113.1", "198.51.100.9"} {
		j.Seen(netip.MustParseAddr(a), Hit{})
	}
	check("seen")
	for range 3 {
		got.next(t)
	}
	check("judged")
	if s := j.Stats(); s.Genuine != 1 || s.Spoofed != 1 || s.Unverified != 1 {
		t.Errorf("judged: %+v", s)
	}
	// Judged again past the TTL, the spoofer's DNS failing now.
	clock.Advance(time.Hour + time.Second)
	z.failAddr("203.0.113.1", true)
	j.Seen(netip.MustParseAddr("203.0.113.1"), Hit{})
	check("judged again")
	if v := got.next(t); v.Previous != verify.Spoofed || v.Verdict != verify.Unverified {
		t.Fatalf("judged again: %s after %s", v.Verdict, v.Previous)
	}
	check("turned")
	if s := j.Stats(); s.Spoofed != 0 || s.Unverified != 2 {
		t.Errorf("turned: %+v", s)
	}
	for i := range 30 {
		j.Restore(verify.Result{Addr: netip.AddrFrom4([4]byte{10, 2, 0, byte(i)}), Verdict: verify.Spoofed}, clock.Now())
	}
	check("restored")
	j.Tick() // past MaxAddresses: forgotten early
	check("forgotten early")
	if s := j.Stats(); s.Early == 0 {
		t.Errorf("forgotten early: %+v", s)
	}
	clock.Advance(2 * time.Hour)
	j.Tick() // past the TTL: forgotten
	check("forgotten")
	if s := j.Stats(); s.Genuine+s.Spoofed+s.Unverified+s.Pending != 0 {
		t.Errorf("after the TTL: %+v", s)
	}
}
