package conduct

import (
	"fmt"
	"slices"
	"time"
)

// checkOverlapAndPause flags requests that provably overlapped an earlier
// one (concurrency) or began too soon after the earlier request that ended
// last (pause).
func (c *siteCheck) checkOverlapAndPause() {
	if !c.durs {
		c.skip(KindConcurrency)
	}
	pause := c.cfg.MinPause > 0
	if !pause {
		c.skip(KindPause)
	}
	var active []*hit // earlier requests that may still have been running
	var latest *hit   // the earlier request with the latest provable end
	for _, b := range c.hits {
		n := 0
		for _, a := range active {
			if !a.eLo.Before(b.sNom) {
				active[n] = a
				n++
			}
		}
		active = active[:n]
		var over *hit
		for _, a := range active {
			// b started before a ended, and a started before b ended.
			if !b.sHi.After(a.eLo) && !a.sHi.After(b.eLo) && (over == nil || a.eLo.After(over.eLo)) {
				over = a
			}
		}
		switch {
		case over != nil:
			c.add(KindConcurrency, b, fmt.Sprintf("2 requests at once: this one started %s before the one on %s ended",
				fmtDur(over.eNom.Sub(b.sNom)), c.ref(over, b)))
		case pause && latest != nil &&
			b.sHi.Sub(latest.eLo) <= c.cfg.MinPause && latest.sHi.Sub(b.eLo) <= c.cfg.MinPause:
			c.add(KindPause, b, c.pauseDetail(latest, b))
		}
		active = append(active, b)
		if len(active) > maxActive {
			low := 0
			for i, a := range active {
				if a.eLo.Before(active[low].eLo) {
					low = i
				}
			}
			active = slices.Delete(active, low, low+1)
		}
		if latest == nil || b.eLo.After(latest.eLo) {
			latest = b
		}
	}
}

func (c *siteCheck) pauseDetail(a, b *hit) string {
	least := "; the least pause is " + fmtDur(c.cfg.MinPause)
	gap := b.sNom.Sub(a.eNom)
	switch {
	case !a.dur && !b.dur && a.res >= time.Second && b.res >= time.Second && a.sNom.Truncate(time.Second).Equal(b.sNom.Truncate(time.Second)):
		return fmt.Sprintf("logged in the same second as the request on %s%s", c.ref(a, b), least)
	case !a.dur && !b.dur:
		return fmt.Sprintf("logged %s after the request on %s%s", fmtDur(gap), c.ref(a, b), least)
	case gap < 0:
		return fmt.Sprintf("started %s before the request on %s ended, by the logged times%s", fmtDur(-gap), c.ref(a, b), least)
	default:
		return fmt.Sprintf("started %s after the request on %s ended%s", fmtDur(gap), c.ref(a, b), least)
	}
}
