package conduct

// The batch check as it was before the checks streamed: every hit of a
// site in memory, sorted, each check a pass over them. Kept as the
// oracle the streaming checks are compared with (reference.go tests).

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/robots"
)

// refCheckSite checks one site's hits, in any order (the order given breaks
// the last ties), and returns its violations, sorted, and its report.
// The hits' Site fields are not read: site names the site.
func refCheckSite(e *Checker, site string, hits []Hit) ([]Violation, SiteReport) {
	xs := make([]hit, len(hits))
	ptrs := make([]*hit, len(hits))
	for i := range hits {
		xs[i] = *newHit(&hits[i], int64(i), e.fileOf(hits[i].File))
		ptrs[i] = &xs[i]
	}
	c := &refCheck{cfg: e.cfg, site: site, skipped: map[string]bool{}}
	c.setHits(ptrs, e.files)
	for _, h := range c.hits {
		if h.clock != c.hits[0].clock && e.cfg.ClockSkew > 0 {
			c.half = e.halfSkew()
		}
	}
	c.run()
	skipped := slices.Sorted(maps.Keys(c.skipped))
	if skipped == nil {
		skipped = []string{}
	}
	slices.SortStableFunc(c.out, func(a, b Violation) int {
		return cmp.Or(
			a.Time.Compare(b.Time),
			strings.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line),
			strings.Compare(a.Kind, b.Kind),
			strings.Compare(a.Path, b.Path),
			strings.Compare(a.Detail, b.Detail),
		)
	})
	return c.out, SiteReport{
		Site:          site,
		Pages:         int64(len(c.pages)),
		RobotsFetches: int64(len(c.robots)),
		ChecksSkipped: skipped,
		NotPromised:   slices.Sorted(maps.Keys(c.notPromised)),
		RobotsNotes:   c.robotsNotes,
		Violations:    len(c.out),
	}
}

// refCheck runs the checks for one site.
type refCheck struct {
	cfg    Config
	site   string
	hits   []*hit // sorted by start, file, line, input position
	pages  []*hit
	robots []*hit
	timed  bool // every hit has a time
	durs   bool // every hit has a duration
	// The logs of the site surely reach back to coverHi (the log's first
	// line, or its first crawler hit, at the latest end of its unit), and
	// began at coverNom as logged; coverSet is false when nothing tells.
	coverHi, coverNom time.Time
	coverSet          bool
	skipped           map[string]bool
	notPromised       map[string]bool // checks the crawler's operator does not promise
	out               []Violation
	robotsNotes       []string
	// half, when several clocks logged the site, is how far the checks
	// with long windows widen each request either way.
	half time.Duration
}

// skewOf is what two requests must prove beyond their logged times.
func (c *refCheck) skewOf(a, b *hit) time.Duration {
	if a.clock == b.clock || c.cfg.ClockSkew <= 0 {
		return 0
	}
	return c.cfg.ClockSkew
}

// widen returns hs widened by c.half either way, when it is set.
func (c *refCheck) widen(hs []*hit) []*hit {
	if c.half == 0 {
		return hs
	}
	out := make([]*hit, len(hs))
	for i, h := range hs {
		out[i] = new(hit)
		h.widenInto(out[i], c.half)
	}
	return out
}

// setHits sorts the site's hits, drops repeats and finds how far back the
// site's files reach.
func (c *refCheck) setHits(hits []*hit, files map[string]*fileUnits) {
	slices.SortFunc(hits, func(a, b *hit) int {
		return cmp.Or(
			a.sNom.Compare(b.sNom),
			strings.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.idx, b.idx),
		)
	})
	c.timed, c.durs = true, true
	seenFile := map[string]bool{}
	for i, h := range hits {
		if i > 0 && h.Line > 0 {
			p := hits[i-1]
			if p.File == h.File && p.Line == h.Line {
				continue // the same line read twice
			}
		}
		c.hits = append(c.hits, h)
		if h.page {
			c.pages = append(c.pages, h)
		} else {
			c.robots = append(c.robots, h)
		}
		c.timed = c.timed && h.timed
		c.durs = c.durs && h.dur
		if !seenFile[h.File] {
			seenFile[h.File] = true
			f := files[h.File]
			if f.hasFirst {
				c.cover(f.firstHi, f.firstNom)
			}
			if c.cfg.LogStart != nil {
				if t, ok := c.cfg.LogStart(h.File); ok {
					c.cover(t.Add(max(units[f.tIdx], time.Second)), t)
				}
			}
		}
	}
}

// cover notes that a log of the site reaches back to hi (logged as nom).
func (c *refCheck) cover(hi, nom time.Time) {
	if !c.coverSet || hi.Before(c.coverHi) {
		c.coverHi, c.coverNom, c.coverSet = hi, nom, true
	}
}

func (c *refCheck) run() {
	robotsOn := c.robotsOn()
	if robotsOn {
		c.checkRobots()
	}
	c.checkRemoteUser()
	c.checkOptOut()
	if !c.timed {
		for _, k := range []string{KindRobotsNotFetched, KindRobotsUnavailable, KindBudget, KindConcurrency, KindPause, KindBackoff, KindAuth} {
			c.skip(k)
		}
		return
	}
	c.checkOverlapAndPause()
	c.checkBackoff()
	// The checks with long windows, on requests widened by half the
	// clock skew when several clocks logged the site.
	hits, pages, rbs := c.hits, c.pages, c.robots
	c.hits, c.pages, c.robots = c.widen(hits), c.widen(pages), c.widen(rbs)
	c.checkBudget()
	if robotsOn {
		c.checkRobotsFetched()
		c.checkRobotsAvailable()
	}
	c.hits, c.pages, c.robots = hits, pages, rbs
	c.checkDeniedThenOK()
}

// checkOptOut flags the pages that surely started after the site's
// opt-out and its grace; a page without a time skips the check.
func (c *refCheck) checkOptOut() {
	if c.cfg.OptedOut == nil {
		return
	}
	at, ok := c.cfg.OptedOut(c.site)
	if !ok {
		return
	}
	end := at.Add(c.cfg.OptOutGrace)
	for _, h := range c.pages {
		switch {
		case !h.timed:
			c.skip(KindOptOut)
		case h.sLo.After(end):
			c.add(KindOptOut, h, fmt.Sprintf("a page of a site that asked to be left out of the crawl at %s, fetched %s after the %s grace ended",
				fmtTime(at), fmtDur(h.sNom.Sub(end)), fmtDur(c.cfg.OptOutGrace)))
		}
	}
}

// robotsOn reports whether the robots.txt checks run; when they do not,
// it lists them as skipped or as not promised.
func (c *refCheck) robotsOn() bool {
	kinds := []string{KindRobots, KindRobotsNotFetched, KindRobotsUnavailable}
	switch {
	case c.cfg.RobotsNotPromised:
		if c.notPromised == nil {
			c.notPromised = map[string]bool{}
		}
		for _, k := range kinds {
			c.notPromised[k] = true
		}
		return false
	case c.cfg.RobotsOff:
		for _, k := range kinds {
			c.skip(k)
		}
		return false
	}
	return true
}

// skip lists a check as skipped, unless it is not promised.
func (c *refCheck) skip(kind string) {
	if !c.notPromised[kind] {
		c.skipped[kind] = true
	}
}

func (c *refCheck) add(kind string, h *hit, detail string) {
	var t time.Time
	if h.timed {
		t = h.sNom.UTC()
	}
	c.out = append(c.out, Violation{
		Kind: kind, Site: c.site, IP: h.IP, Time: t,
		File: h.File, Line: h.Line, Path: h.path, Detail: detail,
	})
}

// checkOverlapAndPause flags requests that provably overlapped an earlier
// one (concurrency) or began too soon after the earlier request that ended
// last (pause).
func (c *refCheck) checkOverlapAndPause() {
	if !c.durs {
		c.skip(KindConcurrency)
	}
	if c.cfg.MinPause <= 0 {
		c.skip(KindPause)
	}
	var o refOverlap
	for _, b := range c.hits {
		o.step(c, b)
	}
}

// overlap follows one site's requests, in order, for the concurrency and
// pause checks: the batch check and the live tracker step through it alike.
type refOverlap struct {
	active   []*hit // earlier requests that may still have been running
	latest   *hit   // the earlier request with the latest provable end
	latestOf map[int32]*hit
}

// step checks b against the requests before it, then counts it among them.
func (o *refOverlap) step(c *refCheck, b *hit) {
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
		// b started before a ended, and a started before b ended.
		sk := c.skewOf(a, b)
		if !b.sHi.Add(sk).After(a.eLo) && !a.sHi.Add(sk).After(b.eLo) && (over == nil || a.eLo.After(over.eLo)) {
			over = a
		}
	}
	// The earlier request that ended last as b's clock sees it.
	last, sk := o.latest, time.Duration(0)
	if last != nil {
		sk = c.skewOf(last, b)
		if same := o.latestOf[b.clock]; sk > 0 && same != nil && !same.eLo.Before(last.eLo.Add(-sk)) {
			last, sk = same, 0
		}
	}
	switch {
	case over != nil:
		c.add(KindConcurrency, b, fmt.Sprintf("2 requests at once: this one started %s before the one on %s ended",
			fmtDur(over.eNom.Sub(b.sNom)), refTo(over, b)))
	case c.cfg.MinPause > 0 && last != nil &&
		b.sHi.Sub(last.eLo)+sk <= c.cfg.MinPause && last.sHi.Sub(b.eLo)+sk <= c.cfg.MinPause:
		c.add(KindPause, b, pauseDetail(c.cfg.MinPause, last, b))
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
	if o.latestOf == nil {
		o.latestOf = map[int32]*hit{}
	}
	if l := o.latestOf[b.clock]; l == nil || b.eLo.After(l.eLo) {
		o.latestOf[b.clock] = b
	}
}

// checkBudget flags the page that makes more than Budget pages within one
// BudgetWindow, once per window.
func (c *refCheck) checkBudget() {
	limit, window := c.cfg.Budget, c.cfg.BudgetWindow
	if limit <= 0 || window <= 0 {
		c.skip(KindBudget)
		return
	}
	p := c.pages
	// minQ holds indexes with increasing sLo, maxQ with decreasing sHi, so
	// that the span of p[i..j] is p[maxQ[0]].sHi - p[minQ[0]].sLo.
	var minQ, maxQ []int
	push := func(k int) {
		for len(minQ) > 0 && !p[minQ[len(minQ)-1]].sLo.Before(p[k].sLo) {
			minQ = minQ[:len(minQ)-1]
		}
		minQ = append(minQ, k)
		for len(maxQ) > 0 && !p[maxQ[len(maxQ)-1]].sHi.After(p[k].sHi) {
			maxQ = maxQ[:len(maxQ)-1]
		}
		maxQ = append(maxQ, k)
	}
	within := func() bool { return p[maxQ[0]].sHi.Sub(p[minQ[0]].sLo) <= window }
	i := 0
	for j := 0; j < len(p); j++ {
		push(j)
		for i < j && !within() {
			i++
			for minQ[0] < i {
				minQ = minQ[1:]
			}
			for maxQ[0] < i {
				maxQ = maxQ[1:]
			}
		}
		if j-i+1 <= limit {
			continue
		}
		k := j + 1
		for k < len(p) {
			push(k)
			if !within() {
				break
			}
			k++
		}
		counts := map[string]int{}
		for _, x := range p[i:k] {
			counts[x.File]++
		}
		c.add(KindBudget, p[j], fmt.Sprintf("%d pages within %s, more than the budget of %d: this is page %d of the window that began at %s (%s)%s",
			k-i, fmtDur(window), limit, limit+1, fmtTime(p[i].sNom), refTo(p[i], p[j]), byLog(counts)))
		i, j = k, k-1
		minQ, maxQ = minQ[:0], maxQ[:0]
	}
}

// checkBackoff flags the first request after a 429 or 5xx answer when it
// came before the wait ran out.
func (c *refCheck) checkBackoff() {
	reported := map[*hit]bool{}
	for i, x := range c.hits {
		st := x.Status
		if st != http.StatusTooManyRequests && (st < 500 || st > 599) {
			continue
		}
		w, ok := waitFor(&c.cfg, x)
		if !ok {
			continue
		}
		for j := i + 1; j < len(c.hits) && j <= i+scanLimit; j++ {
			y := c.hits[j]
			sk := c.skewOf(x, y)
			if y.sLo.Before(x.eHi.Add(sk)) {
				continue // may have been sent before the answer came
			}
			early := false
			if w.hasAt {
				early = !y.sHi.Add(sk).After(w.at)
			} else {
				early = y.sHi.Sub(x.eLo)+sk <= w.delta
			}
			if early && !reported[y] {
				reported[y] = true
				c.add(KindBackoff, y, backoffDetail(x, y, w))
			}
			break
		}
	}
}

// checkRemoteUser flags requests that carried credentials.
func (c *refCheck) checkRemoteUser() {
	for _, h := range c.hits {
		if u := h.RemoteUser(); u != "" && u != "-" {
			c.add(KindAuth, h, "sent credentials: the log shows the remote user "+quote(u))
		}
	}
}

// checkDeniedThenOK flags a 2xx for a page path that earlier answered 401
// or 403 to the crawler.
func (c *refCheck) checkDeniedThenOK() {
	pending := map[string][]*hit{}
	for _, h := range c.hits {
		if !h.page {
			continue
		}
		st := h.Status
		switch {
		case st == http.StatusUnauthorized || st == http.StatusForbidden:
			l := append(pending[h.path], h)
			if len(l) > maxPending {
				l = l[1:]
			}
			pending[h.path] = l
		case st >= 200 && st <= 299:
			l := pending[h.path]
			var denied *hit
			n := 0
			for _, d := range l {
				if !d.eHi.Add(c.skewOf(d, h)).After(h.sLo) {
					if denied == nil || d.eLo.After(denied.eLo) {
						denied = d
					}
				} else {
					l[n] = d
					n++
				}
			}
			if denied == nil {
				continue
			}
			pending[h.path] = l[:n]
			c.add(KindAuth, h, fmt.Sprintf("got %d for a path that answered %d to the crawler %s earlier (%s)",
				st, denied.Status, fmtDur(h.sNom.Sub(denied.eNom)), refTo(denied, h)))
		}
	}
}

// checkRobots flags pages that every robots.txt version the crawler may
// have held disallows: for each page, the /robots.txt requests before it
// (2xx: the versions in force while it ran; 4xx: allow all for a day)
// that surely ended before it started, the last of them (none surely
// ended after another), those that may have ended before it, and without
// one of the last day, every version of the day before.
func (c *refCheck) checkRobots() {
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
		c.skip(KindRobots)
		return
	}
	notes := &robotsHeld{hist: hist, single: single}
	defer func() { c.robotsNotes = notes.noteTexts() }()
	tok := c.cfg.Token
	versionAt := func(t time.Time) int {
		if single {
			return 0
		}
		return hist.At(t)
	}
	disallows := func(v int, path string) bool { return !hist.Versions[v].Robots.Decide(tok, path).Allowed }
	allAllow := func(lo, hi int, path string) bool { // some version in [lo, hi] allows
		for v := max(lo, 0); v <= hi; v++ {
			if !disallows(v, path) {
				return true
			}
		}
		return false
	}
	var prior []*hit
	for _, h := range c.hits {
		if !h.page {
			if h.timed && (h.Status >= 200 && h.Status <= 299 || h.Status >= 400 && h.Status <= 499) {
				prior = append(prior, h)
			}
			continue
		}
		if !strings.HasPrefix(h.path, "/") {
			continue
		}
		if !h.timed {
			if !single {
				notes.note(noteUntimed, -1)
			} else if disallows(0, h.path) {
				c.refRobotsViolation(hist, single, 0, h, "")
			}
			continue
		}
		var done, maybe []*hit
		for _, f := range prior {
			switch {
			case !f.eHi.After(h.sLo):
				done = append(done, f)
			case !f.eLo.After(h.sHi):
				maybe = append(maybe, f)
			}
		}
		var last []*hit
		for _, f := range done {
			superseded := false
			for _, g := range done {
				if g != f && !f.eHi.After(g.eLo) {
					superseded = true
				}
			}
			if !superseded {
				last = append(last, f)
			}
		}
		day := 24 * time.Hour
		fresh := false
		for _, f := range last {
			if h.sLo.Sub(f.eHi) <= day {
				fresh = true
			}
		}
		four := func(f *hit) bool { return f.Status >= 400 }
		a4xx, before, byHeld, byDay := false, false, false, false
		held := -1
		var heldHit *hit
		for _, f := range append(last, maybe...) {
			isRecent := h.sLo.Sub(f.eHi) <= day
			lo, hi := versionAt(f.sLo), versionAt(f.eHi)
			switch {
			case four(f):
				a4xx = a4xx || isRecent
			case !isRecent && fresh:
			case lo < 0:
				before = true
			case isRecent:
				byHeld = byHeld || allAllow(lo, hi, h.path)
				if hi > held {
					held, heldHit = hi, f
				}
			default:
				byDay = byDay || allAllow(lo, hi, h.path)
			}
		}
		if !fresh {
			lo := versionAt(h.sLo.Add(-day))
			if lo < 0 {
				before = true
			} else {
				byDay = byDay || allAllow(lo, versionAt(h.sHi), h.path)
			}
		}
		at := versionAt(h.sNom)
		why := int8(-1)
		switch {
		case a4xx:
			why = noteAllow4xx
		case before:
			why = noteBeforeFirst
		case byHeld:
			why = noteHeld
		case byDay:
			why = noteGrace
		}
		if why >= 0 {
			if why == noteAllow4xx || why == noteBeforeFirst || at >= 0 && disallows(at, h.path) {
				notes.note(why, at)
			}
			continue
		}
		if held >= 0 {
			c.refRobotsViolation(hist, single, held, h, fmt.Sprintf(", which the crawler fetched at %s (%s)", fmtTime(heldHit.sNom), refTo(heldHit, h)))
		} else {
			c.refRobotsViolation(hist, single, at, h, ", in force at the page's time (no /robots.txt request before it in the log within 24h)")
		}
	}
}

// refRobotsViolation adds the robots violation of page h, decided by
// version v.
func (c *refCheck) refRobotsViolation(hist *robots.History, single bool, v int, h *hit, how string) {
	d := hist.Versions[v].Robots.Decide(c.cfg.Token, h.path)
	var detail string
	switch {
	case d.Line > 0:
		detail = fmt.Sprintf("disallowed by robots.txt line %d %s", d.Line, quote(d.Rule))
	case d.Why != "":
		detail = "disallowed: " + parse.EscapeControl(d.Why)
	default:
		detail = "disallowed by robots.txt"
	}
	if !single {
		detail += " of version " + parse.EscapeControl(hist.Versions[v].Label()) + how
	}
	c.add(KindRobots, h, detail)
	vi := &c.out[len(c.out)-1]
	if d.Line > 0 {
		vi.RobotsLine, vi.RobotsRule = d.Line, d.Rule
	}
	if !single {
		vi.RobotsVersion = hist.Versions[v].Label()
	}
}

// checkRobotsFetched flags the first page of a crawl that no recent
// /robots.txt request preceded.
func (c *refCheck) checkRobotsFetched() {
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

func (c *refCheck) judgeCrawl(crawl []*hit) {
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
		detail += fmt.Sprintf(" (the last one was %s earlier, on %s)", fmtDur(first.sNom.Sub(last.sNom)), refTo(last, first))
	} else {
		detail += fmt.Sprintf(" (none since the logs begin at %s)", fmtTime(c.coverNom))
	}
	c.add(KindRobotsNotFetched, first, detail)
}

// checkRobotsAvailable flags pages fetched while the last /robots.txt
// answer the crawler had was a 5xx.
func (c *refCheck) checkRobotsAvailable() {
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
			fmtDur(pg.sNom.Sub(a.eNom)), a.Status, refTo(a, pg)))
	}
}

// referenceCheck is Check as it was: every site's hits in memory.
func referenceCheck(hits []Hit, cfg Config) ([]Violation, []SiteReport) {
	c := NewChecker(cfg)
	for i := range hits {
		c.Measure(&hits[i])
	}
	bySite := map[string][]Hit{}
	for i := range hits {
		c.Anchor(&hits[i])
		bySite[hits[i].Site] = append(bySite[hits[i].Site], hits[i])
	}
	names := slices.Sorted(maps.Keys(bySite))
	violations := []Violation{}
	reports := make([]SiteReport, 0, len(names))
	for _, site := range names {
		vs, rep := refCheckSite(c, site, bySite[site])
		violations = append(violations, vs...)
		reports = append(reports, rep)
	}
	return violations, reports
}
