package conduct

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
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
	// KindOptOut: a page of a site that asked the crawler's operator to
	// be left out of the crawl, past the grace (SPEC §15).
	KindOptOut = "opt-out"
)

// kinds are the violation kinds, in the order of their names: a kind's
// index here numbers it in the per-kind state of a site.
var kinds = [...]string{
	KindAuth, KindBackoff, KindBudget, KindConcurrency, KindOptOut, KindPause,
	KindRobots, KindRobotsNotFetched, KindRobotsUnavailable,
}

// The index of each kind in kinds.
const (
	kAuth = iota
	kBackoff
	kBudget
	kConcurrency
	kOptOut
	kPause
	kRobots
	kRobotsNotFetched
	kRobotsUnavailable
	numKinds
)

// timeKinds are the kinds whose checks need the hits' times, in order.
var timeKinds = []int{kRobotsNotFetched, kRobotsUnavailable, kBudget, kConcurrency, kPause, kBackoff, kAuth}

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
	// maxDeniedPaths bounds the paths per site whose 401 or 403 answer
	// waits for a later 2xx; past it the oldest is forgotten, and said.
	maxDeniedPaths = 1 << 14
	// maxRobotsKept bounds the /robots.txt requests per site that the
	// robots-not-fetched and robots-unavailable checks keep individually
	// (those whose order with the pages around them is not yet settled),
	// and the pages that wait for them; past it the check stops for the
	// site, and says so. Only a log with thousands of /robots.txt
	// requests within a second or two comes near it.
	maxRobotsKept = 1 << 12
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
	// RobotsHistory, when set, returns the dated versions of a site's
	// robots.txt; when it gives nil for a site, Robots decides there.
	// Each page is judged by the versions the crawler may have held (see
	// checkRobots).
	RobotsHistory func(site string) *robots.History
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
	// Clock, when set, names the clock that timed the lines of a file:
	// the server that logged it. Files of one clock are compared as
	// logged; between files of two clocks, which may differ by up to
	// ClockSkew, a timing violation must hold however they differ.
	// nil: every file has one clock.
	Clock func(file string) string
	// ClockSkew is how far apart two clocks may be (merge --clock-skew).
	// The concurrency, pause, backoff and auth checks widen the bounds of
	// the two requests they compare by it when two clocks logged them;
	// the budget, robots-not-fetched and robots-unavailable checks, whose
	// windows are a day and more, and the robots check's day of allow-all
	// after a 4xx answer for /robots.txt, widen every request of a site
	// that several clocks logged by half of it either way. Zero or
	// negative: the clocks agree.
	ClockSkew time.Duration
	// OptedOut, when set, returns when a site asked the crawler's
	// operator to leave it out of the crawl (the opt-out e-mail's time),
	// and true; every page of the site surely started after that time
	// plus OptOutGrace is an opt-out violation. A page without a time
	// cannot be placed: the check is then listed as skipped.
	OptedOut    func(site string) (time.Time, bool)
	OptOutGrace time.Duration
	// MaxViolations is how many violations are listed per site and kind:
	// the first ones, in the order of the report; the others are counted
	// ([SiteReport].Violations and ViolationsLeftOut) but not kept. Zero
	// or negative: every one is listed.
	MaxViolations int
}

// Check checks the crawler's hits against the promises of SPEC §4 (see
// the package documentation) and returns the violations, sorted by site,
// time, file and line (then kind), and one [SiteReport] per site, sorted
// by site, with Site, Pages, RobotsFetches, ChecksSkipped (sorted, never
// nil), Violations and ViolationsLeftOut set; ClaimedHits is left for the
// caller. hits is read, never changed. It holds the hits in memory: a
// caller with more than fits there shows a [Checker] its hits log by log.
func Check(hits []Hit, cfg Config) ([]Violation, []SiteReport) {
	c := NewChecker(cfg)
	for i := range hits {
		c.Measure(&hits[i])
	}
	for i := range hits {
		c.Anchor(&hits[i])
	}
	// One source, in the checks' order: nothing is out of place.
	order := make([]int, len(hits))
	keys := make([]orderKey, len(hits))
	for i := range hits {
		order[i] = i
		keys[i] = orderKeyOf(&hits[i])
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(keys[a].compare(&keys[b]), cmp.Compare(a, b))
	})
	res := c.runPasses(func(keep func(string) bool) []source {
		return []source{&sliceSource{hits: hits, order: order, keep: keep}}
	})
	return res.Violations, res.Sites
}

// Checker checks the hits of logs too large to hold in memory, in three
// passes over them: show it every hit with Measure, then every hit with
// Anchor (a file's time units, and where it begins, are learnt from all
// of its hits), then give Run the logs as [Source]s, each nearly in time
// order; Run merges them by time and checks each site's hits in order,
// keeping only what the checks' windows need. [Check] does the same for
// hits in memory. A Checker is not safe for concurrent use.
type Checker struct {
	cfg   Config
	files map[string]*fileUnits
	// mu guards files (and lastFile) while Run reads sources at once
	// (sharedFileOf), and makes the calls of cfg's funcs one at a time
	// (Config.serialized).
	mu sync.Mutex
	// What the Anchor pass learnt (see Survey for a share of it).
	anchorState
	// The file of the last hit shown: hits come file by file.
	lastFile *fileUnits
	// sitesAtOnce, when above zero, replaces maxSitesAtOnce (tests).
	sitesAtOnce int
	// shards, when above zero, replaces GOMAXPROCS as the number of
	// goroutines that check the sites at once (tests).
	shards int
	// split, when above zero, merges the sources read ahead in that many
	// shares whatever their number (tests; see splitMerge).
	split int
	// clocks numbers the clocks of the files (Config.Clock).
	clocks map[string]int32
	// onSite, when set (EachSite), takes the site reports in place of
	// Result.Sites.
	onSite func(SiteReport)
}

// EachSite makes Run hand every site report to f, in the order of the
// sites, as soon as the pass that checked the site ends, and leave
// Result.Sites nil: a caller that keeps the reports elsewhere does not
// hold a hundred thousand of them twice.
func (e *Checker) EachSite(f func(SiteReport)) { e.onSite = f }

// siteByID is a site's value noted under a caller's id, with the site's
// name: ids from two callers (snapshots of two audits, joined) may name
// two sites, and the name decides.
type siteByID[T any] struct {
	name string
	v    *T
}

// bySiteID returns the value of site (numbered id by the caller) noted in
// byID, or, for id 0, an id not seen before or seen with another name,
// what byName finds (or makes) by the site's name, noted under id: a site
// is one value whether its hits come with an id or not.
func bySiteID[T any](byID *[]siteByID[T], id uint32, site string, byName func() *T) *T {
	if id == 0 || id > maxSiteID {
		return byName()
	}
	if int(id) < len(*byID) {
		if e := (*byID)[id]; e.v != nil && e.name == site {
			return e.v
		}
	} else {
		*byID = append(*byID, make([]siteByID[T], int(id)+1-len(*byID))...)
	}
	v := byName()
	(*byID)[id] = siteByID[T]{name: site, v: v}
	return v
}

// maxSiteID bounds the site ids kept in a slice (24 bytes each, in each
// of the checks' goroutines): a site of a larger id is looked up by name.
const maxSiteID = 1 << 18

// siteSurvey is what the Anchor pass learns of a site.
type siteSurvey struct {
	files   []siteFile // the files that hold its hits
	untimed bool       // a hit has no time
	nodur   bool       // a hit has no usable duration
	clock   int32      // the clock of its first hit
	clocks  bool       // its hits have more than one clock
}

// siteFile is a file that holds hits of a site, with the earliest of
// them as logged: the checks' order meets the files in that order.
type siteFile struct {
	f     *fileUnits
	first time.Time
}

// NewChecker returns a Checker that holds hits to cfg.
func NewChecker(cfg Config) *Checker {
	return &Checker{cfg: cfg, files: map[string]*fileUnits{}, anchorState: anchorState{sites: map[string]*siteSurvey{}}}
}

// sharedFileOf is fileOf for goroutines that read sources at once.
func (e *Checker) sharedFileOf(name string) *fileUnits {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.fileOf(name)
}

// fileOf returns what is known of the named file.
func (e *Checker) fileOf(name string) *fileUnits {
	if f := e.lastFile; f != nil && f.name == name {
		return f
	}
	f := e.files[name]
	if f == nil {
		f = &fileUnits{name: name, clock: e.clockOf(name)}
		e.files[name] = f
	}
	e.lastFile = f
	return f
}

// clockOf numbers the clock of a file (Config.Clock).
func (e *Checker) clockOf(file string) int32 {
	if e.cfg.Clock == nil || e.cfg.ClockSkew <= 0 {
		return 0
	}
	name := e.cfg.Clock(file)
	if id, ok := e.clocks[name]; ok {
		return id
	}
	if e.clocks == nil {
		e.clocks = map[string]int32{}
	}
	id := int32(len(e.clocks))
	e.clocks[name] = id
	return id
}

// halfSkew is how far each request of a site that several clocks logged
// is widened either way for the checks with long windows.
func (e *Checker) halfSkew() time.Duration { return (e.cfg.ClockSkew + 1) / 2 }

// Measure narrows the coarsest units that the timestamps and durations
// of h's file are multiples of. Every hit goes through Measure before any
// goes through Anchor.
func (e *Checker) Measure(h *Hit) { measure(e.fileOf(h.File), h) }

func measure(f *fileUnits, h *Hit) {
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
// first: where the file's log begins, as far as its hits tell; and, per
// site, which files hold its hits and whether they all have times and
// durations.
func (e *Checker) Anchor(h *Hit) { e.anchor(e.fileOf(h.File), h) }

// anchorState is what the Anchor pass learns: a Checker's, or a share of
// it (Survey).
type anchorState struct {
	sites map[string]*siteSurvey
	// siteIDs are the sites by Hit.SiteID, as far as hits had one.
	siteIDs []siteByID[siteSurvey]
	// The site of the last hit shown.
	lastSite *siteSurvey
	lastName string
	// lead is the most that a hit's earliest possible start lies before
	// its start as logged: a hit to come, logged at t or later, surely
	// started at t-lead or later.
	lead time.Duration
}

func (e *anchorState) anchor(f *fileUnits, h *Hit) {
	var xh hit
	xh.fill(h, 0, f)
	x := &xh
	if x.timed && (!f.hasFirst || x.sHi.Before(f.firstHi)) {
		f.firstHi, f.firstNom, f.hasFirst = x.sHi, x.sNom, true
	}
	if x.timed {
		e.lead = max(e.lead, x.sNom.Sub(x.sLo))
	}
	s := e.lastSite
	if s == nil || e.lastName != h.Site {
		s = bySiteID(&e.siteIDs, h.SiteID, h.Site, func() *siteSurvey {
			s := e.sites[h.Site]
			if s == nil {
				s = &siteSurvey{}
				e.sites[h.Site] = s
			}
			return s
		})
		e.lastSite, e.lastName = s, h.Site
	}
	s.untimed = s.untimed || !x.timed
	s.nodur = s.nodur || !x.dur
	if len(s.files) == 0 {
		s.clock = f.clock
	} else if f.clock != s.clock {
		s.clocks = true
	}
	n := len(s.files)
	if n == 0 || s.files[n-1].f != f {
		i := slices.IndexFunc(s.files, func(sf siteFile) bool { return sf.f == f })
		if i < 0 {
			s.files = append(s.files, siteFile{f, x.sNom})
			return
		}
		// Keep the last file seen last, so that the hits of one file,
		// which come together, find it at once.
		s.files[i], s.files[n-1] = s.files[n-1], s.files[i]
	}
	if sf := &s.files[n-1]; x.sNom.Before(sf.first) {
		sf.first = x.sNom
	}
}

// A Survey is a share of the Measure and Anchor passes that runs beside
// others, each in a goroutine of its own: every hit of a file must go to
// one Survey (first through Measure, then through Anchor), and the
// Checker takes the surveys in (Join) before Run. Checking a hosting
// provider's logs, the passes over a hundred inputs split that way over
// the cores.
type Survey struct {
	e        *Checker
	st       anchorState
	lastFile *fileUnits
}

// NewSurvey starts a share of the passes.
func (e *Checker) NewSurvey() *Survey {
	return &Survey{e: e, st: anchorState{sites: map[string]*siteSurvey{}}}
}

func (s *Survey) file(name string) *fileUnits {
	if f := s.lastFile; f != nil && f.name == name {
		return f
	}
	s.lastFile = s.e.sharedFileOf(name)
	return s.lastFile
}

// Measure is Checker.Measure for the survey's files.
func (s *Survey) Measure(h *Hit) { measure(s.file(h.File), h) }

// Anchor is Checker.Anchor for the survey's files.
func (s *Survey) Anchor(h *Hit) { s.st.anchor(s.file(h.File), h) }

// Join takes in what the surveys learnt, once they are done: the same as
// their hits through the Checker's own Measure and Anchor, as no file's
// hits went to two of them.
func (e *Checker) Join(surveys ...*Survey) {
	for _, sv := range surveys {
		e.lead = max(e.lead, sv.st.lead)
		for name, b := range sv.st.sites {
			a := e.sites[name]
			if a == nil {
				e.sites[name] = b
				continue
			}
			a.untimed = a.untimed || b.untimed
			a.nodur = a.nodur || b.nodur
			switch {
			case len(a.files) == 0:
				a.clock, a.clocks = b.clock, b.clocks
			case len(b.files) > 0:
				a.clocks = a.clocks || b.clocks || a.clock != b.clock
			}
			a.files = append(a.files, b.files...)
		}
	}
	e.lastSite, e.lastName = nil, ""
}

// refTo names another record for a detail: "line 12", or "line 12 of
// FILE" when it is in another file than the violation's record.
func refTo(other, cur *hit) string { return refAt(other.File, other.Line, cur) }

// refAt is refTo for the record on line of file.
func refAt(file string, line int64, cur *hit) string {
	if file == cur.File || file == "" {
		return fmt.Sprintf("line %d", line)
	}
	return fmt.Sprintf("line %d of %s", line, parse.EscapeControl(file))
}

// compareViolations is the order of a site's violations in the report.
func compareViolations(a, b *Violation) int {
	return cmp.Or(
		a.Time.Compare(b.Time),
		strings.Compare(a.File, b.File),
		cmp.Compare(a.Line, b.Line),
		strings.Compare(a.Kind, b.Kind),
		strings.Compare(a.Path, b.Path),
		strings.Compare(a.Detail, b.Detail),
	)
}
