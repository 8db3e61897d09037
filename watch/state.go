package watch

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lohisoft/lohibot-audit/emit"
	"github.com/lohisoft/lohibot-audit/internal/nouns"
	"github.com/lohisoft/lohibot-audit/nftset"
	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/lohisoft/lohibot-audit/watchstate"
)

// DefaultStateEvery is how often the state is written when something
// changed (and once more when watch stops).
const DefaultStateEvery = 15 * time.Second

// Sets reads and takes addresses out of the block sets; nftset.Sets is
// one.
type Sets interface {
	// Members returns the addresses the sets hold, with the time each has
	// left.
	Members(ctx context.Context) (map[netip.Addr]time.Duration, error)
	// Remove takes addresses out of the sets.
	Remove(ctx context.Context, addrs []netip.Addr) (map[netip.Addr]nftset.Removed, error)
}

// Lifter ends CrowdSec decisions on values; *crowdsec.Queue and
// *crowdsec.Pusher are ones.
type Lifter interface {
	Lift(ctx context.Context, prefixes []netip.Prefix) ([]string, error)
}

// blockRec is what is blocked of one address, and where.
type blockRec struct {
	crawler string
	// nftables: added at nftAt, until nftUntil (zero: not in the sets).
	nftAt, nftUntil time.Time
	// crowdsec: one decision per prefix (the address, its /64).
	cs []csBlock
	// exec: a command queued at execAt, remembered until execUntil.
	execAt, execUntil time.Time
}

type csBlock struct {
	prefix    netip.Prefix
	at, until time.Time
}

// book is what the watcher holds blocked, and the addresses operators
// unblocked.
type book struct {
	mu     sync.Mutex
	blocks map[netip.Addr]*blockRec
	holds  map[netip.Addr]watchstate.Hold
	// changes counts changes since start, for the state writer.
	changes atomic.Int64
}

func (w *Watcher) blockTTL() time.Duration {
	if w.o.BlockTTL > 0 {
		return w.o.BlockTTL
	}
	return emit.DefaultTTL
}

// noteBlock records a block of a at target (for crowdsec, the decision's
// prefix) from at until until.
func (w *Watcher) noteBlock(a netip.Addr, crawler, target string, p netip.Prefix, at, until time.Time) {
	a = a.Unmap().WithZone("")
	w.book.mu.Lock()
	defer w.book.mu.Unlock()
	r := w.book.blocks[a]
	if r == nil {
		r = &blockRec{crawler: crawler}
		w.book.blocks[a] = r
	}
	switch target {
	case watchstate.TargetNFTables:
		if r.nftUntil.IsZero() {
			r.nftAt = at
		}
		r.nftUntil = later(r.nftUntil, until)
	case watchstate.TargetCrowdSec:
		i := slices.IndexFunc(r.cs, func(c csBlock) bool { return c.prefix == p })
		if i < 0 {
			r.cs = append(r.cs, csBlock{prefix: p, at: at, until: until})
		} else {
			r.cs[i].until = later(r.cs[i].until, until)
		}
	case watchstate.TargetExec:
		if r.execAt.IsZero() {
			r.execAt = at
		}
		r.execUntil = later(r.execUntil, until)
	}
	w.book.changes.Add(1)
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// held reports whether an operator unblocked a and the hold stands.
func (w *Watcher) held(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	w.book.mu.Lock()
	defer w.book.mu.Unlock()
	h, ok := w.book.holds[a]
	return ok && w.o.Now().Before(h.Until)
}

// pruneBook forgets blocks and holds that have ended.
func (w *Watcher) pruneBook() {
	now := w.o.Now()
	w.book.mu.Lock()
	for a, h := range w.book.holds {
		if !now.Before(h.Until) {
			delete(w.book.holds, a)
			w.book.changes.Add(1)
		}
	}
	w.book.mu.Unlock()
	// A chunk at a time: a botnet's million blocks would hold up every
	// block for the whole pass.
	rangeLocked(&w.book.mu, w.book.blocks, func(a netip.Addr, r *blockRec) {
		if !r.nftUntil.IsZero() && !now.Before(r.nftUntil) {
			r.nftAt, r.nftUntil = time.Time{}, time.Time{}
		}
		r.cs = slices.DeleteFunc(r.cs, func(c csBlock) bool { return !now.Before(c.until) })
		if !r.execUntil.IsZero() && !now.Before(r.execUntil) {
			r.execAt, r.execUntil = time.Time{}, time.Time{}
		}
		if r.nftUntil.IsZero() && len(r.cs) == 0 && r.execAt.IsZero() {
			delete(w.book.blocks, a)
			w.book.changes.Add(1)
		}
	}, nil)
}

// Restored counts what Restore took from a state file.
type Restored struct {
	// Verdicts set in the judges; Blocks and Holds taken over.
	Verdicts, Blocks, Holds int
	// Crawlers counts verdicts of crawlers not watched now, left out.
	Crawlers int
	// Refused counts blocks the safety rules refuse now (a --never-block
	// range, the crawler's list, a genuine verdict): left out, and taken
	// out of the sets at start.
	Refused int
}

// Restore takes what a state file holds before Run: its verdicts stand in
// the judges until they expire (no address is judged again before), its
// holds keep unblocked addresses out of blocking, and its blocks are the
// watcher's, each checked again by the guard as its own verdicts are;
// Run puts back into the block set those it has lost. What it took is
// said through Options.Say.
func (w *Watcher) Restore(l *watchstate.Loaded) Restored {
	var r Restored
	now := w.o.Now()
	w.book.mu.Lock()
	for _, h := range l.Holds {
		if now.Before(h.Until) {
			w.book.holds[h.Addr] = h
			r.Holds++
		}
	}
	w.book.mu.Unlock()
	byName := map[string]*watched{}
	for _, c := range w.crawlers {
		byName[c.Name] = c
	}
	for _, v := range l.Verdicts {
		c := byName[v.Crawler]
		if c == nil {
			r.Crawlers++
			continue
		}
		ttl := c.Judge.TTL()
		at := v.Judged
		if v.Expires.Before(at.Add(ttl)) {
			at = v.Expires.Add(-ttl)
		}
		if !now.Before(at.Add(ttl)) {
			continue
		}
		res := verify.Result{Addr: v.Addr, Verdict: verify.Verdict(v.Verdict), Method: v.Method, Reason: v.Reason,
			PTR: v.PTR, InIPList: v.Listed, Forward: []string{}}
		if res.PTR == nil {
			res.PTR = []string{}
		}
		if c.Judge.Restore(res, at) {
			r.Verdicts++
		}
	}
	// The guard decides again whether each block may stand.
	addrs := map[netip.Addr]bool{}
	var rs []verify.Result
	for _, b := range l.Blocks {
		if !addrs[b.Addr] {
			addrs[b.Addr] = true
			rs = append(rs, verify.Result{Addr: b.Addr, Verdict: verify.Spoofed})
		}
	}
	allowed := map[netip.Addr]bool{}
	if len(rs) > 0 {
		as, _ := w.o.Guard.BlockableAll(rs)
		for i, a := range as {
			if a.IsValid() {
				allowed[rs[i].Addr] = true
			}
		}
	}
	var refused []netip.Addr
	w.book.mu.Lock()
	for _, b := range l.Blocks {
		if !allowed[b.Addr] {
			if b.Target == watchstate.TargetNFTables && !slices.Contains(refused, b.Addr) {
				refused = append(refused, b.Addr)
			}
			continue
		}
		rec := w.book.blocks[b.Addr]
		if rec == nil {
			rec = &blockRec{crawler: b.Crawler}
			w.book.blocks[b.Addr] = rec
			r.Blocks++
		}
		switch b.Target {
		case watchstate.TargetNFTables:
			rec.nftAt, rec.nftUntil = b.At, b.Until
			w.restoredNFT = append(w.restoredNFT, b.Addr)
		case watchstate.TargetCrowdSec:
			rec.cs = append(rec.cs, csBlock{prefix: b.Prefix, at: b.At, until: b.Until})
		case watchstate.TargetExec:
			rec.execAt, rec.execUntil = b.At, b.Until
		}
	}
	w.book.mu.Unlock()
	r.Refused = len(addrs) - len(allowed)
	w.refusedNFT = refused
	parts := []string{nouns.Count(r.Verdicts, "verdict", "verdicts") + " that still stand"}
	parts = append(parts, nouns.Count(r.Blocks, "blocked address", "blocked addresses"))
	if r.Holds > 0 {
		parts = append(parts, nouns.Count(r.Holds, "unblocked address", "unblocked addresses")+" held out of blocking")
	}
	msg := "state: taken from " + watchstate.Path(w.o.StateDir) + ": " + strings.Join(parts, ", ")
	if r.Crawlers > 0 {
		msg += fmt.Sprintf("; %s of crawlers not watched now left out", nouns.Count(r.Crawlers, "verdict", "verdicts"))
	}
	if r.Refused > 0 {
		msg += fmt.Sprintf("; %s no longer blocked (never-block, the crawler's list or a genuine verdict now covers them)", nouns.Count(r.Refused, "address", "addresses"))
	}
	if n := l.Skipped.Invalid; n > 0 {
		msg += fmt.Sprintf("; %s left out as not valid (%s)", nouns.Count(n, "record", "records"), l.Skipped.Example)
	}
	w.o.Say(msg)
	w.restored = true
	return r
}

// reblock puts back into the block set what the state says is blocked
// and the set has lost (a flushed ruleset, a reboot), each for the time
// it had left, and takes out those the guard now refuses.
func (w *Watcher) reblock(ctx context.Context) {
	if w.o.Sets != nil && len(w.refusedNFT) > 0 {
		if _, err := w.o.Sets.Remove(ctx, w.refusedNFT); err != nil {
			w.o.Say(fmt.Sprintf("nftables: cannot take out addresses no longer to block: %v", err))
		}
	}
	if w.o.Adder == nil || w.o.Sets == nil || len(w.restoredNFT) == 0 {
		return
	}
	have, err := w.o.Sets.Members(ctx)
	if err != nil {
		w.o.Say(fmt.Sprintf("nftables: cannot read the sets to make the blocks of the state again: %v", err))
		return
	}
	now := w.o.Now()
	type lost struct {
		a       netip.Addr
		crawler string
		left    time.Duration
	}
	var missing []lost
	w.book.mu.Lock()
	for _, a := range w.restoredNFT {
		r := w.book.blocks[a]
		if r == nil || r.nftUntil.IsZero() {
			continue
		}
		if _, ok := have[a]; ok {
			continue
		}
		if left := r.nftUntil.Sub(now); left > 0 {
			missing = append(missing, lost{a, r.crawler, left})
		}
	}
	w.book.mu.Unlock()
	w.restoredNFT = nil
	if len(missing) == 0 {
		return
	}
	w.o.Say(fmt.Sprintf("nftables: the sets lost %s that the state holds blocked: adding them again for the time each has left", nouns.Count(len(missing), "address", "addresses")))
	for len(missing) > 0 {
		n := min(len(missing), maxAddRound)
		round := make([]addItem, n)
		for i, m := range missing[:n] {
			round[i] = addItem{addr: m.a, crawler: m.crawler, ttl: m.left}
		}
		missing = missing[n:]
		w.adding.Add(int64(n))
		w.handRound(ctx, round)
	}
}

// encodeState writes the state as it is now through e: the verdicts
// that stand, the blocks, the holds and the status. It takes a chunk of
// records at a time under the judge's or the book's lock and encodes
// them after letting go (see rangeLocked): a state of a million
// verdicts and blocks, written every StateEvery, never holds up a
// verdict or a block for longer than a chunk takes to copy, and only one
// chunk is held in memory besides the encoder's buffer. A record made or
// ended meanwhile may be in the file or not, as if written a moment
// before or after.
func (w *Watcher) encodeState(ctx context.Context, e *watchstate.Encoder) error {
	for _, c := range w.crawlers {
		ttl := c.Judge.TTL()
		err := c.Judge.Verdicts(func(vs []Standing) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			for _, v := range vs {
				e.Verdict(watchstate.Verdict{Addr: v.Addr, Crawler: c.Name, Verdict: string(v.Verdict), Method: v.Method,
					Reason: v.Reason, PTR: v.PTR, Listed: v.Listed, Judged: v.At, Expires: v.At.Add(ttl)})
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	blocks := make([]watchstate.Block, 0, rangeChunk)
	flushBlocks := func() error {
		for _, b := range blocks {
			e.Block(b)
		}
		clear(blocks)
		blocks = blocks[:0]
		return ctx.Err()
	}
	err := rangeLocked(&w.book.mu, w.book.blocks, func(a netip.Addr, r *blockRec) {
		if !r.nftUntil.IsZero() {
			blocks = append(blocks, watchstate.Block{Addr: a, Crawler: r.crawler, Target: watchstate.TargetNFTables, At: r.nftAt, Until: r.nftUntil})
		}
		for _, c := range r.cs {
			blocks = append(blocks, watchstate.Block{Addr: a, Crawler: r.crawler, Target: watchstate.TargetCrowdSec, Prefix: c.prefix, At: c.at, Until: c.until})
		}
		if !r.execAt.IsZero() {
			blocks = append(blocks, watchstate.Block{Addr: a, Crawler: r.crawler, Target: watchstate.TargetExec, At: r.execAt, Until: r.execUntil})
		}
	}, flushBlocks)
	if err != nil {
		return err
	}
	holds := make([]watchstate.Hold, 0, rangeChunk)
	err = rangeLocked(&w.book.mu, w.book.holds, func(_ netip.Addr, h watchstate.Hold) {
		holds = append(holds, h)
	}, func() error {
		for _, h := range holds {
			e.Hold(h)
		}
		holds = holds[:0]
		return ctx.Err()
	})
	if err != nil {
		return err
	}
	s := w.Status()
	return e.Status(&s)
}

// stateVersion is a number that changes whenever the state does.
func (w *Watcher) stateVersion() int64 {
	n := w.book.changes.Load()
	for _, c := range w.crawlers {
		n += c.Judge.Stats().Checks
	}
	return n
}

// saveState writes the state; a failure is said once, and its end.
func (w *Watcher) saveState(ctx context.Context) {
	err := watchstate.WriteFunc(ctx, w.o.StateDir, w.o.Now(), os.Getpid(), w.o.Targets, func(e *watchstate.Encoder) error {
		return w.encodeState(ctx, e)
	})
	switch {
	case err != nil && ctx.Err() == nil:
		if w.stateFailing.CompareAndSwap(false, true) {
			w.o.Say(fmt.Sprintf("state: cannot write %s: %v: going on; verdicts and blocks are kept in memory only until it can", watchstate.Path(w.o.StateDir), err))
		}
	case err == nil && w.stateFailing.CompareAndSwap(true, false):
		w.o.Say("state: written again")
	}
}

// stateLoop writes the state every StateEvery when it changed (or ten
// times as long as the last write took, when longer), and at once when
// saveNow is signalled (an unblock), until ctx ends.
func (w *Watcher) stateLoop(ctx context.Context) {
	every := w.o.StateEvery
	if every <= 0 {
		every = DefaultStateEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	last := int64(-1)
	for {
		select {
		case <-t.C:
		case <-w.saveNow:
		case <-ctx.Done():
			return
		}
		if v := w.stateVersion(); v != last {
			start := time.Now()
			w.saveState(ctx)
			last = v
			// A large state costs its write (1 M verdicts and 1 M blocks:
			// 265 MB on disk, seconds of CPU, though it holds up no verdict
			// and no block and is never whole in memory): the next write
			// waits ten times as long as this one took when that is longer
			// than every, so the state never takes more than a tenth of a
			// core.
			t.Reset(max(every, 10*time.Since(start)))
		}
	}
}

// Status is what `watch status` shows of the watcher now.
func (w *Watcher) Status() watchstate.Status {
	now := w.o.Now()
	s := watchstate.Status{PID: os.Getpid(), Version: w.o.Version, Started: w.startedAt(), At: now}
	for _, name := range w.o.Files {
		f := w.files[name]
		fs := watchstate.FileStatus{Name: name, Offset: f.offset.Load(), Line: f.line.Load(), Lines: f.lines.Load(),
			Malformed: f.malformed.Load(), State: f.state()}
		if t := f.last.Load(); t != 0 {
			fs.LastLine = time.Unix(0, t)
		}
		s.Files = append(s.Files, fs)
	}
	for _, c := range w.crawlers {
		j := c.Judge.Stats()
		s.Crawlers = append(s.Crawlers, watchstate.CrawlerStatus{Name: c.Name, Claims: c.claims.Load(),
			Addresses:  watchstate.VerdictCounts{Genuine: int64(j.Genuine), Spoofed: int64(j.Spoofed), Unverified: int64(j.Unverified)},
			Pending:    int64(j.Pending),
			Verdicts:   watchstate.VerdictCounts{Genuine: c.genuine.Load(), Spoofed: c.spoofed.Load(), Unverified: c.unverified.Load()},
			Violations: c.violations.Load()})
		s.Queue.Judge += int64(j.Queued)
	}
	var inForce [3]int64 // nftables, crowdsec, exec
	rangeLocked(&w.book.mu, w.book.blocks, func(_ netip.Addr, r *blockRec) {
		if !r.nftUntil.IsZero() && now.Before(r.nftUntil) {
			inForce[0]++
		}
		if len(r.cs) > 0 {
			inForce[1]++
		}
		if !r.execAt.IsZero() {
			inForce[2]++
		}
	}, nil)
	w.book.mu.Lock()
	for _, h := range w.book.holds {
		if now.Before(h.Until) {
			s.Held++
		}
	}
	w.book.mu.Unlock()
	if w.o.Adder != nil || inForce[0] > 0 {
		s.Blocks = append(s.Blocks, watchstate.TargetStatus{Target: watchstate.TargetNFTables, Blocked: w.blocked.Load(), Failed: w.blockFailed.Load(), InForce: inForce[0]})
	}
	if w.o.CrowdSec != nil {
		c := w.o.CrowdSec.Stats()
		s.Blocks = append(s.Blocks, watchstate.TargetStatus{Target: watchstate.TargetCrowdSec, Blocked: c.Added + c.Extended + c.Kept, Failed: c.Failed, Dropped: c.Dropped, InForce: inForce[1]})
		s.Queue.CrowdSec = c.Waiting
	}
	if w.o.Exec != nil {
		x := w.o.Exec.Stats()
		s.Blocks = append(s.Blocks, watchstate.TargetStatus{Target: watchstate.TargetExec, Blocked: x.OK, Failed: x.Failed, Dropped: x.Dropped, InForce: inForce[2]})
		s.Queue.Exec = x.Waiting
	}
	s.Queue.Actions = int64(w.acts.len())
	s.Queue.NFTables = w.adding.Load()
	w.cmu.Lock()
	for _, c := range w.crawlers {
		s.Queue.Conduct += int64(len(c.cqueue))
	}
	w.cmu.Unlock()
	if w.dns != nil {
		s.DNS = w.dns.Status()
	}
	s.DNS.Down = w.dnsDown.Load()
	s.Events.Written, s.Events.Lost = w.o.Events.Counts()
	return s
}

// Unblock takes addrs out of every block the watcher made (the block
// sets, CrowdSec decisions; an --exec command cannot be undone and is
// named) and holds them out of blocking for ttl: an operator's word beats
// a verdict. Each is one unblock event. The state is written at once.
func (w *Watcher) Unblock(ctx context.Context, addrs []netip.Addr, ttl time.Duration) []watchstate.Unblocked {
	now := w.o.Now()
	until := now.Add(ttl)
	prefixes := map[netip.Addr][]netip.Prefix{}
	execAt := map[netip.Addr]time.Time{}
	// The hold first: from now on nothing blocks them.
	w.book.mu.Lock()
	for _, a := range addrs {
		w.book.holds[a] = watchstate.Hold{Addr: a, At: now, Until: until}
		if r := w.book.blocks[a]; r != nil {
			for _, c := range r.cs {
				prefixes[a] = append(prefixes[a], c.prefix)
			}
			execAt[a] = r.execAt
			delete(w.book.blocks, a)
		}
	}
	w.book.mu.Unlock()
	w.book.changes.Add(1)
	u := Unblocker{Sets: w.o.Sets}
	if l, ok := w.o.CrowdSec.(Lifter); ok {
		u.CrowdSec = l
	}
	// An add in flight finishes before the addresses are taken out;
	// later rounds leave held addresses out.
	w.roundMu.Lock()
	out := u.undo(ctx, addrs, prefixes, true, false)
	w.roundMu.Unlock()
	u.undo(ctx, addrs, prefixes, false, true, out...)
	for i := range out {
		out[i].Until = until
		out[i].Exec = execAt[out[i].Addr]
		w.o.Events.Unblock(out[i], now)
	}
	select {
	case w.saveNow <- struct{}{}:
	default:
	}
	return out
}

// Unblocker undoes blocks: for `unblock` when no watch runs, and inside
// a running one.
type Unblocker struct {
	// Sets takes addresses out of the block sets; nil: no nftables.
	Sets Sets
	// CrowdSec ends decisions; nil: no CrowdSec.
	CrowdSec Lifter
}

// Undo takes each address out of the sets and ends the CrowdSec
// decisions of ours on its value and on the prefixes recorded for it
// (its /64). Errors are in each result.
func (u Unblocker) Undo(ctx context.Context, addrs []netip.Addr, prefixes map[netip.Addr][]netip.Prefix) []watchstate.Unblocked {
	out := u.undo(ctx, addrs, prefixes, true, false)
	return u.undo(ctx, addrs, prefixes, false, true, out...)
}

// undo does the nftables part, the CrowdSec part or both, into out (made
// when empty).
func (u Unblocker) undo(ctx context.Context, addrs []netip.Addr, prefixes map[netip.Addr][]netip.Prefix, nft, cs bool, out ...watchstate.Unblocked) []watchstate.Unblocked {
	if len(out) == 0 {
		out = make([]watchstate.Unblocked, len(addrs))
		for i, a := range addrs {
			out[i].Addr = a
		}
	}
	if nft && u.Sets != nil {
		removed, err := u.Sets.Remove(ctx, addrs)
		for i := range out {
			r := removed[out[i].Addr]
			out[i].NFTables = r.Sets
			if r.Covered != "" {
				out[i].Errors = append(out[i].Errors, fmt.Sprintf("nftables: %s stays in range %s of emit's set %s (emit's file put it there: add --never-block %s for the next one)",
					out[i].Addr, r.Covered, setOf(out[i].Addr), out[i].Addr))
			}
			if err != nil && len(r.Sets) == 0 {
				out[i].Errors = append(out[i].Errors, "nftables: "+err.Error())
			}
		}
	}
	if cs && u.CrowdSec != nil {
		for i := range out {
			a := out[i].Addr
			ps := []netip.Prefix{netip.PrefixFrom(a, a.BitLen())}
			for _, p := range prefixes[a] {
				if !slices.Contains(ps, p) {
					ps = append(ps, p)
				}
			}
			lifted, err := u.CrowdSec.Lift(ctx, ps)
			out[i].CrowdSec = lifted
			if err != nil {
				out[i].Errors = append(out[i].Errors, "crowdsec: "+err.Error())
			}
		}
	}
	return out
}

// setOf names emit's interval set of a's family.
func setOf(a netip.Addr) string {
	if a.Is4() {
		return nftset.SetV4
	}
	return nftset.SetV6
}

// UnblockStopped unblocks addrs when no watch runs with the state
// directory dir: it takes them out of the sets and CrowdSec as u can, and
// writes holds into the state for ttl, so that the next watch keeps them
// out of blocking. It holds the directory's lock meanwhile (an error
// matching watchstate.ErrLocked when a watch holds it). A state file that
// cannot be read is set aside (SetAside) and a new one made; said through
// say.
func UnblockStopped(ctx context.Context, dir string, addrs []netip.Addr, ttl time.Duration, now time.Time, u Unblocker, say func(string)) ([]watchstate.Unblocked, error) {
	lock, err := watchstate.Acquire(dir)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	l, err := watchstate.Read(dir, now)
	switch {
	case err == nil:
	case os.IsNotExist(err):
		l = &watchstate.Loaded{State: &watchstate.State{}}
	default:
		aside, aerr := watchstate.SetAside(dir)
		if aerr != nil {
			return nil, fmt.Errorf("state %s: %v; cannot set it aside: %w", watchstate.Path(dir), err, aerr)
		}
		say(fmt.Sprintf("state %s: %v: set aside as %s; a new one holds the unblocked addresses", watchstate.Path(dir), err, aside))
		l = &watchstate.Loaded{State: &watchstate.State{}}
	}
	prefixes := map[netip.Addr][]netip.Prefix{}
	execAt := map[netip.Addr]time.Time{}
	want := map[netip.Addr]bool{}
	for _, a := range addrs {
		want[a] = true
	}
	blocks := l.Blocks[:0]
	for _, b := range l.Blocks {
		if !want[b.Addr] {
			blocks = append(blocks, b)
			continue
		}
		switch b.Target {
		case watchstate.TargetCrowdSec:
			prefixes[b.Addr] = append(prefixes[b.Addr], b.Prefix)
		case watchstate.TargetExec:
			execAt[b.Addr] = b.At
		}
	}
	l.Blocks = blocks
	out := u.Undo(ctx, addrs, prefixes)
	until := now.Add(ttl)
	holds := l.Holds[:0]
	for _, h := range l.Holds {
		if !want[h.Addr] {
			holds = append(holds, h)
		}
	}
	for i := range out {
		out[i].Until = until
		out[i].Exec = execAt[out[i].Addr]
		holds = append(holds, watchstate.Hold{Addr: out[i].Addr, At: now, Until: until})
	}
	l.Holds = holds
	sort.Slice(l.Holds, func(i, j int) bool { return l.Holds[i].Addr.Less(l.Holds[j].Addr) })
	l.Written = now
	if err := watchstate.Write(ctx, dir, l.State); err != nil {
		return out, fmt.Errorf("write %s: %w", watchstate.Path(dir), err)
	}
	return out, nil
}
