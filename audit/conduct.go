package audit

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/robots"
)

// The violation kinds of SPEC §4, as they appear in [Violation].Kind and in
// [SiteReport].ChecksSkipped.
const (
	KindRobots            = "robots"
	KindRobotsNotFetched  = "robots-not-fetched"
	KindRobotsUnavailable = "robots-unavailable"
	KindBudget            = "budget"
	KindConcurrency       = "concurrency"
	KindPause             = "pause"
	KindBackoff           = "backoff"
	KindAuth              = "auth"
)

const (
	// conductRobotsPath is the one request that is not a page.
	conductRobotsPath = "/robots.txt"
	// conductRobotsMaxAge is how long a fetched robots.txt may be used
	// (RFC 9309 §2.4).
	conductRobotsMaxAge = 24 * time.Hour
	// conductCrawlGap is the quiet time that separates two crawls of a site.
	conductCrawlGap = time.Hour
	// conductOutageLimit is how long robots.txt may answer 5xx before a
	// crawler may stop treating the site as disallowed (RFC 9309 §2.3.1.4,
	// "for example, 30 days").
	conductOutageLimit = 30 * 24 * time.Hour
	// conductMaxActive bounds the requests kept as possibly still running.
	conductMaxActive = 256
	// conductScanLimit bounds how far the backoff check looks for the
	// request that followed a 429 or 5xx.
	conductScanLimit = 4096
	// conductMaxPending bounds the 401/403 answers kept per path.
	conductMaxPending = 64
	// conductMaxQuote is how many bytes of a string from a log or a
	// robots.txt a detail quotes.
	conductMaxQuote = 200
	// conductFloatSlack covers the rounding of a logged duration that went
	// through a float ("0.123" seconds).
	conductFloatSlack = time.Microsecond
)

// conductUnits are the time units a log may be precise to, coarsest first.
var conductUnits = [...]time.Duration{
	time.Second, 100 * time.Millisecond, 10 * time.Millisecond, time.Millisecond,
	100 * time.Microsecond, 10 * time.Microsecond, time.Microsecond,
	100 * time.Nanosecond, 10 * time.Nanosecond, time.Nanosecond,
}

// ConductConfig holds the promises the crawler is held to. Its fields come
// from the flags of SPEC §1; a zero or negative value turns off the check
// it drives, as said per field, so the zero ConductConfig checks only
// robots-not-fetched, robots-unavailable, concurrency, a logged
// Retry-After and auth.
type ConductConfig struct {
	// Token is the product token that picks the robots.txt group; ""
	// means [parse.Token] ("LohiSoftBot").
	Token string
	// Budget is the most pages allowed to one site within BudgetWindow
	// (SPEC default 20 and 24h). Either one zero or negative: the budget
	// check is off and listed as skipped.
	Budget       int
	BudgetWindow time.Duration
	// MinPause is the least gap between two requests to one site (1s).
	// Zero or negative: the pause check is off and listed as skipped.
	MinPause time.Duration
	// MinBackoff is the least wait after a 429 or 5xx whose Retry-After
	// the log does not record (30s). Zero or negative: only a logged
	// Retry-After is checked.
	MinBackoff time.Duration
	// Robots returns the robots.txt in force for a site. A nil func or a
	// nil result: the robots check is skipped for that site.
	Robots func(site string) *robots.Robots
	// LogStart, when set, returns the time on the first line of a file
	// (any request, not only the crawler's) and true, or false when it is
	// not known: how far back that log reaches, so that a crawl early in
	// it can be judged for robots-not-fetched. Without it the first
	// crawler hit in the file marks where the log begins.
	LogStart func(file string) (time.Time, bool)
	// Covered, when set, reports whether the logs of site cover all of
	// [from, to] (no input missing, cut short or left out by --since):
	// a crawl is judged for robots-not-fetched only when the 24 h before
	// it are covered. Without it, the logs are taken to run without gaps
	// from the earliest LogStart (or crawler hit) of the site's files.
	Covered func(site string, from, to time.Time) bool
}

// CheckConduct checks what the genuine crawler did against the promises of
// SPEC §4 and returns the violations, sorted by site, time, file and line
// (then kind), and one [SiteReport] per site, sorted by site, with Site,
// Pages, RobotsFetches, ChecksSkipped (sorted, never nil) and Violations
// set; ClaimedHits is left for the caller.
//
// hits must be the genuine crawler's hits only: a spoofed or unverified
// address is never held to the crawler's promises. They may come from
// several files (rotated logs) in any order, and all addresses of the
// crawler count together. The result depends only on hits and cfg: the
// same input in another order gives the same output. Records are read,
// never changed; nil records are ignored, and a record that appears twice
// (same file and line, as when a file is given twice) counts once.
//
// # What is checked, and how exactly
//
// A site is a record's Host. A page is any request whose Path is not
// exactly "/robots.txt" (a request line that did not parse is a page too).
// Requests are ordered by start time, then file, then line.
//
// Each violation must be provable from the log: a log's timestamps have a
// resolution (usually a second), and a violation is reported only when it
// holds wherever in its unit each time really lies. A timestamp's unit is
// the record's Resolution, or, when that is finer or unset, the coarsest
// unit that every timestamp of the file is a multiple of; a duration's
// unit is found the same way. So with times to the second and no
// durations, two requests logged in the same second are less than 1s
// apart (a pause violation with --min-pause 1s), while requests logged one
// second apart are not, since they may be up to 2s apart. A logged time is
// the start (Apache %t) or the end (nginx $time_local) of a request; with
// a duration the other end is derived, and without one the request's
// start is at or before its logged time and its end at or after it. For
// the checks that order requests or measure hours (budget, robots-not-
// fetched, robots-unavailable, backoff's "after the response", auth's
// "earlier"), a request without a logged duration is taken to have lasted
// less than its time unit.
//
// The checks, per site:
//
//   - robots: a page (origin-form path, "/...") that cfg.Robots(site)
//     disallows for cfg.Token, whatever the answer's status. The detail
//     quotes the deciding line. Skipped without a robots.txt. The file
//     given is applied to the whole log.
//   - robots-not-fetched: a crawl is a run of pages with no quiet time of
//     more than an hour between them (so a crawl that resumes after a
//     longer pause must again rest on a robots.txt fetched within 24h).
//     The crawl's first page is a violation when no /robots.txt request to
//     the site (any status, any method) started before it and ended
//     within the 24h before it. A crawl is judged only when the logs
//     cover the 24h before it (cfg.Covered; without it, the earliest
//     LogStart or hit in the files that hold this site's hits must be that
//     old), because robots.txt may have been fetched before the logs
//     begin or in a part of them that is missing. A crawl that cannot be
//     judged is no violation, and the check is then listed as skipped.
//   - robots-unavailable: a page that started after a /robots.txt answer
//     with a 5xx status ended, when every other /robots.txt answer (any
//     status but 5xx, including an unlogged one) that may have ended before
//     the page started ended before that 5xx one: RFC 9309 §2.3.1.4 makes
//     an unreachable robots.txt a complete disallow. One violation per
//     page. A copy fetched before the 5xx does not excuse the page (the
//     SPEC applies §2.3.1.4 as it stands, not §2.4's cache). Pages 30 days
//     or more into an outage (counted from its first 5xx in the logs) are
//     not flagged, as the RFC then lets a crawler go back to a cached
//     copy.
//   - budget: more than Budget pages (any status) whose start times all lie
//     within one BudgetWindow. The window slides: the violation is the
//     first page that makes Budget+1 within a window, and its detail gives
//     how many pages that window, anchored at its first page, holds. The
//     next window starts after that one, so each window is one violation.
//   - concurrency: a request that started before an earlier one ended.
//     One violation per request, naming the other request. Listed as
//     skipped when a request of the site has no logged duration: such a
//     request can be shown to overlap only a request that spans it whole,
//     and two without durations never. Line order is not used: servers
//     write a line when its request ends, so it says nothing of starts.
//   - pause: a request that started less than MinPause after the earlier
//     request that ended last, unless it is already a concurrency
//     violation.
//   - backoff: after a 429 or 5xx answer (to any path), the first request
//     that provably started after that answer, when it started before the
//     answer's Retry-After ran out: delta-seconds counted from the end of
//     the answer, or an HTTP-date (RFC 9110 §10.2.3). With no Retry-After
//     logged (the field absent, "-", or unreadable), MinBackoff applies.
//     "Retry-After: 0" asks for no wait. One violation per request.
//   - auth: a request with a remote user (credentials were sent), and a 2xx
//     for a page whose same path (query included) earlier answered 401 or
//     403 to the crawler; each 401/403 is answered by at most one such
//     violation. /robots.txt is left out of the second part: its 403 means
//     "no restrictions" (RFC 9309 §2.3.1.3), not a login.
//
// A record has a time when its Resolution is above zero, as the log reader
// sets it (a time in year 1, the zero time.Time, is a time like any
// other). A site whose records lack a time gets only the robots and
// remote-user checks; the time checks are listed as skipped. A check listed in
// checks_skipped was not (or not fully) checked for that site; violations
// found in the part that could be checked are still reported.
//
// # Strings from outside
//
// Violation.Path and Violation.IP are the raw logged values (printers
// escape them for terminals; JSON keeps them exact). Detail is always one
// printable line: every string it quotes from a log or a robots.txt is
// quoted with [strconv.Quote] (control characters, invalid UTF-8 and
// non-printing runes escaped), cut at 200 bytes, and file names in it go
// through [parse.EscapeControl].
func CheckConduct(hits []*parse.Record, cfg ConductConfig) ([]Violation, []SiteReport) {
	e := newConductEngine(cfg)
	recs := make([]conductRec, 0, len(hits))
	sites := make([]string, 0, len(hits))
	for i, rec := range hits {
		if rec == nil {
			continue
		}
		recs = append(recs, conductRecOf(rec, i))
		sites = append(sites, rec.Host)
		e.noteUnits(&recs[len(recs)-1])
	}
	bySite := map[string][]conductRec{}
	for i := range recs {
		e.noteFirst(&recs[i])
		bySite[sites[i]] = append(bySite[sites[i]], recs[i])
	}
	names := slices.Sorted(maps.Keys(bySite))
	violations := []Violation{}
	reports := make([]SiteReport, 0, len(names))
	for _, site := range names {
		vs, rep := e.checkSite(site, bySite[site])
		violations = append(violations, vs...)
		reports = append(reports, rep)
	}
	return violations, reports
}

// conductRec is what the checks read of one hit. Which of its times the
// log recorded is said by flags, never by a zero time: a request logged
// in year 1 is as timed as any other.
type conductRec struct {
	file        string
	line        int64
	ip          string // the client as the report names it
	target      string // the request target as logged
	user, retry string // remote user and Retry-After, as logged
	status      int
	idx         int // position in the input, the last tie-break

	// timed says whether the log recorded a time: logged, with start and
	// end derived from it (both equal to it without a duration).
	timed              bool
	logged, start, end time.Time
	hasDur             bool
	duration           time.Duration
	// claimedRes is the resolution the log reader claims for logged.
	claimedRes time.Duration
}

// conductRecOf takes what the checks need from a record. A record has a
// time when its Resolution is above zero (the log reader sets it with
// every time it reads); without a duration its start and end are its
// time.
func conductRecOf(rec *parse.Record, idx int) conductRec {
	r := conductRec{
		file: rec.File, line: rec.Line, ip: rec.ClientRaw, target: rec.Target,
		user: rec.RemoteUser, retry: rec.RetryAfter, status: rec.Status, idx: idx,
		timed: rec.Resolution > 0, claimedRes: rec.Resolution,
		hasDur: rec.HasDuration, duration: rec.Duration,
	}
	if rec.Client.IsValid() {
		r.ip = rec.Client.String()
	}
	if r.timed {
		r.logged, r.start, r.end = rec.Time, rec.Time, rec.Time
		if rec.HasDuration {
			r.start, r.end = rec.Start, rec.End
		}
	}
	return r
}

// conductEngine runs the checks one site at a time. It first learns, from
// every hit of every site, the time units of each file (noteUnits, then
// noteFirst), so that a site's checks need only that site's hits in
// memory.
type conductEngine struct {
	cfg   ConductConfig
	files map[string]*conductFile
}

func newConductEngine(cfg ConductConfig) *conductEngine {
	if cfg.Token == "" {
		cfg.Token = parse.Token
	}
	return &conductEngine{cfg: cfg, files: map[string]*conductFile{}}
}

// file returns what is known of the named file.
func (e *conductEngine) file(name string) *conductFile {
	f := e.files[name]
	if f == nil {
		f = &conductFile{}
		e.files[name] = f
	}
	return f
}

// noteUnits narrows the coarsest units that the timestamps and durations
// of r's file are multiples of. Every hit goes through it before any goes
// through noteFirst.
func (e *conductEngine) noteUnits(r *conductRec) {
	f := e.file(r.file)
	if r.timed {
		ns := int64(r.logged.Nanosecond())
		for f.tIdx < len(conductUnits)-1 && ns%int64(conductUnits[f.tIdx]) != 0 {
			f.tIdx++
		}
	}
	if r.hasDur {
		for f.dIdx < len(conductUnits)-1 && !conductFits(r.duration, conductUnits[f.dIdx]) {
			f.dIdx++
		}
	}
}

// noteFirst keeps, per file, the bounds of the hit that surely started
// first.
func (e *conductEngine) noteFirst(r *conductRec) {
	f := e.files[r.file]
	h := conductNewHit(r, f)
	if h.timed && (!f.hasFirst || h.sHi.Before(f.firstHi)) {
		f.firstHi, f.firstNom, f.hasFirst = h.sHi, h.sNom, true
	}
}

// checkSite checks one site's hits, in any order, and returns its
// violations, sorted, and its report.
func (e *conductEngine) checkSite(site string, recs []conductRec) ([]Violation, SiteReport) {
	hits := make([]conductHit, len(recs))
	ptrs := make([]*conductHit, len(recs))
	for i := range recs {
		hits[i] = *conductNewHit(&recs[i], e.files[recs[i].file])
		ptrs[i] = &hits[i]
	}
	c := &conductSite{cfg: e.cfg, site: site, skipped: map[string]bool{}}
	c.setHits(ptrs, e.files)
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
		Violations:    len(c.out),
	}
}

// conductHit is a hit with what the log proves about its times: the
// request started in [sLo, sHi) and ended in [eLo, eHi); sNom and eNom are
// the times as logged (or derived with the duration).
type conductHit struct {
	conductRec
	path string
	page bool
	dur  bool          // the hit has a usable duration
	res  time.Duration // the unit of its logged time

	sNom, eNom         time.Time
	sLo, sHi, eLo, eHi time.Time
}

// conductFile is what the hits of one file tell about the file.
type conductFile struct {
	tIdx, dIdx int // indexes into conductUnits
	// The hit with the earliest sHi: its sHi and sNom.
	firstHi, firstNom time.Time
	hasFirst          bool
}

// conductFits reports whether d is a multiple of unit, allowing for the
// rounding error of a duration that went through a float.
func conductFits(d, unit time.Duration) bool {
	r := d % unit
	if r < 0 {
		r = -r
	}
	return r <= unit/1000 || unit-r <= unit/1000
}

// conductNewHit works out the bounds of a hit's start and end.
func conductNewHit(r *conductRec, f *conductFile) *conductHit {
	path := (&parse.Record{Target: r.target}).Path()
	h := &conductHit{conductRec: *r, path: path, page: path != conductRobotsPath}
	if !r.timed {
		return h
	}
	t := r.logged
	res := conductUnits[f.tIdx]
	if r.claimedRes > res {
		res = r.claimedRes
	}
	h.res = res
	start, end := r.start, r.end
	h.dur = r.hasDur && r.duration >= 0 && !end.Before(start)
	if !h.dur {
		// Without a duration the logged time may be either end: the
		// start is at or before it and the end at or after it. The outer
		// bounds (sLo, eHi) assume the request took less than res.
		h.sNom, h.eNom = t, t
		h.sLo, h.sHi = t, t.Add(res)
		h.eLo, h.eHi = t, t.Add(res)
		return h
	}
	derr := conductUnits[f.dIdx] + conductFloatSlack
	logged := func(x time.Time) (time.Time, time.Time) { return x, x.Add(res) }
	derived := func(x time.Time) (time.Time, time.Time) { return x.Add(-derr), x.Add(res + derr) }
	h.sNom, h.eNom = start, end
	startLogged := start.Equal(t) && !end.Equal(t)
	endLogged := end.Equal(t) && !start.Equal(t)
	switch {
	case startLogged:
		h.sLo, h.sHi = logged(start)
		h.eLo, h.eHi = derived(end)
	case endLogged:
		h.sLo, h.sHi = derived(start)
		h.eLo, h.eHi = logged(end)
	default: // a zero duration, or times that do not say which end was logged
		h.sLo, h.sHi = derived(start)
		h.eLo, h.eHi = derived(end)
	}
	// A request ends no earlier than it starts.
	if h.eLo.Before(h.sLo) {
		h.eLo = h.sLo
	}
	if h.sHi.After(h.eHi) {
		h.sHi = h.eHi
	}
	return h
}

// conductSite runs the checks for one site.
type conductSite struct {
	cfg    ConductConfig
	site   string
	hits   []*conductHit // sorted by start, file, line, input position
	pages  []*conductHit
	robots []*conductHit
	timed  bool // every hit has a time
	durs   bool // every hit has a duration
	// The logs of the site surely reach back to coverHi (the log's first
	// line, or its first crawler hit, at the latest end of its unit), and
	// began at coverNom as logged; coverSet is false when nothing tells.
	coverHi, coverNom time.Time
	coverSet          bool
	skipped           map[string]bool
	out               []Violation
}

// setHits sorts the site's hits, drops repeats and finds how far back the
// site's files reach.
func (c *conductSite) setHits(hits []*conductHit, files map[string]*conductFile) {
	slices.SortFunc(hits, func(a, b *conductHit) int {
		return cmp.Or(
			a.sNom.Compare(b.sNom),
			strings.Compare(a.file, b.file),
			cmp.Compare(a.line, b.line),
			cmp.Compare(a.idx, b.idx),
		)
	})
	c.timed, c.durs = true, true
	seenFile := map[string]bool{}
	for i, h := range hits {
		if i > 0 && h.line > 0 {
			p := hits[i-1]
			if p.file == h.file && p.line == h.line {
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
		if !seenFile[h.file] {
			seenFile[h.file] = true
			f := files[h.file]
			if f.hasFirst {
				c.cover(f.firstHi, f.firstNom)
			}
			if c.cfg.LogStart != nil {
				if t, ok := c.cfg.LogStart(h.file); ok {
					c.cover(t.Add(max(conductUnits[f.tIdx], time.Second)), t)
				}
			}
		}
	}
}

// cover notes that a log of the site reaches back to hi (logged as nom).
func (c *conductSite) cover(hi, nom time.Time) {
	if !c.coverSet || hi.Before(c.coverHi) {
		c.coverHi, c.coverNom, c.coverSet = hi, nom, true
	}
}

func (c *conductSite) run() {
	c.checkRobots()
	c.checkRemoteUser()
	if !c.timed {
		for _, k := range []string{KindRobotsNotFetched, KindRobotsUnavailable, KindBudget, KindConcurrency, KindPause, KindBackoff, KindAuth} {
			c.skip(k)
		}
		return
	}
	c.checkOverlapAndPause()
	c.checkBackoff()
	c.checkBudget()
	c.checkRobotsFetched()
	c.checkRobotsAvailable()
	c.checkDeniedThenOK()
}

func (c *conductSite) skip(kind string) { c.skipped[kind] = true }

func (c *conductSite) add(kind string, h *conductHit, detail string) {
	var t time.Time
	if h.timed {
		t = h.sNom.UTC()
	}
	c.out = append(c.out, Violation{
		Kind: kind, Site: c.site, IP: h.ip, Time: t,
		File: h.file, Line: h.line, Path: h.path, Detail: detail,
	})
}

// ref names another record for a detail: "line 12", or "line 12 of FILE"
// when it is in another file than the violation's record.
func (c *conductSite) ref(other, cur *conductHit) string {
	if other.file == cur.file || other.file == "" {
		return fmt.Sprintf("line %d", other.line)
	}
	return fmt.Sprintf("line %d of %s", other.line, parse.EscapeControl(other.file))
}

// checkRobots flags pages the site's robots.txt disallows.
func (c *conductSite) checkRobots() {
	var rb *robots.Robots
	if c.cfg.Robots != nil {
		rb = c.cfg.Robots(c.site)
	}
	if rb == nil {
		c.skip(KindRobots)
		return
	}
	for _, h := range c.pages {
		if !strings.HasPrefix(h.path, "/") {
			continue
		}
		d := rb.Decide(c.cfg.Token, h.path)
		if d.Allowed {
			continue
		}
		var detail string
		switch {
		case d.Line > 0:
			detail = fmt.Sprintf("disallowed by robots.txt line %d %s", d.Line, conductQuote(d.Rule))
		case d.Why != "":
			detail = "disallowed: " + parse.EscapeControl(d.Why)
		default:
			detail = "disallowed by robots.txt"
		}
		c.add(KindRobots, h, detail)
	}
}

// checkRemoteUser flags requests that carried credentials.
func (c *conductSite) checkRemoteUser() {
	for _, h := range c.hits {
		if u := h.user; u != "" && u != "-" {
			c.add(KindAuth, h, "sent credentials: the log shows the remote user "+conductQuote(u))
		}
	}
}

// checkOverlapAndPause flags requests that provably overlapped an earlier
// one (concurrency) or began too soon after the earlier request that ended
// last (pause).
func (c *conductSite) checkOverlapAndPause() {
	if !c.durs {
		c.skip(KindConcurrency)
	}
	pause := c.cfg.MinPause > 0
	if !pause {
		c.skip(KindPause)
	}
	var active []*conductHit // earlier requests that may still have been running
	var latest *conductHit   // the earlier request with the latest provable end
	for _, b := range c.hits {
		n := 0
		for _, a := range active {
			if !a.eLo.Before(b.sNom) {
				active[n] = a
				n++
			}
		}
		active = active[:n]
		var over *conductHit
		for _, a := range active {
			// b started before a ended, and a started before b ended.
			if !b.sHi.After(a.eLo) && !a.sHi.After(b.eLo) && (over == nil || a.eLo.After(over.eLo)) {
				over = a
			}
		}
		switch {
		case over != nil:
			c.add(KindConcurrency, b, fmt.Sprintf("2 requests at once: this one started %s before the one on %s ended",
				conductDur(over.eNom.Sub(b.sNom)), c.ref(over, b)))
		case pause && latest != nil &&
			b.sHi.Sub(latest.eLo) <= c.cfg.MinPause && latest.sHi.Sub(b.eLo) <= c.cfg.MinPause:
			c.add(KindPause, b, c.pauseDetail(latest, b))
		}
		active = append(active, b)
		if len(active) > conductMaxActive {
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

func (c *conductSite) pauseDetail(a, b *conductHit) string {
	least := "; the least pause is " + conductDur(c.cfg.MinPause)
	gap := b.sNom.Sub(a.eNom)
	switch {
	case !a.dur && !b.dur && a.res >= time.Second && b.res >= time.Second && a.sNom.Truncate(time.Second).Equal(b.sNom.Truncate(time.Second)):
		return fmt.Sprintf("logged in the same second as the request on %s%s", c.ref(a, b), least)
	case !a.dur && !b.dur:
		return fmt.Sprintf("logged %s after the request on %s%s", conductDur(gap), c.ref(a, b), least)
	case gap < 0:
		return fmt.Sprintf("started %s before the request on %s ended, by the logged times%s", conductDur(-gap), c.ref(a, b), least)
	default:
		return fmt.Sprintf("started %s after the request on %s ended%s", conductDur(gap), c.ref(a, b), least)
	}
}

// conductWait is the wait a 429 or 5xx answer asked for.
type conductWait struct {
	delta  time.Duration // with !hasAt: wait this long after the answer
	at     time.Time     // with hasAt: wait until then
	hasAt  bool
	header string // the Retry-After as logged, "" when none
	bad    bool   // a Retry-After was logged but could not be read
}

// conductParseRetryAfter reads a Retry-After value (RFC 9110 §10.2.3):
// delta-seconds (a huge number is capped, not wrapped) or an HTTP-date in
// any of the three forms HTTP allows. ok is false for "", "-" and
// anything else.
func conductParseRetryAfter(v string) (delta time.Duration, at time.Time, isDate, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" || v == "-" {
		return 0, time.Time{}, false, false
	}
	digits := true
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			digits = false
			break
		}
	}
	if digits {
		const maxSec = int64(1<<63-1) / int64(time.Second)
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > maxSec {
			n = maxSec // only overflow is possible here
		}
		return time.Duration(n) * time.Second, time.Time{}, false, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return 0, t, true, true
	}
	return 0, time.Time{}, false, false
}

// waitFor is the wait that a 429 or 5xx answer x asked for; ok is false
// when there is nothing to check.
func (c *conductSite) waitFor(x *conductHit) (w conductWait, ok bool) {
	w.header = x.retry
	delta, at, isDate, parsed := conductParseRetryAfter(w.header)
	switch {
	case parsed && isDate:
		w.at, w.hasAt = at, true
		return w, true
	case parsed:
		w.delta = delta
		return w, delta > 0
	}
	w.bad = strings.TrimSpace(w.header) != "" && strings.TrimSpace(w.header) != "-"
	w.delta = c.cfg.MinBackoff
	return w, w.delta > 0
}

// checkBackoff flags the first request after a 429 or 5xx answer when it
// came before the wait ran out.
func (c *conductSite) checkBackoff() {
	reported := map[*conductHit]bool{}
	for i, x := range c.hits {
		st := x.status
		if st != http.StatusTooManyRequests && (st < 500 || st > 599) {
			continue
		}
		w, ok := c.waitFor(x)
		if !ok {
			continue
		}
		for j := i + 1; j < len(c.hits) && j <= i+conductScanLimit; j++ {
			y := c.hits[j]
			if y.sLo.Before(x.eHi) {
				continue // may have been sent before the answer came
			}
			early := false
			if w.hasAt {
				early = !y.sHi.After(w.at)
			} else {
				early = y.sHi.Sub(x.eLo) <= w.delta
			}
			if early && !reported[y] {
				reported[y] = true
				c.add(KindBackoff, y, c.backoffDetail(x, y, w))
			}
			break
		}
	}
}

func (c *conductSite) backoffDetail(x, y *conductHit, w conductWait) string {
	gap := conductDur(y.sNom.Sub(x.eNom))
	ref := c.ref(x, y)
	st := x.status
	switch {
	case w.hasAt:
		return fmt.Sprintf("came at %s, before the %s that the %d answer on %s asked for (Retry-After: %s)",
			conductTime(y.sNom), conductTime(w.at), st, ref, conductQuote(w.header))
	case w.header != "" && !w.bad:
		return fmt.Sprintf("came %s after the %d answer on %s, which asked for %s (Retry-After: %s)",
			gap, st, ref, conductDur(w.delta), conductQuote(w.header))
	case w.bad:
		return fmt.Sprintf("came %s after the %d answer on %s, whose Retry-After %s is unreadable; the least backoff is %s",
			gap, st, ref, conductQuote(w.header), conductDur(w.delta))
	default:
		return fmt.Sprintf("came %s after the %d answer on %s, with no Retry-After logged; the least backoff is %s",
			gap, st, ref, conductDur(w.delta))
	}
}

// checkBudget flags the page that makes more than Budget pages within one
// BudgetWindow, once per window.
func (c *conductSite) checkBudget() {
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
		c.add(KindBudget, p[j], fmt.Sprintf("%d pages within %s, more than the budget of %d: this is page %d of the window that began at %s (%s)",
			k-i, conductDur(window), limit, limit+1, conductTime(p[i].sNom), c.ref(p[i], p[j])))
		i, j = k, k-1
		minQ, maxQ = minQ[:0], maxQ[:0]
	}
}

// checkRobotsFetched flags the first page of a crawl that no recent
// /robots.txt request preceded.
func (c *conductSite) checkRobotsFetched() {
	p := c.pages
	if len(p) == 0 {
		return
	}
	start := 0
	maxHi := p[0].sHi
	for j := 1; j <= len(p); j++ {
		if j < len(p) && p[j].sLo.Sub(maxHi) <= conductCrawlGap {
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

func (c *conductSite) judgeCrawl(crawl []*conductHit) {
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
		if !c.cfg.Covered(c.site, minLo.Add(-conductRobotsMaxAge), minHi) {
			c.skip(KindRobotsNotFetched) // the logs do not cover the day before
			return
		}
	} else if !c.coverSet || c.coverHi.After(minLo.Add(-conductRobotsMaxAge)) {
		c.skip(KindRobotsNotFetched) // the logs do not reach back far enough
		return
	}
	var last *conductHit
	for _, r := range c.robots {
		if !r.sLo.Before(minHi) {
			continue
		}
		if minLo.Sub(r.eHi) <= conductRobotsMaxAge {
			return
		}
		if last == nil || r.sNom.After(last.sNom) {
			last = r
		}
	}
	first := crawl[0]
	detail := "first page of a crawl with no /robots.txt request to this site in the 24h before it"
	if last != nil {
		detail += fmt.Sprintf(" (the last one was %s earlier, on %s)", conductDur(first.sNom.Sub(last.sNom)), c.ref(last, first))
	} else {
		detail += fmt.Sprintf(" (none since the logs begin at %s)", conductTime(c.coverNom))
	}
	c.add(KindRobotsNotFetched, first, detail)
}

// checkRobotsAvailable flags pages fetched while the last /robots.txt
// answer the crawler had was a 5xx.
func (c *conductSite) checkRobotsAvailable() {
	var fivesByHi, clears []*conductHit
	for _, r := range c.robots {
		if r.status >= 500 && r.status <= 599 {
			fivesByHi = append(fivesByHi, r)
		} else {
			clears = append(clears, r)
		}
	}
	if len(fivesByHi) == 0 || len(c.pages) == 0 {
		return
	}
	byBound := func(bound func(*conductHit) time.Time) func(a, b *conductHit) int {
		return func(a, b *conductHit) int { return cmp.Or(bound(a).Compare(bound(b)), cmp.Compare(a.idx, b.idx)) }
	}
	eHi := func(h *conductHit) time.Time { return h.eHi }
	eLo := func(h *conductHit) time.Time { return h.eLo }
	slices.SortFunc(fivesByHi, byBound(eHi))
	fivesByLo := slices.Clone(fivesByHi)
	slices.SortFunc(fivesByLo, byBound(eLo))
	slices.SortFunc(clears, byBound(eLo))
	// best[k]: of fivesByHi[:k+1], the one that ended last for sure.
	best := make([]*conductHit, len(fivesByHi))
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
		n, _ := slices.BinarySearchFunc(fivesByHi, pg.sLo, func(r *conductHit, t time.Time) int {
			if r.eHi.After(t) {
				return 1
			}
			return -1
		})
		if n == 0 {
			continue // no 5xx answer surely came before the page
		}
		a := best[n-1]
		m, _ := slices.BinarySearchFunc(clears, pg.sHi, func(r *conductHit, t time.Time) int {
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
			q, _ := slices.BinarySearchFunc(fivesByLo, latestOK, func(r *conductHit, t time.Time) int {
				if r.eLo.Before(t) {
					return -1
				}
				return 1
			})
			first = fivesByLo[q]
		}
		if pg.sHi.Sub(first.eLo) >= conductOutageLimit {
			continue
		}
		c.add(KindRobotsUnavailable, pg, fmt.Sprintf(
			"fetched %s after /robots.txt answered %d (%s) and before it was fetched again: RFC 9309 treats that as a complete disallow",
			conductDur(pg.sNom.Sub(a.eNom)), a.status, c.ref(a, pg)))
	}
}

// checkDeniedThenOK flags a 2xx for a page path that earlier answered 401
// or 403 to the crawler.
func (c *conductSite) checkDeniedThenOK() {
	pending := map[string][]*conductHit{}
	for _, h := range c.hits {
		if !h.page {
			continue
		}
		st := h.status
		switch {
		case st == http.StatusUnauthorized || st == http.StatusForbidden:
			l := append(pending[h.path], h)
			if len(l) > conductMaxPending {
				l = l[1:]
			}
			pending[h.path] = l
		case st >= 200 && st <= 299:
			l := pending[h.path]
			var denied *conductHit
			n := 0
			for _, d := range l {
				if !d.eHi.After(h.sLo) {
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
				st, denied.status, conductDur(h.sNom.Sub(denied.eNom)), c.ref(denied, h)))
		}
	}
}

// conductQuote quotes a string from a log or a robots.txt for a detail:
// Go syntax, so that it is one printable line, cut at conductMaxQuote
// bytes.
func conductQuote(s string) string {
	if len(s) > conductMaxQuote {
		n := conductMaxQuote
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return strconv.Quote(s)
}

// conductTime formats a time for a detail: RFC 3339 in UTC, with a
// fraction only when there is one.
func conductTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// conductDur formats a duration for people: "0.4s", "12s", "2m30s",
// "25h3m"; below a minute to the millisecond, above it to the second.
func conductDur(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign = "-"
		if d == -1<<63 {
			d++
		}
		d = -d
	}
	if d < time.Minute {
		s := strconv.FormatFloat(d.Round(time.Millisecond).Seconds(), 'f', 3, 64)
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		return sign + s + "s"
	}
	d = d.Round(time.Second)
	h, m, s := d/time.Hour, (d%time.Hour)/time.Minute, (d%time.Minute)/time.Second
	var b strings.Builder
	b.WriteString(sign)
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	if s > 0 {
		fmt.Fprintf(&b, "%ds", s)
	}
	return b.String()
}
