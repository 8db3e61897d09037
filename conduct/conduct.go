package conduct

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
	// robotsMaxAge is how long a fetched robots.txt may be used
	// (RFC 9309 §2.4).
	robotsMaxAge = 24 * time.Hour
	// crawlGap is the quiet time that separates two crawls of a site.
	crawlGap = time.Hour
	// outageLimit is how long robots.txt may answer 5xx before a
	// crawler may stop treating the site as disallowed (RFC 9309 §2.3.1.4,
	// "for example, 30 days").
	outageLimit = 30 * 24 * time.Hour
	// maxActive bounds the requests kept as possibly still running.
	maxActive = 256
	// scanLimit bounds how far the backoff check looks for the
	// request that followed a 429 or 5xx.
	scanLimit = 4096
	// maxPending bounds the 401/403 answers kept per path.
	maxPending = 64
	// maxQuote is how many bytes of a string from a log or a
	// robots.txt a detail quotes.
	maxQuote = 200
	// floatSlack covers the rounding of a logged duration that went
	// through a float ("0.123" seconds).
	floatSlack = time.Microsecond
)

// IsBackoffStatus reports whether an answer asks a crawler to back off:
// 429 Too Many Requests or any 5xx (SPEC §4). The backoff check holds the
// request that follows one to its wait.
func IsBackoffStatus(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500 && status <= 599
}

// IsPage reports whether a request of the path (as parse.Record.Path
// gives it) is a page: every request is one but a request of exactly
// /robots.txt. A request line that did not parse is a page too.
func IsPage(path string) bool { return path != "/robots.txt" }

// units are the time units a log may be precise to, coarsest first.
var units = [...]time.Duration{
	time.Second, 100 * time.Millisecond, 10 * time.Millisecond, time.Millisecond,
	100 * time.Microsecond, 10 * time.Microsecond, time.Microsecond,
	100 * time.Nanosecond, 10 * time.Nanosecond, time.Nanosecond,
}

// Config holds the promises the crawler is held to. Its fields come
// from the flags of SPEC §1; a zero or negative value turns off the check
// it drives, as said per field, so the zero Config checks only
// robots-not-fetched, robots-unavailable, concurrency, a logged
// Retry-After and auth.
type Config struct {
	// Token is the product token that picks the robots.txt group (the
	// crawler profile's RobotsToken); "" picks the * group alone.
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
	// RobotsOff turns off the robots.txt checks (robots, robots-not-fetched
	// and robots-unavailable) for a crawler that makes no promise about
	// robots.txt: they are listed as skipped.
	RobotsOff bool
	// RobotsNotPromised turns them off for a crawler whose operator says
	// it may ignore robots.txt: they are listed in SiteReport.NotPromised,
	// not as skipped, and never found broken.
	RobotsNotPromised bool
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

// Check checks the crawler's hits against the promises of SPEC §4 (see
// the package documentation) and returns the violations, sorted by site,
// time, file and line (then kind), and one [SiteReport] per site, sorted
// by site, with Site, Pages, RobotsFetches, ChecksSkipped (sorted, never
// nil) and Violations set; ClaimedHits is left for the caller. hits is
// read, never changed.
func Check(hits []Hit, cfg Config) ([]Violation, []SiteReport) {
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
		vs, rep := c.CheckSite(site, bySite[site])
		violations = append(violations, vs...)
		reports = append(reports, rep)
	}
	return violations, reports
}

// Checker runs the checks one site at a time, for a caller that cannot
// hold every hit expanded at once. A file's time units, and where it
// begins, are learnt from the hits of every site: show the Checker every
// hit with Measure, then every hit with Anchor, then call CheckSite once
// per site with that site's hits. [Check] does the same for hits in
// memory. A Checker is not safe for concurrent use.
type Checker struct {
	cfg   Config
	files map[string]*fileUnits
}

// NewChecker returns a Checker that holds hits to cfg.
func NewChecker(cfg Config) *Checker {
	return &Checker{cfg: cfg, files: map[string]*fileUnits{}}
}

// fileOf returns what is known of the named file.
func (e *Checker) fileOf(name string) *fileUnits {
	f := e.files[name]
	if f == nil {
		f = &fileUnits{}
		e.files[name] = f
	}
	return f
}

// Measure narrows the coarsest units that the timestamps and durations
// of h's file are multiples of. Every hit goes through Measure before any
// goes through Anchor.
func (e *Checker) Measure(h *Hit) {
	f := e.fileOf(h.File)
	if h.Resolution > 0 {
		ns := int64(h.Time.Nanosecond())
		for f.tIdx < len(units)-1 && ns%int64(units[f.tIdx]) != 0 {
			f.tIdx++
		}
	}
	if h.HasDuration {
		for f.dIdx < len(units)-1 && !fits(h.Duration, units[f.dIdx]) {
			f.dIdx++
		}
	}
}

// Anchor keeps, per file, the bounds of the hit that surely started
// first: where the file's log begins, as far as its hits tell.
func (e *Checker) Anchor(h *Hit) {
	f := e.fileOf(h.File)
	x := newHit(h, 0, f)
	if x.timed && (!f.hasFirst || x.sHi.Before(f.firstHi)) {
		f.firstHi, f.firstNom, f.hasFirst = x.sHi, x.sNom, true
	}
}

// CheckSite checks one site's hits, in any order (the order given breaks
// the last ties), and returns its violations, sorted, and its report.
// The hits' Site fields are not read: site names the site.
func (e *Checker) CheckSite(site string, hits []Hit) ([]Violation, SiteReport) {
	xs := make([]hit, len(hits))
	ptrs := make([]*hit, len(hits))
	for i := range hits {
		xs[i] = *newHit(&hits[i], i, e.fileOf(hits[i].File))
		ptrs[i] = &xs[i]
	}
	c := &siteCheck{cfg: e.cfg, site: site, skipped: map[string]bool{}}
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
		NotPromised:   slices.Sorted(maps.Keys(c.notPromised)),
		Violations:    len(c.out),
	}
}

// siteCheck runs the checks for one site.
type siteCheck struct {
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
}

// setHits sorts the site's hits, drops repeats and finds how far back the
// site's files reach.
func (c *siteCheck) setHits(hits []*hit, files map[string]*fileUnits) {
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
func (c *siteCheck) cover(hi, nom time.Time) {
	if !c.coverSet || hi.Before(c.coverHi) {
		c.coverHi, c.coverNom, c.coverSet = hi, nom, true
	}
}

func (c *siteCheck) run() {
	robotsOn := c.robotsOn()
	if robotsOn {
		c.checkRobots()
	}
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
	if robotsOn {
		c.checkRobotsFetched()
		c.checkRobotsAvailable()
	}
	c.checkDeniedThenOK()
}

// robotsKinds are the checks of a robots.txt promise.
var robotsKinds = []string{KindRobots, KindRobotsNotFetched, KindRobotsUnavailable}

// robotsOn reports whether the robots.txt checks run; when they do not,
// it lists them as skipped or as not promised.
func (c *siteCheck) robotsOn() bool {
	switch {
	case c.cfg.RobotsNotPromised:
		if c.notPromised == nil {
			c.notPromised = map[string]bool{}
		}
		for _, k := range robotsKinds {
			c.notPromised[k] = true
		}
		return false
	case c.cfg.RobotsOff:
		for _, k := range robotsKinds {
			c.skip(k)
		}
		return false
	}
	return true
}

// skip lists a check as skipped, unless it is not promised.
func (c *siteCheck) skip(kind string) {
	if !c.notPromised[kind] {
		c.skipped[kind] = true
	}
}

func (c *siteCheck) add(kind string, h *hit, detail string) {
	var t time.Time
	if h.timed {
		t = h.sNom.UTC()
	}
	c.out = append(c.out, Violation{
		Kind: kind, Site: c.site, IP: h.IP, Time: t,
		File: h.File, Line: h.Line, Path: h.path, Detail: detail,
	})
}

// ref names another record for a detail: "line 12", or "line 12 of FILE"
// when it is in another file than the violation's record.
func (c *siteCheck) ref(other, cur *hit) string {
	if other.File == cur.File || other.File == "" {
		return fmt.Sprintf("line %d", other.Line)
	}
	return fmt.Sprintf("line %d of %s", other.Line, parse.EscapeControl(other.File))
}
