package conduct

import (
	"fmt"
	"slices"
	"time"
)

// pauseDetail says why b came too soon after a.
func pauseDetail(minPause time.Duration, a, b *hit) string {
	least := "; the least pause is " + fmtDur(minPause)
	gap := b.sNom.Sub(a.eNom)
	switch {
	case !a.dur && !b.dur && a.resSec && b.resSec && a.sNom.Truncate(time.Second).Equal(b.sNom.Truncate(time.Second)):
		return fmt.Sprintf("logged in the same second as the request on %s%s", refTo(a, b), least)
	case !a.dur && !b.dur:
		return fmt.Sprintf("logged %s after the request on %s%s", fmtDur(gap), refTo(a, b), least)
	case gap < 0:
		return fmt.Sprintf("started %s before the request on %s ended, by the logged times%s", fmtDur(-gap), refTo(a, b), least)
	default:
		return fmt.Sprintf("started %s after the request on %s ended%s", fmtDur(gap), refTo(a, b), least)
	}
}

// overlap follows one site's requests, in order, for the concurrency and
// pause checks: the batch check and the live tracker step through it
// alike. It holds the requests that may still have been running (at most
// maxActive) and the one that ended last.
type overlap struct {
	active []*hit // earlier requests that may still have been running
	latest *hit   // the earlier request with the latest provable end
	// latestOf is latest per clock, with a clock skew (Config.ClockSkew):
	// of another clock's latest, the skew is taken off its end.
	latestOf map[int32]*hit
}

// before returns the earlier request whose end is latest as b's clock
// sees it, and the skew between them.
func (o *overlap) before(c *siteCheck, b *hit) (*hit, time.Duration) {
	a := o.latest
	if a == nil {
		return nil, 0
	}
	sk := c.skewOf(a, b)
	if sk == 0 {
		return a, 0
	}
	if same := o.latestOf[b.clock]; same != nil && !same.eLo.Before(a.eLo.Add(-sk)) {
		return same, 0
	}
	return a, sk
}

// step checks b against the requests before it, then counts it among them.
func (o *overlap) step(c *siteCheck, b *hit) {
	n := 0
	for _, a := range o.active {
		if !a.eLo.Before(b.sNom) {
			o.active[n] = a
			n++
		}
	}
	clear(o.active[n:])
	o.active = o.active[:n]
	var over *hit
	for _, a := range o.active {
		// b started before a ended, and a started before b ended, by
		// more than the skew of their clocks.
		sk := c.skewOf(a, b)
		if !b.sHi.Add(sk).After(a.eLo) && !a.sHi.Add(sk).After(b.eLo) && (over == nil || a.eLo.After(over.eLo)) {
			over = a
		}
	}
	last, sk := o.before(c, b)
	switch {
	case over != nil:
		if c.want(kConcurrency, b) {
			c.add(kConcurrency, b, fmt.Sprintf("2 requests at once: this one started %s before the one on %s ended",
				fmtDur(over.eNom.Sub(b.sNom)), refTo(over, b)))
		}
	case c.cfg.MinPause > 0 && last != nil &&
		b.sHi.Sub(last.eLo)+sk <= c.cfg.MinPause && last.sHi.Sub(b.eLo)+sk <= c.cfg.MinPause:
		if c.want(kPause, b) {
			c.add(kPause, b, pauseDetail(c.cfg.MinPause, last, b))
		}
	}
	o.active = append(o.active, b)
	if len(o.active) > maxActive {
		low := 0
		for i, a := range o.active {
			if a.eLo.Before(o.active[low].eLo) {
				low = i
			}
		}
		o.active = slices.Delete(o.active, low, low+1)
	}
	if o.latest == nil || b.eLo.After(o.latest.eLo) {
		o.latest = b
	}
	if c.cfg.ClockSkew > 0 {
		if o.latestOf == nil {
			o.latestOf = map[int32]*hit{}
		}
		if l := o.latestOf[b.clock]; l == nil || b.eLo.After(l.eLo) {
			o.latestOf[b.clock] = b
		}
	}
}
