package watch

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lohisoft/lohibot-audit/verify"
)

// Bounds of the blocking queues.
const (
	// maxActQueue bounds the spoofers that wait for their actions (guard,
	// block set, command); more are not acted on, and that is said.
	maxActQueue = 1 << 18
	// maxAddRound is how many addresses one round of adds hands the
	// block set at once (the Adder puts them in few transactions).
	maxAddRound = 4096
	// linger is how long a round waits for more once its first spoofer
	// has come, when the last round had more than one and ended less than
	// busy before: at a botnet's rate it gathers tens of spoofers, each
	// round's plan and transaction costing about as much as one, at the
	// price of this much more time to the block set; spoofers that come
	// one by one wait for nothing.
	linger = 2 * time.Millisecond
	busy   = 10 * linger
)

// A spoofer's actions are carried out off the verdict path, so that no
// verdict waits for a block set or a command: OnVerdictOf queues the
// spoofer and returns; one goroutine (actLoop) asks the guard about all
// that have come at once and queues the actions; another (addLoop) hands
// the addresses to the block set in rounds. Each round takes what has
// come within linger of its first spoofer when spoofers come in numbers
// (and what came while the last round was busy), so that one plan and
// one transaction serve many spoofers.

// actItem is a judged spoofer waiting for its actions.
type actItem struct {
	crawler string
	v       Verdict
}

// actQueue is a first-in first-out queue of spoofers, bounded by
// maxActQueue.
type actQueue struct {
	mu      sync.Mutex
	items   []actItem
	wake    chan struct{}
	dropped atomic.Int64
}

func newActQueue() *actQueue { return &actQueue{wake: make(chan struct{}, 1)} }

// push queues it, or returns false when the queue is full.
func (q *actQueue) push(it actItem) bool {
	q.mu.Lock()
	if len(q.items) >= maxActQueue {
		q.mu.Unlock()
		q.dropped.Add(1)
		return false
	}
	q.items = append(q.items, it)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return true
}

// take returns what is queued, up to n items, and leaves the rest.
func (q *actQueue) take(n int) []actItem {
	q.mu.Lock()
	defer q.mu.Unlock()
	n = min(n, len(q.items))
	out := append([]actItem(nil), q.items[:n]...)
	clear(q.items[:n])
	q.items = q.items[n:]
	if len(q.items) == 0 {
		q.items = nil
	} else {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
	return out
}

func (q *actQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// queueAct queues the actions on a judged spoofer; it never waits.
func (w *Watcher) queueAct(crawler string, v Verdict) {
	w.acting.Add(1)
	if !w.acts.push(actItem{crawler, v}) {
		w.acting.Add(-1)
		w.sayOnce(fmt.Sprintf("blocking: %d spoofers wait for their actions; more are not acted on until they are judged again", maxActQueue))
	}
}

// actLoop carries out the queued actions until ctx ends.
func (w *Watcher) actLoop(ctx context.Context) {
	var last time.Time // when the last round ended
	lastN := 0         // and how many it had
	for {
		select {
		case <-w.acts.wake:
		case <-ctx.Done():
			return
		}
		if lastN > 1 && time.Since(last) < busy && w.acts.len() < maxAddRound {
			time.Sleep(linger)
		}
		items := w.acts.take(maxAddRound)
		rs := make([]verify.Result, len(items))
		for i, it := range items {
			rs[i] = it.v.Result
		}
		// One plan for the lot: the guard's cost is per round, not per
		// spoofer.
		as, whys := w.o.Guard.BlockableAll(rs)
		for i, it := range items {
			w.act(ctx, it.crawler, it.v, as[i], whys[i])
			w.acting.Add(-1)
		}
		w.handAdds(ctx)
		last, lastN = time.Now(), len(items)
	}
}

// block queues a for the add loop, which gets the round's addresses
// together once actLoop has acted on the round; only actLoop calls it
// (through act).
func (w *Watcher) block(ctx context.Context, a netip.Addr) {
	w.adding.Add(1)
	w.toAdd = append(w.toAdd, a)
}

// handAdds hands the round's addresses to the add loop, waiting while it
// has rounds enough to do.
func (w *Watcher) handAdds(ctx context.Context) {
	if len(w.toAdd) == 0 {
		return
	}
	select {
	case w.adds <- w.toAdd:
	case <-ctx.Done():
		w.adding.Add(-int64(len(w.toAdd)))
	}
	w.toAdd = nil
}

// addLoop adds the addresses actLoop hands it to the Adder until ctx
// ends: each round takes what has come (up to maxAddRound addresses, or
// one round of actLoop's) and adds it at once.
func (w *Watcher) addLoop(ctx context.Context) {
	var round []netip.Addr
	var errs []error
	for {
		select {
		case r := <-w.adds:
			round = append(round[:0], r...)
		case <-ctx.Done():
			return
		}
	more:
		for len(round) < maxAddRound {
			select {
			case r := <-w.adds:
				round = append(round, r...)
			default:
				break more
			}
		}
		errs = slices.Grow(errs[:0], len(round))[:len(round)]
		var wg sync.WaitGroup
		for i, a := range round {
			wg.Go(func() {
				actx, cancel := context.WithTimeout(ctx, DefaultAddTimeout)
				errs[i] = w.o.Adder.Add(actx, a)
				cancel()
			})
		}
		wg.Wait()
		for i, a := range round {
			switch err := errs[i]; {
			case err == nil:
				w.blocked.Add(1)
				if w.o.OnBlocked != nil {
					w.o.OnBlocked(a)
				}
			case ctx.Err() == nil:
				w.blockFailed.Add(1)
				w.o.Say(fmt.Sprintf("nftables: cannot add %s: %v", a, err))
			}
		}
		clear(errs)
		w.adding.Add(-int64(len(round)))
	}
}
