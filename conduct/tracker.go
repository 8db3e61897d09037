package conduct

import (
	"fmt"
	"slices"
	"time"
)

// Tracker checks the crawler's hits as they arrive, for live following,
// and reports each violation as soon as the log proves it: robots (a
// disallowed page) and auth (credentials sent) at the request, pause and
// concurrency at the second request, budget at the page past the budget
// (once per window). It applies the same rules as [Check] to the same
// bounds of each hit's times, so that hits given in log order yield what
// Check reports for these kinds; the detail of a budget violation counts
// the pages so far instead of the whole window's. Check's ordering by start
// time is the arrival order here: a log whose lines come out of start
// order (nginx logs a request when it ends) may differ from Check where
// two requests overlap. A file's time units are those of its hits so far.
//
// Backoff is checked at the first request surely sent after a 429 or 5xx
// answer. robots-not-fetched, robots-unavailable and the 401-then-2xx
// part of auth need the day before a crawl or what follows a request;
// they are left to Check.
//
// Config.MaxViolations bounds the violations Add returns per site and
// kind: the first ones; the others are counted (LeftOut) while the site
// is held.
//
// State per site is bounded (Budget+1 pages, 256 running requests, 4096
// answers waiting for backoff), and Prune forgets idle sites. A Tracker
// is not safe for concurrent use.
type Tracker struct {
	c       *Checker
	sites   map[string]*trackSite
	leftOut int64
}

type trackSite struct {
	check    siteCheck // cfg and site, for the checks' own wording
	lastEnd  time.Time // the latest eHi
	lastFile string
	lastLine int64
	out      []Violation
	made     [numKinds]int // violations returned, per kind

	// budget: the pages of the window under way, or, after a violation,
	// the bounds of the window it closed.
	pages            []*hit
	closing          bool
	closeLo, closeHi time.Time
}

// NewTracker returns a Tracker that holds hits to cfg (LogStart and
// Covered are not used).
func NewTracker(cfg Config) *Tracker {
	return &Tracker{c: NewChecker(cfg), sites: map[string]*trackSite{}}
}

// Add takes the crawler's next hit, in log order, and returns the
// violations it proves.
func (t *Tracker) Add(in Hit) []Violation {
	s := t.sites[in.Site]
	if s == nil {
		s = &trackSite{check: siteCheck{cfg: &t.c.cfg, site: in.Site}}
		s.check.out = &s.out
		s.check.robotsOn = s.check.robotsPromise()
		t.sites[in.Site] = s
	}
	if in.Line > 0 && s.lastFile == in.File && s.lastLine == in.Line {
		return nil // the same line read twice
	}
	s.lastFile, s.lastLine = in.File, in.Line
	t.c.Measure(&in)
	h := newHit(&in, 0, t.c.fileOf(in.File))
	c := &s.check
	s.out = s.out[:0]
	if h.page && c.robotsOn {
		c.checkRobots(h, false)
	}
	if !h.page && c.robotsOn {
		c.noteFetch(h)
	}
	if h.page {
		c.checkOptOut(h)
	}
	c.checkRemoteUser(h)
	if h.timed {
		if h.eHi.After(s.lastEnd) {
			s.lastEnd = h.eHi
		}
		c.overlap.step(c, h)
		c.backoff.step(c, h)
		if h.page {
			s.budget(h)
		}
	}
	if len(s.out) == 0 {
		return nil
	}
	var out []Violation
	for _, v := range s.out {
		k := slices.Index(kinds[:], v.Kind)
		if max := t.c.cfg.MaxViolations; max > 0 && s.made[k] >= max {
			t.leftOut++
			continue
		}
		s.made[k]++
		out = append(out, v)
	}
	clear(s.out)
	return out
}

// LeftOut returns how many violations Add did not return, past
// Config.MaxViolations for their site and kind.
func (t *Tracker) LeftOut() int64 { return t.leftOut }

// budget is checkBudget for one more page: the page that makes Budget+1
// within one window is a violation, and the window is then closed at the
// first page that falls outside it.
func (s *trackSite) budget(p *hit) {
	c := &s.check
	limit, window := c.cfg.Budget, c.cfg.BudgetWindow
	if limit <= 0 || window <= 0 {
		return
	}
	if s.closing {
		if lo, hi, ok := stillClosing(s.closeLo, s.closeHi, p, window); ok {
			s.closeLo, s.closeHi = lo, hi
			return
		}
		s.closing = false
	}
	s.pages = append(s.pages, p)
	for len(s.pages) > 1 {
		lo, hi := bounds(s.pages)
		if hi.Sub(lo) <= window {
			break
		}
		s.pages[0] = nil
		s.pages = s.pages[1:]
	}
	if len(s.pages) <= limit {
		return
	}
	first := s.pages[0]
	c.add(kBudget, p, fmt.Sprintf("%d pages within %s, more than the budget of %d: this is page %d of the window that began at %s (%s)",
		len(s.pages), fmtDur(window), limit, limit+1, fmtTime(first.sNom), refTo(first, p)))
	s.closing = true
	s.closeLo, s.closeHi = bounds(s.pages)
	s.pages = nil
}

// bounds returns the earliest possible start and the latest possible
// start of pages.
func bounds(pages []*hit) (lo, hi time.Time) {
	lo, hi = pages[0].sLo, pages[0].sHi
	for _, p := range pages[1:] {
		if p.sLo.Before(lo) {
			lo = p.sLo
		}
		if p.sHi.After(hi) {
			hi = p.sHi
		}
	}
	return lo, hi
}

// Prune forgets the sites whose last request ended more than the longest
// window (budget window, pause) before t: no later request can make a
// violation with theirs.
func (t *Tracker) Prune(before time.Time) {
	keep := max(t.c.cfg.BudgetWindow, t.c.cfg.MinPause, t.c.cfg.MinBackoff)
	for site, s := range t.sites {
		if s.lastEnd.Add(keep).Before(before) {
			delete(t.sites, site)
		}
	}
	if len(t.sites) == 0 {
		clear(t.c.files)
		t.c.lastFile = nil
	}
}

// Sites returns how many sites the tracker holds state for.
func (t *Tracker) Sites() int { return len(t.sites) }
