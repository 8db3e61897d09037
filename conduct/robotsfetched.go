package conduct

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// crawlState follows one site's requests, in order, for the
// robots-not-fetched check: it groups pages into crawls and judges each
// crawl once it ends. Of the /robots.txt requests before a crawl it keeps
// two: the one that may have ended last and the one logged last; of those
// after its first page, the few that may still have started before it
// (at most maxRobotsKept).
type crawlState struct {
	// Every /robots.txt request so far: the latest end bound, and the
	// one logged last (the first of those logged at that time).
	anyRobots  bool
	robotsEHi  time.Time
	robotsLast robotsRef

	// The crawl under way: its first page, the bounds of its pages'
	// starts, and the /robots.txt requests as they were at its first
	// page (early) and those since that may have started before it
	// (late).
	open                bool
	first               *hit
	minLo, minHi, maxHi time.Time
	earlyAny            bool
	earlyEHi            time.Time
	earlyLast           robotsRef
	late                []*hit
	overflow            bool // late outgrew maxRobotsKept
	unjudged            int64
}

func (s *crawlState) step(c *siteCheck, h *hit) {
	if h.page {
		if s.open && h.sLo.Sub(s.maxHi) <= crawlGap {
			if h.sLo.Before(s.minLo) {
				s.minLo = h.sLo
			}
			if h.sHi.Before(s.minHi) {
				s.minHi = h.sHi
				s.late = slices.DeleteFunc(s.late, func(r *hit) bool { return !r.sLo.Before(s.minHi) })
			}
			if h.sHi.After(s.maxHi) {
				s.maxHi = h.sHi
			}
			return
		}
		if s.open {
			s.judge(c)
		}
		s.open, s.first, s.overflow = true, c.keep(h), false
		s.minLo, s.minHi, s.maxHi = h.sLo, h.sHi, h.sHi
		s.earlyAny, s.earlyEHi, s.earlyLast = s.anyRobots, s.robotsEHi, s.robotsLast
		clear(s.late)
		s.late = s.late[:0]
		return
	}
	if s.open && h.sLo.Before(s.minHi) {
		if len(s.late) < maxRobotsKept {
			s.late = append(s.late, c.keep(h))
		} else {
			s.overflow = true
		}
	}
	if !s.anyRobots || h.eHi.After(s.robotsEHi) {
		s.robotsEHi = h.eHi
	}
	s.anyRobots = true
	if !s.robotsLast.set || h.sNom.After(s.robotsLast.sNom) {
		s.robotsLast = refOf(h)
	}
}

// end judges the crawl under way.
func (s *crawlState) end(c *siteCheck) {
	if s.open {
		s.judge(c)
		s.open = false
	}
	if s.unjudged > 0 {
		c.warn("%s not judged for robots-not-fetched: more than %d /robots.txt requests at their start", countOf(s.unjudged, "crawl was", "crawls were"), maxRobotsKept)
	}
}

// judge flags the first page of the crawl under way when no /robots.txt
// request to the site started before the crawl and ended within the 24h
// before it.
func (s *crawlState) judge(c *siteCheck) {
	c.cover()
	if c.cfg.Covered != nil {
		if !c.cfg.Covered(c.site, s.minLo.Add(-robotsMaxAge), s.minHi) {
			c.skip(kRobotsNotFetched) // the logs do not cover the day before
			return
		}
	} else if !c.coverSet || c.coverHi.After(s.minLo.Add(-robotsMaxAge)) {
		c.skip(kRobotsNotFetched) // the logs do not reach back far enough
		return
	}
	if s.overflow {
		c.skip(kRobotsNotFetched)
		s.unjudged++
		return
	}
	if s.earlyAny && s.minLo.Sub(s.earlyEHi) <= robotsMaxAge {
		return
	}
	last := s.earlyLast
	for _, r := range s.late {
		if !r.sLo.Before(s.minHi) {
			continue
		}
		if s.minLo.Sub(r.eHi) <= robotsMaxAge {
			return
		}
		if !last.set || r.sNom.After(last.sNom) {
			last = refOf(r)
		}
	}
	first := s.first
	if !c.want(kRobotsNotFetched, first) {
		return
	}
	detail := "first page of a crawl with no /robots.txt request to this site in the 24h before it"
	if last.set {
		detail += fmt.Sprintf(" (the last one was %s earlier, on %s)", fmtDur(first.sNom.Sub(last.sNom)), refAt(last.file, last.line, first))
	} else {
		detail += fmt.Sprintf(" (none since the logs begin at %s)", fmtTime(c.coverNom))
	}
	c.add(kRobotsNotFetched, first, detail)
}

// robotsRef is what the robots-not-fetched check keeps of a /robots.txt
// request: when it started, as logged, and where it was logged.
type robotsRef struct {
	sNom time.Time
	file string
	line int64
	set  bool
}

func refOf(h *hit) robotsRef { return robotsRef{sNom: h.sNom, file: h.File, line: h.Line, set: true} }

// availState follows one site's requests, in order, for the
// robots-unavailable check, from its first /robots.txt request on (no
// page before one can be flagged). A page is flagged when a 5xx answer to
// /robots.txt surely ended before it started and no other answer may have
// ended after that one and before the page started, unless the outage
// began 30 days or more before.
//
// It keeps the /robots.txt answers whose order with the pages to come is
// not settled yet, the one 5xx answer that every page to come follows
// (foldA), the latest end of the answers every page to come follows
// (clearEHi), the 5xx answers that may yet be where an outage began, and
// the pages that wait for answers logged just after them: at most
// maxRobotsKept in all, past which the check stops for the site (and
// says so).
type availState struct {
	foldA    *hit
	openA    []*hit // 5xx answers not yet in foldA
	cleared  bool
	clearEHi time.Time
	openC    []*hit // other answers not yet in clearEHi
	cands    []*hit // 5xx answers by eLo (then input order), none below clearEHi
	waiting  []availPage
	stopped  bool
}

// availPage is a page waiting to be judged, with the 5xx answer that
// ended last for sure before it started.
type availPage struct{ pg, a *hit }

func isFive(h *hit) bool { return h.Status >= 500 && h.Status <= 599 }

// stepAvail takes one more request of the site.
func (c *siteCheck) stepAvail(h *hit) {
	v := c.avail
	if v == nil {
		if h.page {
			return
		}
		v = &availState{}
		c.avail = v
	}
	if v.stopped {
		return
	}
	switch {
	case h.page:
		// Answers logged after h end after it started: its 5xx answer is
		// known now.
		a := v.foldA
		for _, r := range v.openA {
			if !r.eHi.After(h.sLo) {
				a = betterFive(a, r)
			}
		}
		if a != nil {
			v.waiting = append(v.waiting, availPage{c.keep(h), a})
		}
	case isFive(h):
		v.openA = append(v.openA, c.keep(h))
		if !v.cleared || !h.eLo.Before(v.clearEHi) {
			i, _ := slices.BinarySearchFunc(v.cands, h, compareFives)
			v.cands = slices.Insert(v.cands, i, c.keep(h))
		}
	default:
		v.openC = append(v.openC, c.keep(h))
	}
	v.settle(c, h.sNom)
}

// betterFive returns of two 5xx answers the one that surely ended last,
// the first by latest end, then input order, on a tie; a may be nil.
func betterFive(a, r *hit) *hit {
	if a == nil || r.eLo.After(a.eLo) {
		return r
	}
	if r.eLo.Equal(a.eLo) && cmp.Or(r.eHi.Compare(a.eHi), cmp.Compare(r.idx, a.idx)) < 0 {
		return r
	}
	return a
}

// compareFives orders 5xx answers by earliest end, then input order.
func compareFives(a, b *hit) int { return cmp.Or(a.eLo.Compare(b.eLo), cmp.Compare(a.idx, b.idx)) }

// settle judges the pages that no answer to come can concern, and folds
// the answers whose order with every page to come is settled; now is
// the logged start of the latest request: every one to come starts at
// now-lead or later.
func (v *availState) settle(c *siteCheck, now time.Time) {
	if len(v.waiting) == 0 && len(v.openA) == 0 && len(v.openC) == 0 {
		return // nothing unsettled
	}
	bound := now.Add(-c.lead)
	n := 0
	for _, w := range v.waiting {
		if !w.pg.sHi.After(bound) {
			v.judge(c, w)
		} else {
			v.waiting[n] = w
			n++
		}
	}
	clear(v.waiting[n:])
	v.waiting = v.waiting[:n]

	// Every page to come starts after bound: a 5xx answer that surely
	// ended by then is before each of them.
	v.openA = slices.DeleteFunc(v.openA, func(r *hit) bool {
		if r.eHi.After(bound) {
			return false
		}
		v.foldA = betterFive(v.foldA, r)
		return true
	})
	// An answer that may have ended before every page still to judge
	// started: by now (a page to come starts after its logged start, at
	// now or later) and before the earliest latest start of those waiting.
	var upto time.Time
	for i, w := range v.waiting {
		if i == 0 || w.pg.sHi.Before(upto) {
			upto = w.pg.sHi
		}
	}
	v.openC = slices.DeleteFunc(v.openC, func(r *hit) bool {
		if r.eLo.After(now) || len(v.waiting) > 0 && !r.eLo.Before(upto) {
			return false
		}
		if !v.cleared || r.eHi.After(v.clearEHi) {
			v.clearEHi = r.eHi
		}
		v.cleared = true
		return true
	})
	if v.cleared {
		i := 0
		for i < len(v.cands) && v.cands[i].eLo.Before(v.clearEHi) {
			i++
		}
		if i > 0 {
			clear(v.cands[:i])
			v.cands = v.cands[i:]
		}
	}
	if len(v.cands) > 32 {
		v.pruneCands(bound)
	}
	if len(v.openA)+len(v.openC)+len(v.cands)+len(v.waiting) > maxRobotsKept {
		v.stopped = true
		v.foldA, v.openA, v.openC, v.cands, v.waiting = nil, nil, nil, nil, nil
		c.skip(kRobotsUnavailable)
		c.warn("robots-unavailable not checked past %s: more than %d /robots.txt answers and pages were logged too close together to put in order", fmtTime(now), maxRobotsKept)
	}
}

// pruneCands drops the 5xx answers that can no longer be where an outage
// began for any page: where one began is the earliest 5xx answer that
// ended no earlier than the latest other answer before the page, which is
// clearEHi, an answer of openC, or one still to come (ending after
// bound).
func (v *availState) pruneCands(bound time.Time) {
	keep := make([]bool, len(v.cands))
	mark := func(t time.Time, any bool) {
		i := 0
		if any {
			i, _ = slices.BinarySearchFunc(v.cands, t, func(r *hit, t time.Time) int {
				if r.eLo.Before(t) {
					return -1
				}
				return 1
			})
		}
		if i < len(keep) {
			keep[i] = true
		}
	}
	mark(v.clearEHi, v.cleared)
	for _, r := range v.openC {
		mark(r.eHi, true)
	}
	n := 0
	for i, r := range v.cands {
		if keep[i] || !r.eLo.Before(bound) {
			v.cands[n] = r
			n++
		}
	}
	clear(v.cands[n:])
	v.cands = v.cands[:n]
}

// judge flags page w.pg unless an answer other than 5xx may have ended
// after its 5xx answer w.a and before it started, or the outage began 30
// days or more before it.
func (v *availState) judge(c *siteCheck, w availPage) {
	pg, a := w.pg, w.a
	latestOK, m := v.clearEHi, v.cleared
	for _, r := range v.openC {
		if r.eLo.Before(pg.sHi) {
			if !m || r.eHi.After(latestOK) {
				latestOK = r.eHi
			}
			m = true
		}
	}
	var first *hit
	if m {
		if latestOK.After(a.eLo) {
			return // a later answer may have made robots.txt available
		}
		i, _ := slices.BinarySearchFunc(v.cands, latestOK, func(r *hit, t time.Time) int {
			if r.eLo.Before(t) {
				return -1
			}
			return 1
		})
		if i == len(v.cands) {
			return // cannot be: w.a is one
		}
		first = v.cands[i]
	} else {
		if len(v.cands) == 0 {
			return // cannot be: w.a is one
		}
		first = v.cands[0]
	}
	if pg.sHi.Sub(first.eLo) >= outageLimit || !c.want(kRobotsUnavailable, pg) {
		return
	}
	c.add(kRobotsUnavailable, pg, fmt.Sprintf(
		"fetched %s after /robots.txt answered %d (%s) and before it was fetched again: RFC 9309 treats that as a complete disallow",
		fmtDur(pg.sNom.Sub(a.eNom)), a.Status, refTo(a, pg)))
}

// endAvail judges the pages still waiting: every answer is known.
func (c *siteCheck) endAvail() {
	v := c.avail
	if v == nil || v.stopped {
		return
	}
	for _, w := range v.waiting {
		v.judge(c, w)
	}
	v.waiting = nil
}
