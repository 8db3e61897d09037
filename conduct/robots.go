package conduct

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/robots"
)

// The robots check judges each page by the robots.txt the crawler held
// when it asked for the page (SPEC §15), from the versions of the site's
// robots.txt (one version in force for ever when a single file is given)
// and the crawler's own /robots.txt requests in the log:
//
//   - A /robots.txt request answered 2xx gave the crawler the version in
//     force when it was answered (any version in force while the request
//     ran); one answered 4xx gave it "allow all" (RFC 9309 §2.3.1.3) for
//     24 h (widened by the clock skew on a site that several clocks
//     logged, see Config.ClockSkew); a 5xx or 3xx answer leaves what it
//     held (a 5xx is the robots-unavailable check's matter). The last
//     such request that surely ended before the page started decides; a
//     later one that may have ended before the page may have decided
//     instead.
//   - With no such request before the page in the log, or only one older
//     than 24 h, the crawler may hold any version in force within the 24 h
//     before the page (RFC 9309 §2.4 lets it keep a robots.txt that long).
//
// A page is a violation only when every version the crawler may have held
// disallows it; the violation names the version (the one it fetched, else
// the one in force at the page) and the deciding line. A page that the
// version in force at its time disallows but that another version it may
// have held allows is not a violation, and the site's robots_notes count
// it, as they count pages not judged: after a 4xx answer, before the first
// version (or within 24 h of it with no request shown), or without a time
// when there are dated versions.
//
// The state kept per site is bounded: the requests whose order with the
// pages to come is not settled (a few seconds' worth, at most
// maxRobotsKept), a few candidate requests, and one count per note.

// robotsDay is how long a crawler may hold a fetched robots.txt.
const robotsDay = robotsMaxAge

// maxHeldCandidates bounds the requests that may each be the last one a
// crawler completed before a page (requests whose ends are not ordered).
const maxHeldCandidates = 16

// fetchKind is what a /robots.txt request gave the crawler.
type fetchKind int8

const (
	fetchVersions fetchKind = iota // the versions in force while it ran
	fetchAllow                     // a 4xx: allow all for a day
)

// heldFetch is a /robots.txt request that may be the last one the crawler
// completed before a page.
type heldFetch struct {
	kind   fetchKind
	lo, hi int // versions in force while it ran (lo -1: before the first)
	eLo    time.Time
	eHi    time.Time
	sNom   time.Time
	file   string
	line   int64
}

// robotsHeld follows what robots.txt the crawler may hold, for one site.
type robotsHeld struct {
	hist     *robots.History
	single   bool        // one version, in force for ever (a plain file)
	settled  []heldFetch // candidates for the last request done before the pages to come
	recent   []*hit      // requests that may end after pages to come start
	overflow bool        // recent outgrew maxRobotsKept: the crawler's hold is unknown
	notes    map[robotsNote]int64
	// The decisions of the page under judgement, by version.
	memoV [4]int
	memoD [4]robots.Decision
	memoN int
}

// robotsNote is a kind of page the robots check did not hold against the
// crawler, with the version concerned.
type robotsNote struct {
	kind    int8
	version int
}

const (
	noteGrace       int8 = iota // allowed by a version in force within the day before
	noteHeld                    // allowed by the version the crawler fetched
	noteAllow4xx                // within a day of a 4xx answer
	noteBeforeFirst             // before the first version, or within a day of it unfetched
	noteUntimed                 // no time to place it among dated versions
	noteUnknownHold             // too many /robots.txt requests at once to follow
)

// robotsOf looks the site's robots.txt up: its versions, or one version
// in force for ever. The batch checks do it once per site; the live
// tracker at each page, as a reload may change it.
func (c *siteCheck) robotsOf() *robotsHeld {
	if c.rbLooked && c.out == nil {
		return c.held
	}
	c.rbLooked = true
	var hist *robots.History
	single := false
	if c.cfg.RobotsHistory != nil {
		hist = c.cfg.RobotsHistory(c.site)
	}
	if hist == nil && c.cfg.Robots != nil {
		if rb := c.cfg.Robots(c.site); rb != nil {
			hist = &robots.History{Versions: []robots.Version{{Name: "robots.txt", Robots: rb}}}
			single = true
		}
	}
	if hist == nil {
		c.held, c.rb = nil, nil
		return nil
	}
	c.rb = hist.Latest().Robots
	if c.held == nil {
		c.held = &robotsHeld{}
	}
	c.held.hist, c.held.single = hist, single
	return c.held
}

// noteFetch takes a /robots.txt request of the crawler, in order.
func (c *siteCheck) noteFetch(h *hit) {
	if rh := c.robotsOf(); rh != nil && h.timed {
		rh.push(h)
	}
}

func isFourXX(h *hit) bool { return h.Status >= 400 && h.Status <= 499 }

// push keeps a request that may change what the crawler holds.
func (rh *robotsHeld) push(h *hit) {
	if !(h.Status >= 200 && h.Status <= 299) && !isFourXX(h) {
		return // a 3xx or 5xx answer leaves the crawler what it held
	}
	if len(rh.recent) >= maxRobotsKept {
		rh.overflow = true
		return
	}
	rh.recent = append(rh.recent, h)
}

// at is the version in force at t: for a single robots.txt, the one.
func (rh *robotsHeld) at(t time.Time) int {
	if rh.single {
		return 0
	}
	return rh.hist.At(t)
}

// fetchOf is what request r gave the crawler.
func (rh *robotsHeld) fetchOf(r *hit) heldFetch {
	f := heldFetch{eLo: r.eLo, eHi: r.eHi, sNom: r.sNom, file: r.File, line: r.Line}
	if isFourXX(r) {
		f.kind = fetchAllow
		return f
	}
	f.kind = fetchVersions
	f.lo, f.hi = rh.at(r.sLo), rh.at(r.eHi)
	return f
}

// settle folds into the candidates the requests that surely ended before
// every page to come: those that ended by now-lead, now being the logged
// start of the latest hit (a hit to come surely starts at now-lead or
// later).
func (rh *robotsHeld) settle(now time.Time, lead time.Duration) {
	bound := now.Add(-lead)
	n := 0
	for _, r := range rh.recent {
		if r.eHi.After(bound) {
			rh.recent[n] = r
			n++
			continue
		}
		rh.settled = addLast(rh.settled, rh.fetchOf(r))
		if len(rh.settled) > maxHeldCandidates {
			rh.overflow = true
			rh.settled = rh.settled[:0]
		}
	}
	clear(rh.recent[n:])
	rh.recent = rh.recent[:n]
}

// addLast adds f to the requests that may each have been the last one
// done (none surely ended after another ended): those that surely ended
// before f ended go, and f is not added when one surely ended after it.
func addLast(last []heldFetch, f heldFetch) []heldFetch {
	for _, o := range last {
		if !f.eHi.After(o.eLo) {
			return last
		}
	}
	return append(slices.DeleteFunc(last, func(o heldFetch) bool { return !o.eHi.After(f.eLo) }), f)
}

// checkRobots judges page h by the robots.txt the crawler may have held.
func (c *siteCheck) checkRobots(h *hit, late bool) {
	rh := c.robotsOf()
	if rh == nil || !strings.HasPrefix(h.path, "/") {
		return
	}
	token := c.cfg.Token
	if !h.timed {
		if !rh.single {
			rh.note(noteUntimed, -1)
			return
		}
		rh.memoN = 0
		c.robotsViolation(h, rh, 0, nil)
		return
	}
	if !late {
		rh.settle(h.sNom, c.lead)
	}
	// The candidates: the requests that may each be the last one surely
	// done before h started, those that may have ended before it started,
	// and, without a fresh request, every version of the day before.
	last := rh.settled
	cloned := false
	var maybe []heldFetch
	for _, r := range rh.recent {
		switch {
		case !r.eHi.After(h.sLo):
			if !cloned {
				last, cloned = slices.Clone(last), true
			}
			last = addLast(last, rh.fetchOf(r))
		case !r.eLo.After(h.sHi):
			maybe = append(maybe, rh.fetchOf(r))
		}
	}
	fresh := false
	for _, f := range last {
		if h.sLo.Sub(f.eHi) <= robotsDay {
			fresh = true
		}
	}
	cands := last
	if len(maybe) > 0 {
		cands = slices.Concat(last, maybe)
	}
	if late || rh.overflow {
		fresh = false
	}
	atPage := rh.at(h.sNom)
	rh.memoN = 0
	// The day of allow-all after a 4xx answer is widened as the checks'
	// other day-long windows are on a site that several clocks logged.
	var widen time.Duration
	if c.wide {
		widen = c.half
	}
	why, held, heldFrom := rh.judge(h, token, cands, fresh, widen)
	if why >= 0 {
		// Said only when the version in force at the page disallows it:
		// otherwise nothing was excused.
		if why == noteAllow4xx || why == noteBeforeFirst || atPage >= 0 && !rh.decide(atPage, token, h.path).Allowed {
			rh.note(why, atPage)
		}
		return
	}
	if held >= 0 {
		c.robotsViolation(h, rh, held, func() string {
			return fmt.Sprintf(", which the crawler fetched at %s (%s)", fmtTime(heldFrom.sNom), refAt(heldFrom.file, heldFrom.line, h))
		})
		return
	}
	c.robotsViolation(h, rh, atPage, func() string {
		return ", in force at the page's time (no /robots.txt request before it in the log within 24h)"
	})
}

// decide is version v's decision for path, remembered for the page under
// judgement (memoN is reset for each page): the checks ask a version
// more than once.
func (rh *robotsHeld) decide(v int, token, path string) robots.Decision {
	for i := range rh.memoN {
		if rh.memoV[i] == v {
			return rh.memoD[i]
		}
	}
	d := rh.hist.Versions[v].Robots.Decide(token, path)
	if rh.memoN < len(rh.memoV) {
		rh.memoV[rh.memoN], rh.memoD[rh.memoN] = v, d
		rh.memoN++
	}
	return d
}

// judge says why page h is allowed by a robots.txt the crawler may have
// held (a note kind), or -1 when every one disallows it, with the
// version it fetched last (held, -1 for none) and that request. The
// reasons are tried in a fixed order: a 4xx answer (within a day of its
// end, the page and the answer each widened by widen either way), no
// version known, the version fetched, a version of the day before, any
// version (when the requests were too many to follow).
func (rh *robotsHeld) judge(h *hit, token string, cands []heldFetch, fresh bool, widen time.Duration) (why int8, held int, heldFrom heldFetch) {
	held = -1
	allows := func(lo, hi int) bool {
		for i := max(lo, 0); i <= hi; i++ {
			if rh.decide(i, token, h.path).Allowed {
				return true
			}
		}
		return false
	}
	var a4xx, before, byHeld, byDay, byAny bool
	for _, f := range cands {
		recent := h.sLo.Sub(f.eHi) <= robotsDay
		switch {
		case f.kind == fetchAllow:
			a4xx = a4xx || h.sLo.Add(-widen).Sub(f.eHi.Add(widen)) <= robotsDay
		case !recent && fresh:
			// An older request than the fresh one: not what it held.
		case f.lo < 0:
			before = true
		case recent:
			byHeld = byHeld || allows(f.lo, f.hi)
			if f.hi > held {
				held, heldFrom = f.hi, f
			}
		default:
			byDay = byDay || allows(f.lo, f.hi)
		}
	}
	if !fresh {
		lo, hi := rh.at(h.sLo.Add(-robotsDay)), rh.at(h.sHi)
		if lo < 0 {
			before = true
		} else {
			byDay = byDay || allows(lo, hi)
		}
	}
	if rh.overflow {
		byAny = allows(0, rh.at(h.sHi))
	}
	switch {
	case a4xx:
		return noteAllow4xx, held, heldFrom
	case before:
		return noteBeforeFirst, held, heldFrom
	case byHeld:
		return noteHeld, held, heldFrom
	case byDay:
		return noteGrace, held, heldFrom
	case byAny:
		return noteUnknownHold, held, heldFrom
	}
	return -1, held, heldFrom
}

// robotsViolation makes the robots violation of page h, decided by
// version v of rh.
func (c *siteCheck) robotsViolation(h *hit, rh *robotsHeld, v int, how func() string) {
	ver := &rh.hist.Versions[v]
	d := rh.decide(v, c.cfg.Token, h.path)
	if d.Allowed || !c.want(kRobots, h) {
		return
	}
	var detail string
	switch {
	case d.Line > 0:
		detail = fmt.Sprintf("disallowed by robots.txt line %d %s", d.Line, quote(d.Rule))
	case d.Why != "":
		detail = "disallowed: " + parse.EscapeControl(d.Why)
	default:
		detail = "disallowed by robots.txt"
	}
	if !rh.single {
		detail += " of version " + parse.EscapeControl(ver.Label()) + how()
	}
	v2 := c.add(kRobots, h, detail)
	if v2 == nil {
		return
	}
	if d.Line > 0 {
		v2.RobotsLine, v2.RobotsRule = d.Line, d.Rule
	}
	if !rh.single {
		v2.RobotsVersion = ver.Label()
	}
}

// note counts a page not held against the crawler.
func (rh *robotsHeld) note(kind int8, version int) {
	if rh.notes == nil {
		rh.notes = map[robotsNote]int64{}
	}
	rh.notes[robotsNote{kind, version}]++
}

// noteTexts are the site's robots_notes, in a stable order.
func (rh *robotsHeld) noteTexts() []string {
	if rh == nil || len(rh.notes) == 0 {
		return nil
	}
	keys := make([]robotsNote, 0, len(rh.notes))
	for k := range rh.notes {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b robotsNote) int {
		if a.kind != b.kind {
			return int(a.kind) - int(b.kind)
		}
		return a.version - b.version
	})
	var out []string
	for _, k := range keys {
		n := rh.notes[k]
		pages := countOf(n, "page", "pages")
		ver := ""
		if k.version >= 0 && k.version < len(rh.hist.Versions) {
			ver = parse.EscapeControl(rh.hist.Versions[k.version].Label())
		}
		var s string
		switch k.kind {
		case noteGrace:
			s = fmt.Sprintf("%s disallowed by version %s, allowed by a version in force within the 24h before them, with no /robots.txt request shown since: not violations (RFC 9309 §2.4: a crawler may keep a robots.txt for 24h)", pages, ver)
		case noteHeld:
			s = fmt.Sprintf("%s disallowed by version %s, allowed by the version the crawler fetched before them: not violations", pages, ver)
		case noteAllow4xx:
			s = fmt.Sprintf("%s within 24h after /robots.txt answered 4xx (allow all, RFC 9309 §2.3.1.3): not judged", pages)
		case noteBeforeFirst:
			s = fmt.Sprintf("%s before the first robots.txt version, or within 24h of it with no /robots.txt request shown: not judged", pages)
		case noteUntimed:
			s = fmt.Sprintf("%s without a time, which dated robots.txt versions cannot place: not judged", pages)
		case noteUnknownHold:
			s = fmt.Sprintf("%s allowed by some version since the first, when too many /robots.txt requests at once left unknown which the crawler held: not judged", pages)
		}
		out = append(out, s)
	}
	return out
}
