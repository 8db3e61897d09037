package crowdsec

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/crowdsectest"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/interrupt"
)

// These tests push to a real Local API: Debian's crowdsec run by
// crowdsectest, each test with its own, and read back with cscli.

func newClient(t *testing.T, l *crowdsectest.LAPI) *Client {
	t.Helper()
	c, err := ReadCredentials(l.Credentials)
	if err != nil {
		t.Fatal(err)
	}
	return &Client{Credentials: c, UserAgent: "lohibot-audit/test", Scenarios: []string{Scenario("lohisoftbot")}}
}

func ban(p string) Ban {
	pfx := netip.MustParsePrefix(p)
	return Ban{Prefix: pfx, Crawler: "lohisoftbot", Evidence: []Evidence{spoofer(pfx.Addr().String(), "LohiSoftBot/1.0")}}
}

// values maps each decision's value to its decisions.
func values(ds []crowdsectest.Decision) map[string][]crowdsectest.Decision {
	m := map[string][]crowdsectest.Decision{}
	for _, d := range ds {
		m[d.Value] = append(m[d.Value], d)
	}
	return m
}

func ids(ds []crowdsectest.Decision) []int64 {
	var out []int64
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

func TestPushAddsKeepsExtends(t *testing.T) {
	t.Parallel()
	l := crowdsectest.Start(t)
	ctx := context.Background()
	bans := []Ban{ban("203.0.113.7/32"), ban("2001:db8:1:2::7/128"), ban("2001:db8:1:2::/64")}
	day := 24 * time.Hour

	p := &Pusher{Client: newClient(t, l), TTL: day, Version: "test"}
	res, err := p.Push(ctx, bans)
	if err != nil {
		t.Fatal(err)
	}
	if res.Added != 3 || res.Kept != 0 || res.Extended != 0 || len(res.Done) != 3 {
		t.Errorf("first push: %+v", res)
	}
	ds := l.Decisions(t)
	if len(ds) != 3 {
		t.Fatalf("decisions after the first push: %+v", ds)
	}
	if listed := l.Listed(t); len(listed) != 3 {
		t.Errorf("cscli decisions list shows %+v", listed)
	}
	want := map[string]string{"203.0.113.7": "Ip", "2001:db8:1:2::7": "Ip", "2001:db8:1:2::/64": "Range"}
	for _, d := range ds {
		if want[d.Value] != d.Scope || d.Type != "ban" || d.Origin != "cscli" || d.Scenario != "lohibot-audit/spoofed-lohisoftbot" {
			t.Errorf("decision %+v", d)
		}
		if d.Left > day || d.Left < day*9/10 {
			t.Errorf("decision %s has %s left, want about %s", d.Value, d.Left, day)
		}
		if !strings.Contains(d.Message, "lohibot-audit test: ") || !strings.Contains(d.Message, "claimed to be lohisoftbot in 12 requests") || !strings.Contains(d.Message, "PTR crawl-7.evil.example") {
			t.Errorf("alert of %s: message %q", d.Value, d.Message)
		}
	}
	first := ids(ds)

	// Pushed again by a run that knows nothing: kept, not duplicated.
	p2 := &Pusher{Client: newClient(t, l), TTL: day, Version: "test"}
	if res, err = p2.Push(ctx, bans); err != nil {
		t.Fatal(err)
	}
	if res.Added != 0 || res.Kept != 3 || res.Extended != 0 {
		t.Errorf("second push: %+v", res)
	}
	if got := ids(l.Decisions(t)); !slices.Equal(got, first) {
		t.Errorf("after the second push, decisions %v, want %v", got, first)
	}
	// The same Pusher again asks nothing: what it pushed is in force.
	if res, err = p.Push(ctx, bans); err != nil || res.Kept != 3 {
		t.Errorf("third push: %+v, %v", res, err)
	}

	// A longer TTL extends each: a new decision, the old one ended.
	p3 := &Pusher{Client: newClient(t, l), TTL: 3 * day, Version: "test"}
	if res, err = p3.Push(ctx, bans); err != nil {
		t.Fatal(err)
	}
	if res.Extended != 3 || res.Removed != 3 || res.Added != 0 {
		t.Errorf("extending push: %+v", res)
	}
	ds = l.Decisions(t)
	if len(ds) != 3 {
		t.Fatalf("decisions after extending: %+v", ds)
	}
	for _, d := range ds {
		if slices.Contains(first, d.ID) || d.Left <= day {
			t.Errorf("decision %d for %s with %s left was not extended", d.ID, d.Value, d.Left)
		}
	}

	// A shorter TTL never shortens.
	p4 := &Pusher{Client: newClient(t, l), TTL: time.Hour, Version: "test"}
	if res, err = p4.Push(ctx, bans); err != nil || res.Kept != 3 || res.Added+res.Extended != 0 {
		t.Errorf("shorter push: %+v, %v", res, err)
	}
	if got := l.Decisions(t); len(got) != 3 || got[0].Left <= day {
		t.Errorf("after the shorter push: %+v", got)
	}
}

func TestPushLeavesOthersAndMergesDuplicates(t *testing.T) {
	t.Parallel()
	l := crowdsectest.Start(t)
	ctx := context.Background()
	// Someone else's ban of one address, and two of ours for another (two
	// hosts pushing at once).
	l.Cscli(t, "decisions", "add", "--ip", "198.51.100.1", "--duration", "2h", "--reason", "manual ban")
	l.Cscli(t, "decisions", "add", "--ip", "198.51.100.2", "--duration", "30h", "--reason", "lohibot-audit/spoofed-lohisoftbot")
	l.Cscli(t, "decisions", "add", "--ip", "198.51.100.2", "--duration", "29h", "--reason", "lohibot-audit/spoofed-lohisoftbot")

	p := &Pusher{Client: newClient(t, l), TTL: 24 * time.Hour, Version: "test"}
	res, err := p.Push(ctx, []Ban{ban("198.51.100.1/32"), ban("198.51.100.2/32")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Added != 1 || res.Kept != 1 || res.Removed != 1 {
		t.Errorf("push: %+v", res)
	}
	byValue := values(l.Decisions(t))
	if got := byValue["198.51.100.1"]; len(got) != 2 {
		t.Errorf("198.51.100.1: %+v, want the manual ban and ours", got)
	}
	if got := byValue["198.51.100.2"]; len(got) != 1 || got[0].Left < 29*time.Hour {
		t.Errorf("198.51.100.2: %+v, want the 30h decision alone", got)
	}
}

func TestPushMany(t *testing.T) {
	t.Parallel()
	l := crowdsectest.Start(t)
	ctx := context.Background()
	var bans []Ban
	for i := range 250 {
		bans = append(bans, ban(fmt.Sprintf("203.0.%d.%d/32", 113+i/200, 1+i%200)))
	}
	// Two bans of one prefix are one decision with both evidences.
	dup := ban("203.0.113.1/32")
	dup.Evidence[0].UserAgent = "other"
	bans = append(bans, dup)
	p := &Pusher{Client: newClient(t, l), TTL: time.Hour, Version: "test", Batch: 40}
	res, err := p.Push(ctx, bans)
	if err != nil || res.Added != 250 {
		t.Fatalf("push: %+v, %v", res, err)
	}
	// A run that knows nothing asks for every decision of the scenario at
	// once, and keeps them all.
	p2 := &Pusher{Client: newClient(t, l), TTL: time.Hour, Version: "test"}
	if res, err = p2.Push(ctx, bans); err != nil || res.Kept != 250 || res.Added != 0 {
		t.Fatalf("second push: %+v, %v", res, err)
	}
	byValue := values(l.Decisions(t))
	if len(byValue) != 250 {
		t.Errorf("%d values hold decisions, want 250", len(byValue))
	}
	for v, ds := range byValue {
		if len(ds) != 1 {
			t.Errorf("%s has %d decisions", v, len(ds))
		}
	}
	if m := byValue["203.0.113.1"][0]; !strings.HasSuffix(m.Message, "; and 1 more address") {
		t.Errorf("merged ban's alert message: %q", m.Message)
	}
}

func TestPushDownAndRefused(t *testing.T) {
	t.Parallel()
	l := crowdsectest.Start(t)
	ctx := context.Background()
	c := newClient(t, l)

	bad := newClient(t, l)
	bad.Credentials.Password = "wrong-password-of-the-test"
	p := &Pusher{Client: bad, TTL: time.Hour}
	_, err := p.Push(ctx, []Ban{ban("203.0.113.5/32")})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), bad.Credentials.Password) {
		t.Errorf("wrong password: %v", err)
	}

	l.Stop()
	p = &Pusher{Client: c, TTL: time.Hour}
	_, err = p.Push(ctx, []Ban{ban("203.0.113.5/32")})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), l.URL) {
		t.Errorf("down: %v", err)
	}
	l.Restart(t)
	res, err := p.Push(ctx, []Ban{ban("203.0.113.5/32")})
	if err != nil || res.Added != 1 {
		t.Errorf("after restart: %+v, %v", res, err)
	}
	if ds := l.Decisions(t); len(ds) != 1 {
		t.Errorf("decisions: %+v", ds)
	}
}

// fakeAfter is a backoff clock the test lets go.
type fakeAfter struct {
	mu    sync.Mutex
	waits []time.Duration
	ch    chan time.Time
	asked chan struct{}
}

func newFakeAfter() *fakeAfter {
	return &fakeAfter{ch: make(chan time.Time), asked: make(chan struct{}, 100)}
}

func (f *fakeAfter) After(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	f.waits = append(f.waits, d)
	f.mu.Unlock()
	f.asked <- struct{}{}
	return f.ch
}

func TestQueueOutage(t *testing.T) {
	t.Parallel()
	l := crowdsectest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	var said []string
	var sayMu sync.Mutex
	pushed := make(chan Result, 100)
	saying := make(chan string, 100)
	clock := newFakeAfter()
	q := &Queue{
		Pusher: &Pusher{Client: newClient(t, l), TTL: time.Hour, Version: "test"},
		Say: func(m string) {
			sayMu.Lock()
			said = append(said, m)
			sayMu.Unlock()
			saying <- m
		},
		After:  clock.After,
		OnPush: func(r Result) { pushed <- r },
		Max:    3,
	}
	done := make(chan struct{})
	go func() { q.Run(ctx); close(done) }()

	if err := q.Add(ban("203.0.113.1/32")); err != nil {
		t.Fatal(err)
	}
	if r := <-pushed; r.Added != 1 {
		t.Errorf("first push: %+v", r)
	}

	// The Local API goes down: bans wait, the outage is said once, the
	// backoff grows. The first ban's push fails and the queue waits on
	// the clock (asked) before the others come, so that the outage is
	// said with one ban waiting: the queue may try at any moment after
	// an Add, and the test waits for that try, not for time.
	l.Stop()
	if err := q.Add(ban("203.0.113.2/32")); err != nil {
		t.Fatal(err)
	}
	<-clock.asked
	for _, p := range []string{"203.0.113.3/32", "2001:db8::/64"} {
		if err := q.Add(ban(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Add(ban("203.0.113.4/32")); !errors.Is(err, ErrQueueFull) {
		t.Errorf("a fourth waiting ban: %v", err)
	}
	// A ban of a prefix that waits already is no new one.
	if err := q.Add(ban("203.0.113.2/32")); err != nil {
		t.Errorf("a ban that waits already: %v", err)
	}
	clock.ch <- time.Time{}
	<-clock.asked
	l.Restart(t)
	clock.ch <- time.Time{}
	if r := <-pushed; r.Added != 3 {
		t.Errorf("push after the outage: %+v", r)
	}
	// The queue says the Local API is back after the push is counted:
	// wait for it, then stop.
	for m := ""; !strings.Contains(m, "takes decisions again"); {
		select {
		case m = <-saying:
		case <-time.After(time.Minute):
			t.Fatal("the end of the outage was never said")
		}
	}
	cancel()
	<-done

	clock.mu.Lock()
	if len(clock.waits) != 2 || clock.waits[1] != 2*clock.waits[0] {
		t.Errorf("backoff waits %v", clock.waits)
	}
	clock.mu.Unlock()
	sayMu.Lock()
	if len(said) != 2 || !strings.Contains(said[0], "cannot push decisions") || !strings.Contains(said[0], "1 wait") ||
		!strings.Contains(said[1], "takes decisions again") {
		t.Errorf("said %q", said)
	}
	sayMu.Unlock()
	if s := q.Stats(); s.Added != 4 || s.Dropped != 1 || s.Failed != 2 || s.Waiting != 0 {
		t.Errorf("stats %+v", s)
	}
	byValue := values(l.Decisions(t))
	if len(byValue) != 4 {
		t.Errorf("decisions for %d values, want 4: %v", len(byValue), byValue)
	}
	for v, ds := range byValue {
		if len(ds) != 1 {
			t.Errorf("%s has %d decisions", v, len(ds))
		}
	}
}

func TestLiftEndsOursOnly(t *testing.T) {
	t.Parallel()
	l := crowdsectest.Start(t)
	ctx := context.Background()
	// Someone else's ban of the address, beside ours.
	l.Cscli(t, "decisions", "add", "--ip", "203.0.113.7", "--duration", "2h", "--reason", "manual ban")
	q := &Queue{Pusher: &Pusher{Client: newClient(t, l), TTL: 24 * time.Hour, Version: "test"}}
	bans := []Ban{ban("203.0.113.7/32"), ban("2001:db8:1:2::7/128"), ban("2001:db8:1:2::/64"), ban("198.51.100.9/32")}
	if _, err := q.Pusher.Push(ctx, bans); err != nil {
		t.Fatal(err)
	}
	// A ban still waiting is dropped too.
	if err := q.Add(ban("192.0.2.55/32")); err != nil {
		t.Fatal(err)
	}
	got, err := q.Lift(ctx, []netip.Prefix{netip.MustParsePrefix("203.0.113.7/32"), netip.MustParsePrefix("2001:db8:1:2::7/128"),
		netip.MustParsePrefix("2001:db8:1:2::/64"), netip.MustParsePrefix("192.0.2.55/32")})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []string{"2001:db8:1:2::/64", "2001:db8:1:2::7", "203.0.113.7"}; !slices.Equal(got, want) {
		t.Errorf("lifted %v, want %v", got, want)
	}
	if q.Waiting() != 0 {
		t.Errorf("%d bans still wait", q.Waiting())
	}
	byValue := values(l.Decisions(t))
	if d := byValue["203.0.113.7"]; len(d) != 1 || d[0].Scenario == Scenario("lohisoftbot") {
		t.Errorf("203.0.113.7: %+v, want the manual ban alone", d)
	}
	if len(byValue["2001:db8:1:2::7"])+len(byValue["2001:db8:1:2::/64"]) != 0 {
		t.Errorf("IPv6 decisions left: %+v", byValue)
	}
	if len(byValue["198.51.100.9"]) != 1 {
		t.Errorf("a decision not lifted was ended: %+v", byValue)
	}
	// Pushed again, a lifted value is asked about afresh and added.
	res, err := q.Pusher.Push(ctx, []Ban{ban("203.0.113.7/32")})
	if err != nil || res.Added != 1 {
		t.Errorf("push after lift: %+v, %v", res, err)
	}
}

// Agent.Push ends as the command line says it: pushed, with the result;
// cancelled, interrupted; the Local API down, an output not written that
// says how many decisions are in force.
func TestAgentPush(t *testing.T) {
	t.Parallel()
	l := crowdsectest.Start(t)
	creds, err := ReadCredentials(l.Credentials)
	if err != nil {
		t.Fatal(err)
	}
	a := Agent{Version: "test"}
	res, err := a.Push(context.Background(), creds, time.Hour, []Ban{ban("203.0.113.6/32")})
	if err != nil || res.Added != 1 {
		t.Errorf("pushed: %+v, %v; want 1 decision added", res, err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Push(cancelled, creds, time.Hour, []Ban{ban("203.0.113.7/32")}); !errors.Is(err, interrupt.ErrInterrupted) {
		t.Errorf("cancelled: %v, want interrupted", err)
	}
	l.Stop()
	_, err = a.Push(context.Background(), creds, time.Hour, []Ban{ban("203.0.113.7/32")})
	if fail.KindOf(err) != fail.Unwritten || !strings.HasPrefix(err.Error(), "crowdsec: 0 of 1 decision in force, then: ") {
		t.Errorf("down: %v (kind %v), want an output not written", err, fail.KindOf(err))
	}
}
