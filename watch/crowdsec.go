package watch

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/lohisoft/lohibot-audit/crowdsec"
	"github.com/lohisoft/lohibot-audit/emit"
	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/lohisoft/lohibot-audit/watchstate"
)

// Decisions pushes ban decisions to a CrowdSec Local API as spoofers come,
// never making the caller wait; *crowdsec.Queue is one.
type Decisions interface {
	// Add queues a ban; it fails only when too many wait.
	Add(b crowdsec.Ban) error
	// Run pushes what is queued until ctx ends.
	Run(ctx context.Context)
	// Stats counts what was pushed, failed and dropped.
	Stats() crowdsec.QueueStats
}

// Bans returns what CrowdSec may ban for r: its address, and for an IPv6
// address also its /64 when no part of it is protected, as `emit
// crowdsec` decides (emit.CrowdSecDecisions); or why nothing, as
// Blockable says it.
func (g *Guard) Bans(r verify.Result) ([]netip.Prefix, string) {
	if a, why := g.Blockable(r); !a.IsValid() {
		return nil, why
	}
	ds, _, err := emit.CrowdSecDecisions(g.input(r.Addr))
	if err != nil {
		return nil, err.Error()
	}
	out := make([]netip.Prefix, len(ds))
	for i, d := range ds {
		out[i] = d.Prefix
	}
	return out, ""
}

// waitPushed waits, when the input has ended, until CrowdSec has taken
// every queued ban or a push fails (the Local API is down: what waits is
// said when the queue stops).
func (w *Watcher) waitPushed(ctx context.Context) {
	if w.o.CrowdSec == nil {
		return
	}
	failed := w.o.CrowdSec.Stats().Failed
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		s := w.o.CrowdSec.Stats()
		if s.Waiting == 0 || s.Failed > failed {
			return
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// pushCrowdSec queues the bans of a spoofer the guard lets through. Every
// verdict queues them: a decision in force is kept or extended, never
// pushed twice (crowdsec.Pusher).
func (w *Watcher) pushCrowdSec(crawler string, v Verdict) {
	bans, _ := w.o.Guard.Bans(v.Result)
	ev := crowdsec.Evidence{Addr: v.Addr, Crawler: crawler, Reason: v.Reason, PTR: v.PTR, Forward: v.Forward,
		Hits: v.Hits, FirstSeen: v.FirstSeen, LastSeen: v.LastSeen, UserAgent: v.UserAgent}
	now := w.o.Now()
	for _, p := range bans {
		if err := w.o.CrowdSec.Add(crowdsec.Ban{Prefix: p, Crawler: crawler, Evidence: []crowdsec.Evidence{ev}}); err != nil {
			w.sayOnce(fmt.Sprintf("crowdsec: %v (more are dropped until the Local API takes what waits)", err))
			continue
		}
		w.noteBlock(v.Addr, crawler, watchstate.TargetCrowdSec, p, now, now.Add(w.blockTTL()))
	}
}
