package crowdsec

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults of a Pusher.
const (
	// DefaultBatch is how many alerts one POST /v1/alerts carries.
	DefaultBatch = 100
	// lookupAll is the number of bans up to which a Pusher looks each up
	// instead of listing every decision of their scenarios at once.
	lookupAll = 32
)

// Result counts what a push did.
type Result struct {
	// Added are decisions new to the Local API; Extended replaced a
	// decision of ours with less than nine tenths of the TTL left; Kept
	// were in force long enough already.
	Added, Extended, Kept int
	// Removed counts decisions of ours ended because a longer one for the
	// same value replaced them (extended, or pushed twice by two hosts at
	// once).
	Removed int
	// Done are the prefixes whose decision is now in force, in the order
	// pushed.
	Done []netip.Prefix
}

func (r *Result) add(o Result) {
	r.Added += o.Added
	r.Extended += o.Extended
	r.Kept += o.Kept
	r.Removed += o.Removed
	r.Done = append(r.Done, o.Done...)
}

// Pusher pushes bans to a Local API so that each value has exactly one
// decision of ours in force, lasting about TTL: a value without one gets
// one; one whose decision has less than nine tenths of TTL left gets a
// new decision for TTL and the old one ends (extended); one with more is
// left alone (kept). A decision never gets shorter. Decisions of ours are
// those of type ban whose scenario starts with ScenarioPrefix + "spoofed-".
//
// A Pusher remembers what it pushed or found, so that pushing the same
// value again soon asks the Local API nothing. It is safe for concurrent
// use, one push at a time.
type Pusher struct {
	Client *Client
	// TTL is each decision's duration; it must be above zero.
	TTL time.Duration
	// Version names the program in each alert's metadata.
	Version string
	// Now is the clock of what the Pusher remembers; nil means time.Now.
	// Alerts are stamped by the Local API's clock (Client.Clock).
	Now func() time.Time
	// Batch is how many alerts one request carries; zero means
	// DefaultBatch.
	Batch int
	// LookupEach is how many bans at most are looked up one by one (one
	// request each); more make one listing of every decision of their
	// scenarios. Zero means 32; negative, always one by one. A Local API
	// lists n alerts in time that grows faster than n (10,000: 21 s), and
	// looks one up in time that grows with n (10,000: 20 ms).
	LookupEach int

	mu sync.Mutex
	// known holds, for values pushed or found in force, when their
	// decision ends by this clock.
	known map[netip.Prefix]time.Time
	// stale are decisions replaced by a longer one whose deletion failed:
	// the next push ends them first.
	stale []int64
}

// ErrNoTTL means a Pusher has no TTL.
var ErrNoTTL = errors.New("crowdsec: no decision duration")

func (p *Pusher) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// keep is how much time a decision must have left to be kept.
func (p *Pusher) keep() time.Duration { return p.TTL - p.TTL/10 }

// ours reports whether a decision in force is one this package pushes.
func ours(a Active) bool {
	return a.Type == TypeBan && strings.HasPrefix(a.Scenario, ScenarioPrefix+"spoofed-")
}

// Push makes the Local API hold a decision for each ban, as the Pusher's
// doc says. Bans of one prefix are pushed once, with the first one's
// crawler and every one's evidence. It stops at the first failure and
// returns what was done up to it with the error: nothing done is undone
// and nothing is pushed twice, so pushing the same bans again finishes the
// job.
func (p *Pusher) Push(ctx context.Context, bans []Ban) (Result, error) {
	if p.TTL <= 0 {
		return Result{}, ErrNoTTL
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.known == nil {
		p.known = map[netip.Prefix]time.Time{}
	}
	var res Result
	if err := p.endStale(ctx, &res); err != nil {
		return res, err
	}
	bans = mergeBans(bans)
	now := p.now()

	// What the Local API holds already for the bans this Pusher knows
	// nothing recent of.
	var ask []Ban
	var keptNow []netip.Prefix
	for _, b := range bans {
		if until, ok := p.known[b.Prefix]; ok && until.Sub(now) >= p.keep() {
			keptNow = append(keptNow, b.Prefix)
			continue
		}
		ask = append(ask, b)
	}
	held, err := p.lookup(ctx, ask)
	if err != nil {
		return res, err
	}
	res.Kept += len(keptNow)
	res.Done = append(res.Done, keptNow...)

	type change struct {
		ban Ban
		old []Active // decisions it replaces
	}
	var todo []change
	for _, b := range ask {
		act := held[b.Prefix]
		if len(act) == 0 {
			todo = append(todo, change{ban: b})
			continue
		}
		// The longest first; ties by ID, so that every host keeps the same.
		slices.SortFunc(act, func(x, y Active) int {
			if x.Left != y.Left {
				if x.Left > y.Left {
					return -1
				}
				return 1
			}
			if x.ID > y.ID {
				return -1
			}
			if x.ID < y.ID {
				return 1
			}
			return 0
		})
		if act[0].Left >= p.keep() {
			if err := p.end(ctx, act[1:], &res); err != nil {
				return res, err
			}
			res.Kept++
			res.Done = append(res.Done, b.Prefix)
			p.known[b.Prefix] = now.Add(act[0].Left)
			continue
		}
		todo = append(todo, change{ban: b, old: act})
	}

	batch := p.Batch
	if batch <= 0 {
		batch = DefaultBatch
	}
	for len(todo) > 0 {
		n := min(batch, len(todo))
		chunk := todo[:n]
		todo = todo[n:]
		alerts := make([]Alert, len(chunk))
		stamp := p.Client.Clock()
		for i, c := range chunk {
			alerts[i] = NewAlert(c.ban, p.TTL, stamp, p.Version)
		}
		if _, err := p.Client.AddAlerts(ctx, alerts); err != nil {
			return res, err
		}
		for _, c := range chunk {
			if len(c.old) > 0 {
				res.Extended++
			} else {
				res.Added++
			}
			res.Done = append(res.Done, c.ban.Prefix)
			p.known[c.ban.Prefix] = now.Add(p.TTL)
		}
		// The new decisions are in force: the ones they replace end now.
		// A bouncer sees no gap, as the Local API tells bouncers of an
		// ended decision only when no longer one holds the same value.
		for _, c := range chunk {
			if err := p.end(ctx, c.old, &res); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

// end ends decisions replaced by a longer one; those it could not end are
// kept for the next push.
func (p *Pusher) end(ctx context.Context, old []Active, res *Result) error {
	for i, a := range old {
		n, err := p.Client.DeleteDecision(ctx, a.ID)
		if err != nil {
			for _, b := range old[i:] {
				p.stale = append(p.stale, b.ID)
			}
			return err
		}
		res.Removed += n
	}
	return nil
}

// endStale ends the decisions an earlier push could not.
func (p *Pusher) endStale(ctx context.Context, res *Result) error {
	for len(p.stale) > 0 {
		n, err := p.Client.DeleteDecision(ctx, p.stale[0])
		if err != nil {
			return err
		}
		res.Removed += n
		p.stale = p.stale[1:]
	}
	return nil
}

// lookup returns the decisions of ours in force for the bans' prefixes: one
// request per ban for a few, every decision of their scenarios for many.
func (p *Pusher) lookup(ctx context.Context, bans []Ban) (map[netip.Prefix][]Active, error) {
	held := map[netip.Prefix][]Active{}
	if len(bans) == 0 {
		return held, nil
	}
	want := make(map[string]netip.Prefix, len(bans))
	for _, b := range bans {
		want[b.Scope()+" "+b.Value()] = b.Prefix
	}
	keepOurs := func(act []Active) {
		for _, a := range act {
			if !ours(a) {
				continue
			}
			if pfx, ok := want[a.Scope+" "+a.Value]; ok {
				held[pfx] = append(held[pfx], a)
			}
		}
	}
	each := p.LookupEach
	if each == 0 {
		each = lookupAll
	}
	if each < 0 || len(bans) <= each {
		for _, b := range bans {
			act, err := p.Client.ActiveDecisions(ctx, Filter{Scope: b.Scope(), Value: b.Value()})
			if err != nil {
				return nil, err
			}
			keepOurs(act)
		}
		return held, nil
	}
	var scenarios []string
	for _, b := range bans {
		if s := Scenario(b.Crawler); !slices.Contains(scenarios, s) {
			scenarios = append(scenarios, s)
		}
	}
	for _, s := range scenarios {
		act, err := p.Client.ActiveDecisions(ctx, Filter{Scenario: s})
		if err != nil {
			return nil, err
		}
		keepOurs(act)
	}
	return held, nil
}

// Forget drops what the Pusher remembers of decisions that have ended by
// now; a long-running caller calls it now and then.
func (p *Pusher) Forget() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	for k, until := range p.known {
		if !until.After(now) {
			delete(p.known, k)
		}
	}
}

// mergeBans keeps the first ban of each prefix, with the evidence of every
// one, in the order given; invalid prefixes are left out.
func mergeBans(bans []Ban) []Ban {
	idx := make(map[netip.Prefix]int, len(bans))
	out := make([]Ban, 0, len(bans))
	for _, b := range bans {
		if !b.Prefix.IsValid() {
			continue
		}
		if i, ok := idx[b.Prefix]; ok {
			out[i].Evidence = append(out[i].Evidence, b.Evidence...)
			continue
		}
		idx[b.Prefix] = len(out)
		b.Evidence = slices.Clone(b.Evidence)
		out = append(out, b)
	}
	return out
}

// Lift ends the decisions of ours in force on the values of prefixes (an
// operator unblocked them) and forgets them, so that a later push asks the
// Local API again. It returns the values whose decisions it ended, and
// stops at the first failure.
func (p *Pusher) Lift(ctx context.Context, prefixes []netip.Prefix) ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, pfx := range prefixes {
		if !pfx.IsValid() {
			continue
		}
		b := Ban{Prefix: pfx}
		act, err := p.Client.ActiveDecisions(ctx, Filter{Scope: b.Scope(), Value: b.Value()})
		if err != nil {
			return out, err
		}
		ended := false
		for _, a := range act {
			if !ours(a) || a.Scope != b.Scope() || a.Value != b.Value() {
				continue
			}
			if _, err := p.Client.DeleteDecision(ctx, a.ID); err != nil {
				return out, err
			}
			ended = true
		}
		delete(p.known, pfx)
		if ended {
			out = append(out, b.Value())
		}
	}
	return out, nil
}
