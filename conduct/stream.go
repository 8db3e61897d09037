package conduct

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/robots"
)

// Result is what [Checker.Run] found.
type Result struct {
	// Violations are sorted by site, time, file and line (then kind), at
	// most Config.MaxViolations per site and kind.
	Violations []Violation
	// Sites are the site reports, sorted by site (see [Check]).
	Sites []SiteReport
	// Warnings say what could not be checked whole, and why: a log too
	// far out of time order, or a bound of the checks' memory reached.
	Warnings []string
}

// Run checks the hits that the sources give, after every one of them
// went through Measure and then Anchor. Each source's hits are put in time
// order within [Disorder] and the sources merged by time, so that each
// site's hits are checked in order, keeping only what the checks' windows
// need: memory grows with the hits of a window and the sites checked at
// once, not with a site's hits. open gives the sources afresh for each
// pass: past maxSitesAtOnce sites, the sites are checked a share at a
// time, a pass over the sources each; a [SiteSource] then gives only the
// hits of the pass's sites.
//
// Run uses as many goroutines as GOMAXPROCS allows: up to maxAhead
// sources are each read in a goroutine of their own (each source by one
// goroutine at a time), and the sites are dealt over goroutines that
// check them beside the merge; the result is the same. The funcs of the
// Config may be called from those goroutines, one call at a time.
func (e *Checker) Run(open func() []Source) Result {
	return e.runPasses(func(keep func(string) bool) []source {
		srcs := open()
		in := make([]source, len(srcs))
		for i, s := range srcs {
			if keep != nil {
				if ss, ok := s.(SiteSource); ok {
					ss.Only(keep)
				} else {
					s = &onlySites{Source: s, keep: keep}
				}
			}
			in[i] = &numbered{src: s, i: int64(i)}
		}
		return in
	})
}

// maxSitesAtOnce bounds the sites checked in one pass over the sources.
const maxSitesAtOnce = 1 << 14

// SiteSource is a Source that can leave out the hits of some sites more
// cheaply than by giving them: Only, called before the first Next, makes
// it give only the hits of the sites keep reports true for.
type SiteSource interface {
	Source
	Only(keep func(site string) bool)
}

// onlySites leaves out the hits of other sites of a Source.
type onlySites struct {
	Source
	keep func(string) bool
}

func (s *onlySites) Next(h *Hit) bool {
	for s.Source.Next(h) {
		if s.keep(h.Site) {
			return true
		}
	}
	return false
}

// runPasses checks the sites a share at a time: open gives the sources
// of a pass over the sites keep holds (keep nil: every site).
func (e *Checker) runPasses(open func(keep func(string) bool) []source) Result {
	atOnce := e.sitesAtOnce
	if atOnce <= 0 {
		atOnce = maxSitesAtOnce
	}
	if len(e.sites) <= atOnce {
		res, late := e.run(open(nil))
		res.Warnings = append(res.Warnings, lateWarnings(late)...)
		res.Sites = e.handOn(res.Sites)
		return res
	}
	names := slices.Sorted(maps.Keys(e.sites))
	all := Result{Violations: []Violation{}}
	if e.onSite == nil {
		all.Sites = make([]SiteReport, 0, len(names))
	}
	late := map[string]*lateHits{}
	for len(names) > 0 {
		share := names[:min(len(names), atOnce)]
		names = names[len(share):]
		in := make(map[string]bool, len(share))
		for _, n := range share {
			in[n] = true
		}
		res, l := e.run(open(func(site string) bool { return in[site] }))
		all.Violations = append(all.Violations, res.Violations...)
		all.Sites = append(all.Sites, e.handOn(res.Sites)...)
		all.Warnings = append(all.Warnings, res.Warnings...)
		for file, x := range l {
			if y := late[file]; y != nil {
				y.n += x.n
				y.line = min(y.line, x.line)
			} else {
				late[file] = x
			}
		}
	}
	all.Warnings = append(all.Warnings, lateWarnings(late)...)
	return all
}

// handOn gives the site reports of a pass to onSite, when it is set, and
// returns what Result.Sites is to hold of them.
func (e *Checker) handOn(sites []SiteReport) []SiteReport {
	if e.onSite == nil {
		return sites
	}
	for _, s := range sites {
		e.onSite(s)
	}
	return nil
}

// run checks the hits of sources in one pass; it returns the hits that
// came too far out of order, per file, apart.
func (e *Checker) run(sources []source) (Result, map[string]*lateHits) {
	e.rankFiles()
	n := e.shardCount()
	feeds := make([]feed, len(sources))
	for i, s := range sources {
		if n > 1 && len(sources) <= maxAhead {
			feeds[i] = readAhead(&reorder{src: &direct{src: s, e: e, shared: true}})
		} else {
			feeds[i] = &reorder{src: &direct{src: s, e: e}}
		}
	}
	if n > 1 && len(sources) <= maxAhead {
		// The merge is the one goroutine that sees every hit: of many
		// sources and past two cores, it would be the one the others
		// wait for. On two, every goroutine is busy already, and the
		// split costs a little more work.
		switch {
		case e.split > 0:
			feeds = splitMerge(feeds, e.split)
		case n > 2 && len(sources) >= 2*minShare:
			feeds = splitMerge(feeds, min(n, len(sources)/minShare))
		}
	}
	m := newMerger(feeds)
	if n > 1 {
		return e.runShards(m, n)
	}
	st := newStream(e, &e.cfg)
	for h := m.next(); h != nil; h = m.next() {
		st.add(h)
	}
	return st.end(), st.late
}

// rankFiles numbers the files known, in the order of their names, for
// compareHits: every file whose hits went through Measure is known
// before Run reads them; a file met later has no rank and compares by
// name. It is called before any goroutine of the run starts.
func (e *Checker) rankFiles() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.files) >= math.MaxInt32 {
		return
	}
	names := slices.Sorted(maps.Keys(e.files))
	for i, name := range names {
		e.files[name].rank = int32(i + 1)
	}
}

// shardCount is how many goroutines check the sites at once: as many as
// the Go runtime runs at once (GOMAXPROCS), unless set for tests.
func (e *Checker) shardCount() int {
	if e.shards > 0 {
		return e.shards
	}
	return runtime.GOMAXPROCS(0)
}

// shardBatch is how many hits go to a shard at once.
const shardBatch = 512

// runShards is run with the sites dealt over n shards by a hash of the
// site: each shard checks its sites in a goroutine of its own while this
// one reads and merges the sources. Sites are checked independently, and
// each site's hits reach its shard in the order one stream takes them,
// so the result, put back in the order of the sites, is the same.
func (e *Checker) runShards(m *merger, n int) (Result, map[string]*lateHits) {
	cfg := e.cfg.serialized(&e.mu)
	shards := make([]*stream, n)
	ins := make([]chan []*hit, n)
	free := make(chan []*hit, 4*n)
	var wg sync.WaitGroup
	for i := range shards {
		st := newStream(e, &cfg)
		shards[i] = st
		in := make(chan []*hit, 4)
		ins[i] = in
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range in {
				for _, h := range b {
					st.add(h)
				}
				clear(b)
				select {
				case free <- b[:0]:
				default:
				}
			}
		}()
	}
	batches := make([][]*hit, n)
	batch := func() []*hit {
		select {
		case b := <-free:
			return b
		default:
			return make([]*hit, 0, shardBatch)
		}
	}
	seed := maphash.MakeSeed()
	lastSite, last := "", 0
	for h := m.next(); h != nil; h = m.next() {
		i := last
		if h.Site != lastSite {
			i = int(maphash.String(seed, h.Site) % uint64(n))
			lastSite, last = h.Site, i
		}
		if batches[i] == nil {
			batches[i] = batch()
		}
		batches[i] = append(batches[i], h)
		if len(batches[i]) == shardBatch {
			ins[i] <- batches[i]
			batches[i] = nil
		}
	}
	for i, in := range ins {
		if len(batches[i]) > 0 {
			in <- batches[i]
		}
		close(in)
	}
	wg.Wait()
	var sites []siteResult
	late := map[string]*lateHits{}
	for _, st := range shards {
		sites = append(sites, st.results()...)
		for file, x := range st.late {
			if y := late[file]; y != nil {
				y.n += x.n
				y.line = min(y.line, x.line)
			} else {
				late[file] = x
			}
		}
	}
	slices.SortFunc(sites, func(a, b siteResult) int { return strings.Compare(a.rep.Site, b.rep.Site) })
	return gather(sites), late
}

// serialized returns cfg with its funcs made safe to call from several
// goroutines at once: one call at a time, holding mu.
func (cfg Config) serialized(mu *sync.Mutex) Config {
	if f := cfg.Robots; f != nil {
		cfg.Robots = func(site string) *robots.Robots { mu.Lock(); defer mu.Unlock(); return f(site) }
	}
	if f := cfg.RobotsHistory; f != nil {
		cfg.RobotsHistory = func(site string) *robots.History { mu.Lock(); defer mu.Unlock(); return f(site) }
	}
	if f := cfg.LogStart; f != nil {
		cfg.LogStart = func(file string) (time.Time, bool) { mu.Lock(); defer mu.Unlock(); return f(file) }
	}
	if f := cfg.Covered; f != nil {
		cfg.Covered = func(site string, from, to time.Time) bool { mu.Lock(); defer mu.Unlock(); return f(site, from, to) }
	}
	if f := cfg.Clock; f != nil {
		cfg.Clock = func(file string) string { mu.Lock(); defer mu.Unlock(); return f(file) }
	}
	if f := cfg.OptedOut; f != nil {
		cfg.OptedOut = func(site string) (time.Time, bool) { mu.Lock(); defer mu.Unlock(); return f(site) }
	}
	return cfg
}

// stream hands each hit to its site's checks.
type stream struct {
	e     *Checker
	cfg   *Config // e's, or a copy safe for several streams at once
	sites map[string]*siteCheck
	byID  []siteByID[siteCheck] // the sites by Hit.SiteID, as far as hits had one
	last  *siteCheck            // the site of the previous hit
	// late counts, per file, the hits that came too far out of order.
	late map[string]*lateHits
}

func newStream(e *Checker, cfg *Config) *stream {
	return &stream{e: e, cfg: cfg, sites: map[string]*siteCheck{}}
}

type lateHits struct {
	n, line int64 // how many, and the lowest line
}

func (st *stream) add(h *hit) {
	c := st.last
	if c == nil || c.site != h.Site {
		c = bySiteID(&st.byID, h.siteID, h.Site, func() *siteCheck {
			c := st.sites[h.Site]
			if c == nil {
				c = newSiteCheck(st.e, st.cfg, h.Site)
				st.sites[h.Site] = c
			}
			return c
		})
		st.last = c
	}
	if c.take(h) {
		if st.late == nil {
			st.late = map[string]*lateHits{}
		}
		l := st.late[h.File]
		if l == nil {
			l = &lateHits{line: h.Line}
			st.late[h.File] = l
		}
		l.n++
		l.line = min(l.line, h.Line)
	}
}

// siteResult is what the checks of one site found.
type siteResult struct {
	vs       []Violation
	rep      SiteReport
	skipped  uint16
	warnings []string
}

// results finishes every site's checks and returns what each found, by
// site.
func (st *stream) results() []siteResult {
	out := make([]siteResult, 0, len(st.sites))
	for _, name := range slices.Sorted(maps.Keys(st.sites)) {
		c := st.sites[name]
		c.end()
		vs, rep := c.report()
		out = append(out, siteResult{vs: vs, rep: rep, skipped: c.skipped, warnings: c.warnings})
	}
	return out
}

// end finishes every site's checks and gathers the result.
func (st *stream) end() Result { return gather(st.results()) }

// gather makes the result of the sites' results, in their order.
func gather(sites []siteResult) Result {
	res := Result{Violations: []Violation{}, Sites: make([]SiteReport, 0, len(sites))}
	skips := map[uint16][]string{} // the lists of skipped checks, shared
	for _, s := range sites {
		rep := s.rep
		if shared, ok := skips[s.skipped]; ok {
			rep.ChecksSkipped = shared
		} else {
			skips[s.skipped] = rep.ChecksSkipped
		}
		res.Violations = append(res.Violations, s.vs...)
		res.Sites = append(res.Sites, rep)
		res.Warnings = append(res.Warnings, s.warnings...)
	}
	return res
}

// lateWarnings says which files had hits too far out of order.
func lateWarnings(late map[string]*lateHits) []string {
	var out []string
	for _, file := range slices.Sorted(maps.Keys(late)) {
		l := late[file]
		out = append(out, fmt.Sprintf(
			"%s: %s logged more than %s out of time order (the first on line %d): counted and checked against robots.txt and for credentials, but left out of the time checks of their site, which are listed as not fully checked",
			parse.EscapeControl(file), countOf(l.n, "request", "requests"), fmtDur(Disorder), l.line))
	}
	return out
}

// countOf says n things: "1 request", "2 requests".
func countOf(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// siteCheck runs the checks of one site over its hits, given in order.
type siteCheck struct {
	cfg  *Config
	e    *Checker // its files, for the budget check
	site string
	// From the survey: every hit has a time, and a duration; the files
	// of the site's hits.
	timed, durs bool
	files       []siteFile
	lead        time.Duration
	// wide: several clocks logged the site, so the checks with long
	// windows take each request widened by half either way: in wbuf,
	// copied to the heap only when a check keeps it (keep), as wkept.
	wide  bool
	half  time.Duration
	wbuf  *hit
	wkept *hit
	// The logs of the site surely reach back to coverHi (the log's first
	// line, or its first crawler hit, at the latest end of its unit), and
	// began at coverNom as logged; coverSet is false when nothing tells.
	coverHi, coverNom time.Time
	coverSet          bool
	coverDone         bool

	rb       *robots.Robots // the latest robots.txt in force, nil for none
	rbLooked bool
	held     *robotsHeld // what robots.txt the crawler may hold
	// The site's opt-out, looked up once (at each page in the tracker).
	optAt     time.Time
	optSet    bool
	optLooked bool

	pages, robotsFetches int64
	// prev is where the previous hit in order stands, when prevSet.
	prev    order
	prevSet bool
	late    int64

	overlap overlap
	backoff backoffState
	budget  budgetState
	crawl   crawlState
	avail   *availState
	auth    *authState

	skipped  uint16              // kinds skipped, by bit
	notProm  uint16              // kinds not promised, by bit
	robotsOn bool                // the robots.txt checks run
	lists    *[numKinds]kindList // nil before the first violation
	seq      int64               // violations made so far, to keep their order
	warnings []string

	// out, when not nil, takes every violation instead of the lists (the
	// live tracker).
	out *[]Violation
}

func newSiteCheck(e *Checker, cfg *Config, site string) *siteCheck {
	c := &siteCheck{cfg: cfg, e: e, site: site, timed: true, durs: true, lead: e.lead}
	c.robotsOn = c.robotsPromise()
	if sv := e.sites[site]; sv != nil {
		c.timed, c.durs, c.files = !sv.untimed, !sv.nodur, sv.files
		if sv.clocks && cfg.ClockSkew > 0 {
			c.wide, c.half = true, e.halfSkew()
			c.lead += c.half
		}
	}
	return c
}

// skewOf is what two requests must prove beyond their logged times: the
// clock skew when two clocks logged them, else nothing.
func (c *siteCheck) skewOf(a, b *hit) time.Duration {
	if a.clock == b.clock || c.cfg.ClockSkew <= 0 {
		return 0
	}
	return c.cfg.ClockSkew
}

// take checks one more hit; it reports true when the hit came too far out
// of order to be checked in order: it is then counted and checked for
// robots.txt and credentials only.
func (c *siteCheck) take(h *hit) (late bool) {
	if p := &c.prev; c.prevSet && h.Line > 0 && p.File == h.File && p.Line == h.Line {
		return false // the same line read twice
	}
	late = c.timed && c.prevSet && compareOrders(&h.order, &c.prev) < 0
	if !late {
		c.prev, c.prevSet = h.order, true
	}
	if h.page {
		c.pages++
		if c.robotsOn {
			c.checkRobots(h, late)
		}
		c.checkOptOut(h)
	} else {
		c.robotsFetches++
		if c.robotsOn && !late {
			c.noteFetch(h)
		}
	}
	c.checkRemoteUser(h)
	if late {
		c.late++
		return true
	}
	if !c.timed {
		return false
	}
	c.overlap.step(c, h)
	c.backoff.step(c, h)
	w := h
	if c.wide {
		if c.wbuf == nil {
			c.wbuf = new(hit)
		}
		w, c.wkept = c.wbuf, nil
		h.widenInto(w, c.half)
	}
	if h.page {
		c.budget.step(c, w, h.f)
	}
	if c.robotsOn {
		c.crawl.step(c, w)
		c.stepAvail(w)
	}
	if h.page {
		c.stepAuth(h)
	}
	return false
}

// keep returns h for a check to keep past the hit being taken: the
// request widened for the checks with long windows is copied to the heap
// (once per hit, whoever keeps it); any other hit is h.
func (c *siteCheck) keep(h *hit) *hit {
	if h != c.wbuf {
		return h
	}
	if c.wkept == nil {
		k := *h
		c.wkept = &k
	}
	return c.wkept
}

// end finishes the checks that wait for what follows a hit.
func (c *siteCheck) end() {
	if c.robotsOn {
		c.robotsOf()
	}
	if c.robotsOn && c.rb == nil {
		c.skip(kRobots)
	}
	if !c.timed {
		for _, k := range timeKinds {
			c.skip(k)
		}
		return
	}
	if !c.durs {
		c.skip(kConcurrency)
	}
	if c.cfg.MinPause <= 0 {
		c.skip(kPause)
	}
	if c.cfg.Budget <= 0 || c.cfg.BudgetWindow <= 0 {
		c.skip(kBudget)
	}
	c.budget.end(c)
	c.crawl.end(c)
	c.endAvail()
	c.endAuth()
	if c.late > 0 {
		for _, k := range timeKinds {
			c.skip(k)
		}
	}
}

// skip lists a check as skipped, unless it is not promised.
func (c *siteCheck) skip(k int) {
	if c.notProm&(1<<k) == 0 {
		c.skipped |= 1 << k
	}
}

// robotsKinds are the checks of a robots.txt promise.
var robotsKinds = []int{kRobots, kRobotsNotFetched, kRobotsUnavailable}

// robotsPromise reports whether the robots.txt checks run; when they do
// not, it lists them as skipped (no promise made, RobotsOff) or as not
// promised (RobotsNotPromised).
func (c *siteCheck) robotsPromise() bool {
	switch {
	case c.cfg.RobotsNotPromised:
		for _, k := range robotsKinds {
			c.notProm |= 1 << k
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

// warn adds a warning about the site's checks.
func (c *siteCheck) warn(format string, args ...any) {
	c.warnings = append(c.warnings, parse.EscapeControl(c.site)+": "+fmt.Sprintf(format, args...))
}

// cover works out, once, how far back the site's logs reach.
func (c *siteCheck) cover() {
	if c.coverDone {
		return
	}
	c.coverDone = true
	// In the checks' order, as ties go to the file met first.
	slices.SortFunc(c.files, func(a, b siteFile) int {
		return cmp.Or(a.first.Compare(b.first), strings.Compare(a.f.name, b.f.name))
	})
	for _, sf := range c.files {
		f := sf.f
		if f.hasFirst {
			c.coverTo(f.firstHi, f.firstNom)
		}
		if c.cfg.LogStart != nil {
			if t, ok := c.cfg.LogStart(f.name); ok {
				c.coverTo(t.Add(max(units[f.tIdx], time.Second)), t)
			}
		}
	}
}

// coverTo notes that a log of the site reaches back to hi (logged as nom).
func (c *siteCheck) coverTo(hi, nom time.Time) {
	if !c.coverSet || hi.Before(c.coverHi) {
		c.coverHi, c.coverNom, c.coverSet = hi, nom, true
	}
}

// want reports whether a violation of kind k at h may be among those
// listed: when it surely is not, it is only counted, and the caller need
// not write its detail.
func (c *siteCheck) want(k int, h *hit) bool {
	if c.out != nil || c.lists == nil {
		return true
	}
	l := &c.lists[k]
	if c.cfg.MaxViolations <= 0 || len(l.vs) < c.cfg.MaxViolations {
		return true
	}
	// The last listed one (the heap's top) against h, all but the detail.
	top := &l.vs[0]
	var t time.Time
	if h.timed {
		t = h.sNom
	}
	if cmp.Or(t.Compare(top.Time), strings.Compare(h.File, top.File), cmp.Compare(h.Line, top.Line), strings.Compare(h.path, top.Path)) > 0 {
		l.n++
		l.left++
		return false
	}
	return true
}

// add makes the violation of kind k at h.
func (c *siteCheck) add(k int, h *hit, detail string) *Violation {
	var t time.Time
	if h.timed {
		t = h.sNom.UTC()
	}
	v := Violation{
		Kind: kinds[k], Site: c.site, IP: h.IP, Time: t,
		File: h.File, Line: h.Line, Path: h.path, Detail: detail,
	}
	if c.out != nil {
		*c.out = append(*c.out, v)
		return &(*c.out)[len(*c.out)-1]
	}
	c.seq++
	if c.lists == nil {
		c.lists = new([numKinds]kindList)
	}
	return c.lists[k].add(v, c.seq, c.cfg.MaxViolations)
}

// report returns the site's violations, sorted, and its report.
func (c *siteCheck) report() ([]Violation, SiteReport) {
	rep := SiteReport{Site: c.site, Pages: c.pages, RobotsFetches: c.robotsFetches, ChecksSkipped: []string{}, RobotsNotes: c.held.noteTexts()}
	var all []listed
	for k := range numKinds {
		if c.skipped&(1<<k) != 0 {
			rep.ChecksSkipped = append(rep.ChecksSkipped, kinds[k])
		}
		if c.notProm&(1<<k) != 0 {
			rep.NotPromised = append(rep.NotPromised, kinds[k])
		}
		if c.lists == nil {
			continue
		}
		l := &c.lists[k]
		rep.Violations += int(l.n)
		if l.left > 0 {
			if rep.ViolationsLeftOut == nil {
				rep.ViolationsLeftOut = map[string]int{}
			}
			rep.ViolationsLeftOut[kinds[k]] = int(l.left)
		}
		for i := range l.vs {
			all = append(all, listed{&l.vs[i], l.seqs[i]})
		}
	}
	slices.SortFunc(all, func(a, b listed) int {
		return cmp.Or(compareViolations(a.v, b.v), cmp.Compare(a.seq, b.seq))
	})
	vs := make([]Violation, len(all))
	for i, x := range all {
		vs[i] = *x.v
	}
	return vs, rep
}

type listed struct {
	v   *Violation
	seq int64
}

// kindList holds the violations of one kind of a site: all of them, or,
// with a bound, the first ones in the report's order (a heap whose top is
// the last of them).
type kindList struct {
	vs      []Violation
	seqs    []int64
	n, left int64 // made, and left out
}

// add adds v, made seq-th, and returns it as held, or nil when it is left
// out.
func (l *kindList) add(v Violation, seq int64, max int) *Violation {
	l.n++
	if max <= 0 || len(l.vs) < max {
		l.vs = append(l.vs, v)
		l.seqs = append(l.seqs, seq)
		i := len(l.vs) - 1
		if max > 0 {
			i = l.up(i)
		}
		return &l.vs[i]
	}
	l.left++
	if l.less(&v, seq, 0) {
		l.vs[0], l.seqs[0] = v, seq
		i := l.down(0)
		return &l.vs[i]
	}
	return nil
}

// less reports whether v (made seq-th) comes before the i-th held.
func (l *kindList) less(v *Violation, seq int64, i int) bool {
	return cmp.Or(compareViolations(v, &l.vs[i]), cmp.Compare(seq, l.seqs[i])) < 0
}

// after reports whether the i-th held comes after the j-th: the heap's
// order, the last one on top.
func (l *kindList) after(i, j int) bool { return l.less(&l.vs[j], l.seqs[j], i) }

func (l *kindList) swap(i, j int) {
	l.vs[i], l.vs[j] = l.vs[j], l.vs[i]
	l.seqs[i], l.seqs[j] = l.seqs[j], l.seqs[i]
}

func (l *kindList) up(i int) int {
	for i > 0 {
		p := (i - 1) / 2
		if !l.after(i, p) {
			break
		}
		l.swap(i, p)
		i = p
	}
	return i
}

func (l *kindList) down(i int) int {
	n := len(l.vs)
	for {
		c := 2*i + 1
		if c >= n {
			return i
		}
		if c+1 < n && l.after(c+1, c) {
			c++
		}
		if !l.after(c, i) {
			return i
		}
		l.swap(i, c)
		i = c
	}
}
