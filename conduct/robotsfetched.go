package conduct

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// checkRobotsFetched flags the first page of a crawl that no recent
// /robots.txt request preceded.
func (c *siteCheck) checkRobotsFetched() {
	p := c.pages
	if len(p) == 0 {
		return
	}
	start := 0
	maxHi := p[0].sHi
	for j := 1; j <= len(p); j++ {
		if j < len(p) && p[j].sLo.Sub(maxHi) <= crawlGap {
			if p[j].sHi.After(maxHi) {
				maxHi = p[j].sHi
			}
			continue
		}
		c.judgeCrawl(p[start:j])
		if j < len(p) {
			start, maxHi = j, p[j].sHi
		}
	}
}

func (c *siteCheck) judgeCrawl(crawl []*hit) {
	// The crawl's true first start lies in [minLo, minHi).
	minLo, minHi := crawl[0].sLo, crawl[0].sHi
	for _, h := range crawl[1:] {
		if h.sLo.Before(minLo) {
			minLo = h.sLo
		}
		if h.sHi.Before(minHi) {
			minHi = h.sHi
		}
	}
	if c.cfg.Covered != nil {
		if !c.cfg.Covered(c.site, minLo.Add(-robotsMaxAge), minHi) {
			c.skip(KindRobotsNotFetched) // the logs do not cover the day before
			return
		}
	} else if !c.coverSet || c.coverHi.After(minLo.Add(-robotsMaxAge)) {
		c.skip(KindRobotsNotFetched) // the logs do not reach back far enough
		return
	}
	var last *hit
	for _, r := range c.robots {
		if !r.sLo.Before(minHi) {
			continue
		}
		if minLo.Sub(r.eHi) <= robotsMaxAge {
			return
		}
		if last == nil || r.sNom.After(last.sNom) {
			last = r
		}
	}
	first := crawl[0]
	detail := "first page of a crawl with no /robots.txt request to this site in the 24h before it"
	if last != nil {
		detail += fmt.Sprintf(" (the last one was %s earlier, on %s)", fmtDur(first.sNom.Sub(last.sNom)), c.ref(last, first))
	} else {
		detail += fmt.Sprintf(" (none since the logs begin at %s)", fmtTime(c.coverNom))
	}
	c.add(KindRobotsNotFetched, first, detail)
}

// checkRobotsAvailable flags pages fetched while the last /robots.txt
// answer the crawler had was a 5xx.
func (c *siteCheck) checkRobotsAvailable() {
	var fivesByHi, clears []*hit
	for _, r := range c.robots {
		if r.Status >= 500 && r.Status <= 599 {
			fivesByHi = append(fivesByHi, r)
		} else {
			clears = append(clears, r)
		}
	}
	if len(fivesByHi) == 0 || len(c.pages) == 0 {
		return
	}
	byBound := func(bound func(*hit) time.Time) func(a, b *hit) int {
		return func(a, b *hit) int { return cmp.Or(bound(a).Compare(bound(b)), cmp.Compare(a.idx, b.idx)) }
	}
	eHi := func(h *hit) time.Time { return h.eHi }
	eLo := func(h *hit) time.Time { return h.eLo }
	slices.SortFunc(fivesByHi, byBound(eHi))
	fivesByLo := slices.Clone(fivesByHi)
	slices.SortFunc(fivesByLo, byBound(eLo))
	slices.SortFunc(clears, byBound(eLo))
	// best[k]: of fivesByHi[:k+1], the one that ended last for sure.
	best := make([]*hit, len(fivesByHi))
	for k, r := range fivesByHi {
		best[k] = r
		if k > 0 && !r.eLo.After(best[k-1].eLo) {
			best[k] = best[k-1]
		}
	}
	// clearHi[k]: the latest possible end of clears[:k+1].
	clearHi := make([]time.Time, len(clears))
	for k, r := range clears {
		clearHi[k] = r.eHi
		if k > 0 && clearHi[k-1].After(r.eHi) {
			clearHi[k] = clearHi[k-1]
		}
	}
	for _, pg := range c.pages {
		n, _ := slices.BinarySearchFunc(fivesByHi, pg.sLo, func(r *hit, t time.Time) int {
			if r.eHi.After(t) {
				return 1
			}
			return -1
		})
		if n == 0 {
			continue // no 5xx answer surely came before the page
		}
		a := best[n-1]
		m, _ := slices.BinarySearchFunc(clears, pg.sHi, func(r *hit, t time.Time) int {
			if r.eLo.Before(t) {
				return -1
			}
			return 1
		})
		first := fivesByLo[0]
		if m > 0 {
			latestOK := clearHi[m-1]
			if latestOK.After(a.eLo) {
				continue // a later answer may have made robots.txt available
			}
			q, _ := slices.BinarySearchFunc(fivesByLo, latestOK, func(r *hit, t time.Time) int {
				if r.eLo.Before(t) {
					return -1
				}
				return 1
			})
			first = fivesByLo[q]
		}
		if pg.sHi.Sub(first.eLo) >= outageLimit {
			continue
		}
		c.add(KindRobotsUnavailable, pg, fmt.Sprintf(
			"fetched %s after /robots.txt answered %d (%s) and before it was fetched again: RFC 9309 treats that as a complete disallow",
			fmtDur(pg.sNom.Sub(a.eNom)), a.Status, c.ref(a, pg)))
	}
}
