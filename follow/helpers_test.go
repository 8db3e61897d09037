package follow

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// hang is how long a test waits for something that must happen before it
// calls it a hang. Nothing depends on it otherwise.
const hang = 20 * time.Second

// rec is a line or an event as the collector saw it.
type rec struct {
	line Line // Text copied
	ev   *Event
}

func (r rec) String() string {
	if r.ev != nil {
		return "event " + r.ev.Kind.String() + " " + r.ev.File
	}
	return fmt.Sprintf("%s:%d@%d %.60q", filepath.Base(r.line.File), r.line.Num, r.line.Offset, r.line.Text)
}

// collector runs Next in a goroutine and keeps what it delivers.
type collector struct {
	t      *testing.T
	f      *Follower
	mu     sync.Mutex
	recs   []rec
	signal chan struct{}
	done   chan struct{}
}

// clock is a ticker factory whose ticks the test sends. The channels are
// unbuffered: a tick is taken only by a tailer waiting for one, so two
// ticks in a row mean a whole poll ran in between.
type clock struct {
	mu sync.Mutex
	cs []chan time.Time
	d  time.Duration
}

func (c *clock) newTicker(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time)
	c.cs = append(c.cs, ch)
	c.d = d
	return ch, func() {}
}

// settle ticks every tailer twice: each has then polled at least once
// after the call began.
func (c *clock) settle(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	cs := append([]chan time.Time(nil), c.cs...)
	c.mu.Unlock()
	for i := 0; i < 2; i++ {
		for _, ch := range cs {
			select {
			case ch <- time.Now():
			case <-time.After(hang):
				t.Fatal("a tailer did not take a tick: hung")
			}
		}
	}
}

// start makes a Follower and a collector that stop when the test ends.
func start(t *testing.T, paths []string, o Options) *collector {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	o.OnEvent = nil
	c := &collector{t: t, signal: make(chan struct{}, 1), done: make(chan struct{})}
	o.OnEvent = func(e Event) {
		c.add(rec{ev: &e})
	}
	f, err := New(ctx, paths, o)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	c.f = f
	go func() {
		defer close(c.done)
		for f.Next() {
			l := f.Line()
			l.Text = []byte(string(l.Text))
			c.add(rec{line: l})
		}
	}()
	t.Cleanup(func() {
		cancel()
		stopped := make(chan struct{})
		go func() { f.Close(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(hang):
			t.Error("Close did not return: hung")
		}
		<-c.done
	})
	return c
}

func (c *collector) add(r rec) {
	c.mu.Lock()
	c.recs = append(c.recs, r)
	c.mu.Unlock()
	select {
	case c.signal <- struct{}{}:
	default:
	}
}

// snapshot returns what was delivered so far.
func (c *collector) snapshot() []rec {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]rec(nil), c.recs...)
}

// waitFor waits until cond holds for what was delivered.
func (c *collector) waitFor(what string, cond func([]rec) bool) []rec {
	c.t.Helper()
	deadline := time.After(hang)
	for {
		rs := c.snapshot()
		if cond(rs) {
			return rs
		}
		select {
		case <-c.signal:
		case <-deadline:
			c.t.Fatalf("waiting for %s: hung; delivered:\n%s", what, dump(rs))
		}
	}
}

// waitLines waits until n lines were delivered and returns their texts.
func (c *collector) waitLines(n int) []string {
	c.t.Helper()
	rs := c.waitFor(fmt.Sprintf("%d lines", n), func(rs []rec) bool { return len(texts(rs)) >= n })
	return texts(rs)
}

// waitEvent waits until the n-th event of kind k.
func (c *collector) waitEvent(k EventKind, n int) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("%d %s events", n, k), func(rs []rec) bool { return len(events(rs, k)) >= n })
}

func texts(rs []rec) []string {
	var out []string
	for _, r := range rs {
		if r.ev == nil {
			out = append(out, string(r.line.Text))
		}
	}
	return out
}

func lines(rs []rec) []Line {
	var out []Line
	for _, r := range rs {
		if r.ev == nil {
			out = append(out, r.line)
		}
	}
	return out
}

func events(rs []rec, k EventKind) []Event {
	var out []Event
	for _, r := range rs {
		if r.ev != nil && r.ev.Kind == k {
			out = append(out, *r.ev)
		}
	}
	return out
}

func dump(rs []rec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d lines; the last records:\n", len(lines(rs)))
	// Where numbered lines ("line N ...") skip or go back.
	prev := 0
	for i, r := range rs {
		var n int
		if r.ev != nil || !strings.HasPrefix(string(r.line.Text), "line ") {
			continue
		}
		fmt.Sscanf(string(r.line.Text), "line %d", &n)
		if n != prev+1 {
			fmt.Fprintf(&b, "  gap: %d after %d at record %d:\n", n, prev, i)
			for _, x := range rs[max(0, i-4):min(len(rs), i+2)] {
				b.WriteString("    " + x.String() + "\n")
			}
		}
		prev = n
	}
	for _, r := range rs[max(0, len(rs)-40):] {
		b.WriteString(r.String() + "\n")
	}
	return b.String()
}

// appendFile appends content to path.
func appendFile(t *testing.T, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
}

func tempLog(t *testing.T) string {
	return filepath.Join(t.TempDir(), "access.log")
}
