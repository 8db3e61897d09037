package watch

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/verify"
)

// heldAdder is a block set that takes nothing until released: each Add
// says it began, then waits.
type heldAdder struct {
	began   chan netip.Addr
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	added   map[netip.Addr]bool
}

func newHeldAdder() *heldAdder {
	return &heldAdder{began: make(chan netip.Addr, 1<<12), release: make(chan struct{}), added: map[netip.Addr]bool{}}
}

func (h *heldAdder) Add(ctx context.Context, a netip.Addr) error {
	h.began <- a
	select {
	case <-h.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	h.mu.Lock()
	h.added[a] = true
	h.mu.Unlock()
	return nil
}

func (h *heldAdder) open() { h.once.Do(func() { close(h.release) }) }

// waitEvents waits until the events hold a verdict line for every address.
func waitEvents(t *testing.T, ev *lockedBuffer, addrs ...string) {
	t.Helper()
	deadline := time.Now().Add(hang)
	for {
		s := ev.String()
		all := true
		for _, a := range addrs {
			all = all && strings.Contains(s, `"ip":"`+a+`"`)
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no verdict events for all of %v (hang); events:\n%s", addrs, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// While the block set takes nothing, verdicts go on: the genuine crawler's
// and the spoofers' alike, and every spoofer is added once it takes them.
func TestVerdictsDoNotWaitForTheBlockSet(t *testing.T) {
	z := newZone()
	z.crawler("192.0.2.10", "crawler-1.bot.lohisoft.com")
	srv := z.serve(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	if err := os.WriteFile(log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	held := newHeldAdder()
	t.Cleanup(held.open)
	events := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	list := &verify.IPList{}
	var w *Watcher
	j := NewJudge(JudgeOptions{Checker: checkerFor(srv, list, nil), OnVerdict: func(v Verdict) { w.OnVerdictOf(ctx, lohiName)(v) }})
	w = New(Options{Files: []string{log}, SiteOf: func(string) string { return "www.example" },
		Subjects: []Subject{{Name: lohiName, Tokens: lohiTokens, Judge: j}},
		Guard:    NewGuard(list, nil, j.Genuine), Events: &Events{W: events}, Adder: held})
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() { held.open(); cancel(); <-done })
	<-w.Started()

	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ua := "Mozilla/5.0 (compatible; LohiSoftBot/1.0)"
	f.WriteString(combined("203.0.113.1", 0, "/", ua))
	select {
	case <-held.began:
	case <-time.After(hang):
		t.Fatal("the first spoofer never reached the block set")
	}
	// The first add hangs; 30 spoofers and the crawler come.
	var want []string
	for i := 2; i <= 31; i++ {
		a := fmt.Sprintf("203.0.113.%d", i)
		want = append(want, a)
		f.WriteString(combined(a, i, "/", ua))
	}
	f.WriteString(combined("192.0.2.10", 40, "/", ua))
	waitEvents(t, events, append(want, "192.0.2.10")...)
	for _, l := range strings.Split(events.String(), "\n") {
		if strings.Contains(l, `"ip":"192.0.2.10"`) && !strings.Contains(l, `"verdict":"genuine"`) {
			t.Fatalf("the crawler's verdict is not genuine: %s", l)
		}
	}
	held.open()
	deadline := time.Now().Add(hang)
	for w.Stats().Blocked < 31 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 31 spoofers blocked once the set took them (hang)", w.Stats().Blocked)
		}
		time.Sleep(5 * time.Millisecond)
	}
	held.mu.Lock()
	defer held.mu.Unlock()
	if held.added[netip.MustParseAddr("192.0.2.10")] || len(held.added) != 31 {
		t.Errorf("the set took %d addresses (the crawler's: %v), want the 31 spoofers", len(held.added), held.added[netip.MustParseAddr("192.0.2.10")])
	}
}

// Addresses likely to be genuine are judged before the spoofers that
// came first: one in the network of a genuine address, one Prefer names.
func TestJudgeLikelyGenuineFirst(t *testing.T) {
	z := newZone()
	z.crawler("192.0.2.10", "crawler-1.bot.lohisoft.com")
	z.crawler("192.0.2.11", "crawler-2.bot.lohisoft.com")
	z.crawler("198.18.7.1", "crawler-3.bot.lohisoft.com")
	release := z.holdAddr("198.51.100.1")
	defer release()
	srv := z.serve(t)
	got := newVerdicts()
	prefer := netip.MustParseAddr("198.18.7.1")
	j := startJudge(t, JudgeOptions{Checker: checkerFor(srv, &verify.IPList{}, nil), Concurrency: 1, OnVerdict: got.on,
		Prefer: func(a netip.Addr) bool { return a == prefer }})

	j.Seen(netip.MustParseAddr("192.0.2.10"), Hit{})
	if v := got.next(t); v.Verdict != verify.Genuine {
		t.Fatalf("192.0.2.10: %s", v.Verdict)
	}
	// The one worker waits for the held answer; 50 spoofers queue, then
	// the genuine neighbour and the preferred address.
	j.Seen(netip.MustParseAddr("198.51.100.1"), Hit{})
	for deadline := time.Now().Add(hang); z.count("198.51.100.1") == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the held address was never asked for (hang)")
		}
	}
	for i := range 50 {
		j.Seen(netip.MustParseAddr(fmt.Sprintf("203.0.113.%d", i+1)), Hit{})
	}
	j.Seen(netip.MustParseAddr("192.0.2.11"), Hit{})
	j.Seen(prefer, Hit{})
	if s := j.Stats(); s.Queued != 52 {
		t.Fatalf("%d queued, want 52", s.Queued)
	}
	release()
	if v := got.next(t); v.Addr.String() != "198.51.100.1" {
		t.Fatalf("first after the release: %s", v.Addr)
	}
	for _, want := range []string{"192.0.2.11", "198.18.7.1"} {
		if v := got.next(t); v.Addr.String() != want || v.Verdict != verify.Genuine {
			t.Errorf("next verdict: %s %s, want %s genuine ahead of the spoofers", v.Addr, v.Verdict, want)
		}
	}
	for range 50 {
		if v := got.next(t); v.Verdict != verify.Spoofed {
			t.Errorf("%s: %s, want spoofed", v.Addr, v.Verdict)
		}
	}
}

// hitTracker records the hits the conduct checks get.
type hitTracker struct {
	mu   sync.Mutex
	hits []conduct.Hit
}

func (h *hitTracker) Add(x conduct.Hit) []conduct.Violation {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hits = append(h.hits, x)
	return nil
}

func (h *hitTracker) Prune(time.Time) {}

func (h *hitTracker) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.hits)
}

// Hits that wait for a late verdict past the queue's bound are counted and
// said, never dropped unsaid; a spoofer's hits take no room at all.
func TestConductQueueOverflowIsSaid(t *testing.T) {
	z := newZone()
	z.crawler("192.0.2.10", "crawler-1.bot.lohisoft.com")
	release := z.holdAddr("198.51.100.1")
	defer release()
	srv := z.serve(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	says := make(chan string, 16)
	tr := &hitTracker{}
	list := &verify.IPList{}
	settled := make(chan netip.Addr, 16)
	var w *Watcher
	j := NewJudge(JudgeOptions{Checker: checkerFor(srv, list, nil), OnVerdict: func(v Verdict) {
		w.OnVerdictOf(ctx, lohiName)(v)
		settled <- v.Addr
	}})
	w = New(Options{Subjects: []Subject{{Name: lohiName, Tokens: lohiTokens, Judge: j, Tracker: tr}},
		Guard: NewGuard(list, nil, j.Genuine), Events: &Events{W: &lockedBuffer{}}, Say: func(s string) { says <- s }})
	go j.Run(ctx)
	rec := func(a string, sec int) *parse.Record {
		return &parse.Record{Client: netip.MustParseAddr(a), Claims: 1, Time: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(sec) * time.Millisecond)}
	}
	// wait waits for the verdicts of addrs, in any order.
	wait := func(addrs ...string) {
		t.Helper()
		want := map[string]bool{}
		for _, a := range addrs {
			want[a] = true
		}
		for len(want) > 0 {
			select {
			case got := <-settled:
				if !want[got.String()] {
					t.Fatalf("verdict for %s, want one of %v", got, want)
				}
				delete(want, got.String())
			case <-time.After(hang):
				t.Fatalf("no verdict for %v (hang)", want)
			}
		}
	}
	w.record(rec("192.0.2.10", 0))
	w.record(rec("203.0.113.9", 0))
	wait("192.0.2.10", "203.0.113.9")
	// A known spoofer's hits, past the bound: none is queued.
	for i := range maxConductQueue + 10 {
		w.record(rec("203.0.113.9", i))
	}
	// The held address's hit heads the queue; the crawler's hits wait
	// behind it until the queue is full: then the oldest, the held
	// address's, is left unchecked, and the crawler's go through.
	w.record(rec("198.51.100.1", 1))
	for i := range maxConductQueue + 5 {
		w.record(rec("192.0.2.10", 2+i))
	}
	if got := w.Stats().Unchecked; got != 1 {
		t.Errorf("%d hits left unchecked, want 1 (the held address's)", got)
	}
	if got, want := tr.len(), 1+maxConductQueue+5; got != want {
		t.Errorf("the checks got %d hits, want %d", got, want)
	}
	for _, want := range []string{"the oldest are left unchecked", "checked again; 1 request was left unchecked so far"} {
		select {
		case s := <-says:
			if !strings.Contains(s, want) {
				t.Errorf("said %q, want %q", s, want)
			}
		default:
			t.Errorf("not said: %q", want)
		}
	}
	if s := w.Summary(); !strings.Contains(s, "1 claimed request left unchecked") {
		t.Errorf("summary: %s", s)
	}
	release()
	wait("198.51.100.1")
}

// The first genuine address of a network moves its neighbours that wait
// behind spoofers ahead of them.
func TestJudgePromotesNeighbours(t *testing.T) {
	z := newZone()
	z.crawler("192.0.2.10", "crawler-1.bot.lohisoft.com")
	z.crawler("192.0.2.11", "crawler-2.bot.lohisoft.com")
	release := z.holdAddr("198.51.100.1")
	defer release()
	srv := z.serve(t)
	got := newVerdicts()
	j := startJudge(t, JudgeOptions{Checker: checkerFor(srv, &verify.IPList{}, nil), Concurrency: 1, OnVerdict: got.on})

	j.Seen(netip.MustParseAddr("198.51.100.1"), Hit{})
	for deadline := time.Now().Add(hang); z.count("198.51.100.1") == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the held address was never asked for (hang)")
		}
	}
	// No network is genuine yet: all wait in the second queue.
	var want []string
	add := func(a string) {
		j.Seen(netip.MustParseAddr(a), Hit{})
		want = append(want, a)
	}
	for i := range 10 {
		add(fmt.Sprintf("203.0.113.%d", i+1))
	}
	add("192.0.2.10")
	for i := range 40 {
		add(fmt.Sprintf("203.0.113.%d", i+11))
	}
	add("192.0.2.11")
	release()
	if v := got.next(t); v.Addr.String() != "198.51.100.1" {
		t.Fatalf("first after the release: %s", v.Addr)
	}
	// 192.0.2.11 moves up once 192.0.2.10 is genuine.
	want = append(append(append([]string(nil), want[:11]...), "192.0.2.11"), want[11:51]...)
	for i, w := range want {
		if v := got.next(t); v.Addr.String() != w {
			t.Fatalf("verdict %d: %s, want %s", i, v.Addr, w)
		}
	}
}
