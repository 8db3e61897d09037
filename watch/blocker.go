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
	"github.com/lohisoft/lohibot-audit/watchstate"
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

// addItem is an address for the block set, and the crawler it spoofed.
type addItem struct {
	addr    netip.Addr
	crawler string
	// ttl, when set, is how long the element lives (a block made again
	// at start with the time it had left); zero is the Adder's own.
	ttl time.Duration
}

// block queues a for the add loop, which gets the round's addresses
// together once actLoop has acted on the round; only actLoop calls it
// (through act).
func (w *Watcher) block(ctx context.Context, a netip.Addr, crawler string) {
	w.adding.Add(1)
	w.toAdd = append(w.toAdd, addItem{addr: a, crawler: crawler})
}

// handAdds hands the round's addresses to the add loop, waiting while it
// has rounds enough to do.
func (w *Watcher) handAdds(ctx context.Context) {
	if len(w.toAdd) == 0 {
		return
	}
	w.handRound(ctx, w.toAdd)
	w.toAdd = nil
}

// handRound hands a round of addresses (counted in w.adding already) to
// the add loop.
func (w *Watcher) handRound(ctx context.Context, round []addItem) {
	select {
	case w.adds <- round:
	case <-ctx.Done():
		w.adding.Add(-int64(len(round)))
	}
}

// addLoop adds the addresses actLoop hands it to the Adder until ctx
// ends: each round takes what has come (up to maxAddRound addresses, or
// one round of actLoop's) and adds it at once. An address an operator
// unblocked meanwhile is left out: Unblock waits for the round in flight
// (roundMu) before it takes addresses out.
func (w *Watcher) addLoop(ctx context.Context) {
	var round []addItem
	var errs []error
	var held []bool
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
		held = slices.Grow(held[:0], len(round))[:len(round)]
		w.roundMu.Lock()
		// One deadline for the round's adds, which all start now (a
		// context and a timer per address cost 4 % of watch's CPU at
		// botnet rates).
		actx, cancel := context.WithTimeout(ctx, DefaultAddTimeout)
		var wg sync.WaitGroup
		for i, it := range round {
			if held[i] = w.held(it.addr); held[i] {
				continue
			}
			wg.Go(func() {
				if it.ttl > 0 {
					if af, ok := w.o.Adder.(adderFor); ok {
						errs[i] = af.AddFor(actx, it.addr, it.ttl)
						return
					}
				}
				errs[i] = w.o.Adder.Add(actx, it.addr)
			})
		}
		wg.Wait()
		cancel()
		now := w.o.Now()
		for i, it := range round {
			switch err := errs[i]; {
			case held[i]:
			case err == nil:
				w.blocked.Add(1)
				ttl := it.ttl
				if ttl <= 0 {
					ttl = w.blockTTL()
				}
				w.noteBlock(it.addr, it.crawler, watchstate.TargetNFTables, netip.Prefix{}, now, now.Add(ttl))
				if w.o.OnBlocked != nil {
					w.o.OnBlocked(it.addr)
				}
			case ctx.Err() == nil:
				w.blockFailed.Add(1)
				w.o.Say(fmt.Sprintf("nftables: cannot add %s: %v", it.addr, err))
			}
		}
		clear(errs)
		w.roundMu.Unlock()
		w.adding.Add(-int64(len(round)))
	}
}

// adderFor is an Adder that adds for a given time (*nftset.Adder).
type adderFor interface {
	AddFor(ctx context.Context, a netip.Addr, ttl time.Duration) error
}
