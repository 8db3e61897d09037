package crowdsec

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of a Queue.
const (
	// DefaultQueueMax is how many bans may wait for the Local API.
	DefaultQueueMax = 65536
	// DefaultMinBackoff and DefaultMaxBackoff bound the wait between two
	// tries while the Local API fails: it doubles from the first to the
	// second.
	DefaultMinBackoff = time.Second
	DefaultMaxBackoff = time.Minute
)

// ErrQueueFull means a ban was not queued: too many wait already.
var ErrQueueFull = errors.New("too many crowdsec decisions wait")

// Queue pushes bans as they come, in the background, through a Pusher:
// Add never waits; Run pushes what waits, in batches, and while the Local
// API is down or refusing keeps every ban (up to Max) and tries again with
// a growing backoff. Each outage is said once, when it begins, and once
// when it ends.
type Queue struct {
	Pusher *Pusher
	// Max bounds the bans waiting; zero means DefaultQueueMax.
	Max int
	// Say tells people of an outage and of its end; nil says nothing.
	Say func(msg string)
	// MinBackoff and MaxBackoff bound the wait between tries; zero means
	// the defaults.
	MinBackoff, MaxBackoff time.Duration
	// After is the clock the backoff waits on; nil means time.After.
	After func(time.Duration) <-chan time.Time
	// OnPush, when set, is told of each push that did something (tests).
	OnPush func(Result)

	once  sync.Once
	wake  chan struct{}
	mu    sync.Mutex
	order []netip.Prefix
	items map[netip.Prefix]Ban

	added, extended, kept, failed, dropped atomic.Int64
}

func (q *Queue) init() {
	q.once.Do(func() {
		q.wake = make(chan struct{}, 1)
		q.items = map[netip.Prefix]Ban{}
	})
}

// Add queues b; a ban of a prefix already waiting adds its evidence to
// it. It returns ErrQueueFull, and drops b, when Max bans wait.
func (q *Queue) Add(b Ban) error {
	q.init()
	if !b.Prefix.IsValid() {
		return nil
	}
	q.mu.Lock()
	if w, ok := q.items[b.Prefix]; ok {
		w.Evidence = append(w.Evidence, b.Evidence...)
		q.items[b.Prefix] = w
		q.mu.Unlock()
		return nil
	}
	max := q.Max
	if max <= 0 {
		max = DefaultQueueMax
	}
	if len(q.order) >= max {
		q.mu.Unlock()
		q.dropped.Add(1)
		return fmt.Errorf("%w (%d): %s is not pushed", ErrQueueFull, max, b.Value())
	}
	q.items[b.Prefix] = b
	q.order = append(q.order, b.Prefix)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return nil
}

// Waiting is how many bans wait.
func (q *Queue) Waiting() int {
	q.init()
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.order)
}

// QueueStats count what a Queue did.
type QueueStats struct {
	// Added, Extended and Kept count decisions as Result does.
	Added, Extended, Kept int64
	// Failed counts pushes that failed (each retried); Dropped, bans not
	// queued because the queue was full; Waiting, bans waiting now.
	Failed, Dropped, Waiting int64
}

// Stats returns the counts so far.
func (q *Queue) Stats() QueueStats {
	return QueueStats{Added: q.added.Load(), Extended: q.extended.Load(), Kept: q.kept.Load(),
		Failed: q.failed.Load(), Dropped: q.dropped.Load(), Waiting: int64(q.Waiting())}
}

func (q *Queue) say(msg string) {
	if q.Say != nil {
		q.Say(msg)
	}
}

func (q *Queue) after(d time.Duration) <-chan time.Time {
	if q.After != nil {
		return q.After(d)
	}
	return time.After(d)
}

// Run pushes queued bans until ctx ends. Bans still waiting then are said.
func (q *Queue) Run(ctx context.Context) {
	q.init()
	minB, maxB := q.MinBackoff, q.MaxBackoff
	if minB <= 0 {
		minB = DefaultMinBackoff
	}
	if maxB < minB {
		maxB = max(DefaultMaxBackoff, minB)
	}
	backoff := minB
	down := false
	where := q.Pusher.Client.Credentials.URL
	for {
		batch := q.next()
		if len(batch) == 0 {
			select {
			case <-q.wake:
				continue
			case <-ctx.Done():
				q.stop()
				return
			}
		}
		res, err := q.Pusher.Push(ctx, batch)
		q.done(res)
		if ctx.Err() != nil {
			q.stop()
			return
		}
		if err != nil {
			q.failed.Add(1)
			if !down {
				down = true
				q.say(fmt.Sprintf("crowdsec: cannot push decisions: %v; %d wait and are pushed when the Local API takes them (retrying with backoff up to %s)", err, q.Waiting(), maxB))
			}
			select {
			case <-q.after(backoff):
			case <-ctx.Done():
				q.stop()
				return
			}
			backoff = min(2*backoff, maxB)
			continue
		}
		if down {
			down = false
			q.say(fmt.Sprintf("crowdsec: %s takes decisions again; %d wait", where, q.Waiting()))
		}
		backoff = minB
		q.Pusher.Forget()
	}
}

// next copies out the first batch of waiting bans.
func (q *Queue) next() []Ban {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := q.Pusher.Batch
	if n <= 0 {
		n = DefaultBatch
	}
	n = min(n, len(q.order))
	out := make([]Ban, n)
	for i, p := range q.order[:n] {
		out[i] = q.items[p]
	}
	return out
}

// done takes the bans a push did out of the queue and counts them.
func (q *Queue) done(res Result) {
	q.added.Add(int64(res.Added))
	q.extended.Add(int64(res.Extended))
	q.kept.Add(int64(res.Kept))
	if len(res.Done) == 0 {
		return
	}
	q.drop(res.Done)
	if q.OnPush != nil {
		q.OnPush(res)
	}
}

// stop says what was left waiting when Run ends.
func (q *Queue) stop() {
	if n := q.Waiting(); n > 0 {
		q.say(fmt.Sprintf("crowdsec: %d decisions not pushed: stopped before the Local API took them", n))
	}
}

// Lift drops the waiting bans of prefixes and ends the decisions of ours
// in force on them (Pusher.Lift); it returns the values whose decisions
// it ended.
func (q *Queue) Lift(ctx context.Context, prefixes []netip.Prefix) ([]string, error) {
	q.init()
	q.drop(prefixes)
	return q.Pusher.Lift(ctx, prefixes)
}

// drop takes the bans of prefixes out of the queue.
func (q *Queue) drop(prefixes []netip.Prefix) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, p := range prefixes {
		delete(q.items, p)
	}
	rest := q.order[:0]
	for _, p := range q.order {
		if _, ok := q.items[p]; ok {
			rest = append(rest, p)
		}
	}
	clear(q.order[len(rest):])
	q.order = rest
}
