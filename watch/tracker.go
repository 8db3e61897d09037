package watch

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/verify"
)

// Tracker checks the genuine crawler's conduct as its requests arrive and
// reports each violation as soon as the log proves it.
type Tracker interface {
	// Add takes the next genuine hit, in log order, and returns the
	// violations it proves.
	Add(rec *parse.Record) []verify.Violation
	// Prune forgets the sites whose last request ended before t: no later
	// request can make a violation with theirs.
	Prune(t time.Time)
}

// Incremental is a Tracker for the checks of verify.CheckConduct that a
// log proves at the request that breaks the promise: robots (a disallowed
// page), auth (credentials sent), concurrency and pause (at the second
// request), and budget (at the page past the budget, once per window). It
// reads times as the batch checks do: a time is known to its unit (the
// record's Resolution, or the coarsest unit every time of the file so far
// is a multiple of), and a violation is reported only when it holds
// wherever in its unit each time lies. Fed the same hits in log order, it
// reports what verify.CheckConduct reports for these kinds. The robots
// fetch, robots.txt outage, backoff and 401-then-2xx checks need what
// comes after, or a day before, and are left to the batch audit.
//
// State per site is bounded: at most Budget+1 pages and 256 running
// requests, and Prune forgets idle sites.
type Incremental struct {
	cfg   verify.ConductConfig
	sites map[string]*trackSite
	files map[string]*trackFile
}

// NewIncremental returns a tracker held to cfg (LogStart and Covered are
// not used).
func NewIncremental(cfg verify.ConductConfig) *Incremental {
	if cfg.Token == "" {
		cfg.Token = parse.Token
	}
	return &Incremental{cfg: cfg, sites: map[string]*trackSite{}, files: map[string]*trackFile{}}
}

// trackUnits are the time units a log may be precise to, coarsest first.
var trackUnits = [...]time.Duration{
	time.Second, 100 * time.Millisecond, 10 * time.Millisecond, time.Millisecond,
	100 * time.Microsecond, 10 * time.Microsecond, time.Microsecond,
	100 * time.Nanosecond, 10 * time.Nanosecond, time.Nanosecond,
}

// trackFloatSlack covers the rounding of a logged duration that went
// through a float.
const trackFloatSlack = time.Microsecond

// trackMaxActive bounds the requests kept as possibly still running.
const trackMaxActive = 256

type trackFile struct{ tIdx, dIdx int }

// trackHit is a hit with the bounds of its start [sLo, sHi) and end
// [eLo, eHi), and its nominal start and end.
type trackHit struct {
	file               string
	line               int64
	ip, path           string
	dur                bool
	sNom, eNom         time.Time
	sLo, sHi, eLo, eHi time.Time
}

type trackSite struct {
	active []*trackHit
	latest *trackHit
	last   time.Time // the latest eHi

	// budget: the pages of the window under way, or, after a violation,
	// the span of the window it closed.
	pages              []*trackHit
	closing            bool
	closeLo, closeHi   time.Time
	lastFile           string
	lastLine           int64
	hasLast, anyUntime bool
}

func fits(d, unit time.Duration) bool {
	r := d % unit
	if r < 0 {
		r = -r
	}
	return r <= unit/1000 || unit-r <= unit/1000
}

// hit works out the bounds of rec's times, narrowing its file's units.
func (t *Incremental) hit(rec *parse.Record) *trackHit {
	f := t.files[rec.File]
	if f == nil {
		f = &trackFile{}
		t.files[rec.File] = f
	}
	ns := int64(rec.Time.Nanosecond())
	for f.tIdx < len(trackUnits)-1 && ns%int64(trackUnits[f.tIdx]) != 0 {
		f.tIdx++
	}
	if rec.HasDuration {
		for f.dIdx < len(trackUnits)-1 && !fits(rec.Duration, trackUnits[f.dIdx]) {
			f.dIdx++
		}
	}
	h := &trackHit{file: rec.File, line: rec.Line, ip: rec.ClientRaw, path: rec.Path()}
	if rec.Client.IsValid() {
		h.ip = rec.Client.String()
	}
	res := max(trackUnits[f.tIdx], rec.Resolution)
	tm := rec.Time
	start, end := tm, tm
	if rec.HasDuration {
		start, end = rec.Start, rec.End
	}
	h.dur = rec.HasDuration && rec.Duration >= 0 && !end.Before(start)
	if !h.dur {
		h.sNom, h.eNom = tm, tm
		h.sLo, h.sHi, h.eLo, h.eHi = tm, tm.Add(res), tm, tm.Add(res)
		return h
	}
	derr := trackUnits[f.dIdx] + trackFloatSlack
	logged := func(x time.Time) (time.Time, time.Time) { return x, x.Add(res) }
	derived := func(x time.Time) (time.Time, time.Time) { return x.Add(-derr), x.Add(res + derr) }
	h.sNom, h.eNom = start, end
	switch {
	case start.Equal(tm) && !end.Equal(tm):
		h.sLo, h.sHi = logged(start)
		h.eLo, h.eHi = derived(end)
	case end.Equal(tm) && !start.Equal(tm):
		h.sLo, h.sHi = derived(start)
		h.eLo, h.eHi = logged(end)
	default:
		h.sLo, h.sHi = derived(start)
		h.eLo, h.eHi = derived(end)
	}
	if h.eLo.Before(h.sLo) {
		h.eLo = h.sLo
	}
	if h.sHi.After(h.eHi) {
		h.sHi = h.eHi
	}
	return h
}

// Add implements Tracker.
func (t *Incremental) Add(rec *parse.Record) []verify.Violation {
	if rec == nil {
		return nil
	}
	s := t.sites[rec.Host]
	if s == nil {
		s = &trackSite{}
		t.sites[rec.Host] = s
	}
	// The same line read twice counts once.
	if s.hasLast && rec.Line > 0 && s.lastFile == rec.File && s.lastLine == rec.Line {
		return nil
	}
	s.lastFile, s.lastLine, s.hasLast = rec.File, rec.Line, true

	var out []verify.Violation
	timed := rec.Resolution > 0
	var h *trackHit
	if timed {
		h = t.hit(rec)
	} else {
		h = &trackHit{file: rec.File, line: rec.Line, ip: rec.ClientRaw, path: rec.Path()}
		if rec.Client.IsValid() {
			h.ip = rec.Client.String()
		}
	}
	add := func(kind, detail string) {
		v := verify.Violation{Kind: kind, Site: rec.Host, IP: h.ip, File: h.file, Line: h.line, Path: h.path, Detail: detail}
		if timed {
			v.Time = h.sNom.UTC()
		}
		out = append(out, v)
	}
	page := h.path != "/robots.txt"

	if page && strings.HasPrefix(h.path, "/") && t.cfg.Robots != nil {
		if rb := t.cfg.Robots(rec.Host); rb != nil {
			if d := rb.Decide(t.cfg.Token, h.path); !d.Allowed {
				switch {
				case d.Line > 0:
					add(verify.KindRobots, fmt.Sprintf("disallowed by robots.txt line %d %s", d.Line, quote(d.Rule)))
				case d.Why != "":
					add(verify.KindRobots, "disallowed: "+parse.EscapeControl(d.Why))
				default:
					add(verify.KindRobots, "disallowed by robots.txt")
				}
			}
		}
	}
	if u := rec.RemoteUser; u != "" && u != "-" {
		add(verify.KindAuth, "sent credentials: the log shows the remote user "+quote(u))
	}
	if !timed {
		return out
	}
	if h.eHi.After(s.last) {
		s.last = h.eHi
	}
	t.overlapAndPause(s, h, add)
	if page {
		t.budget(s, h, add)
	}
	return out
}

// overlapAndPause is the concurrency and pause check for h against the
// earlier requests of its site.
func (t *Incremental) overlapAndPause(s *trackSite, b *trackHit, add func(kind, detail string)) {
	n := 0
	for _, a := range s.active {
		if !a.eLo.Before(b.sNom) {
			s.active[n] = a
			n++
		}
	}
	clear(s.active[n:])
	s.active = s.active[:n]
	var over *trackHit
	for _, a := range s.active {
		if !b.sHi.After(a.eLo) && !a.sHi.After(b.eLo) && (over == nil || a.eLo.After(over.eLo)) {
			over = a
		}
	}
	pause := t.cfg.MinPause
	switch {
	case over != nil:
		add(verify.KindConcurrency, fmt.Sprintf("2 requests at once: this one started %s before the one on %s ended", over.eNom.Sub(b.sNom), ref(over, b)))
	case pause > 0 && s.latest != nil && b.sHi.Sub(s.latest.eLo) <= pause && s.latest.sHi.Sub(b.eLo) <= pause:
		add(verify.KindPause, fmt.Sprintf("started %s after the request on %s; the least pause is %s", b.sNom.Sub(s.latest.eNom), ref(s.latest, b), pause))
	}
	s.active = append(s.active, b)
	if len(s.active) > trackMaxActive {
		low := 0
		for i, a := range s.active {
			if a.eLo.Before(s.active[low].eLo) {
				low = i
			}
		}
		s.active = append(s.active[:low], s.active[low+1:]...)
	}
	if s.latest == nil || b.eLo.After(s.latest.eLo) {
		s.latest = b
	}
}

// budget is the budget check for the page p: the page that makes Budget+1
// within one window is a violation, and the window it is in is then closed
// at the first page that falls outside it.
func (t *Incremental) budget(s *trackSite, p *trackHit, add func(kind, detail string)) {
	limit, window := t.cfg.Budget, t.cfg.BudgetWindow
	if limit <= 0 || window <= 0 {
		return
	}
	if s.closing {
		lo, hi := s.closeLo, s.closeHi
		if p.sLo.Before(lo) {
			lo = p.sLo
		}
		if p.sHi.After(hi) {
			hi = p.sHi
		}
		if hi.Sub(lo) <= window {
			s.closeLo, s.closeHi = lo, hi
			return
		}
		s.closing = false
	}
	s.pages = append(s.pages, p)
	for len(s.pages) > 1 && span(s.pages) > window {
		s.pages[0] = nil
		s.pages = s.pages[1:]
	}
	if len(s.pages) <= limit {
		return
	}
	first := s.pages[0]
	add(verify.KindBudget, fmt.Sprintf("%d pages within %s, more than the budget of %d: this is page %d of the window that began at %s (%s)",
		len(s.pages), window, limit, limit+1, first.sNom.UTC().Format(time.RFC3339Nano), ref(first, p)))
	s.closing = true
	s.closeLo, s.closeHi = s.pages[0].sLo, s.pages[0].sHi
	for _, q := range s.pages[1:] {
		if q.sLo.Before(s.closeLo) {
			s.closeLo = q.sLo
		}
		if q.sHi.After(s.closeHi) {
			s.closeHi = q.sHi
		}
	}
	s.pages = nil
}

// span is the time from the earliest possible start to the latest possible
// start of pages.
func span(pages []*trackHit) time.Duration {
	lo, hi := pages[0].sLo, pages[0].sHi
	for _, p := range pages[1:] {
		if p.sLo.Before(lo) {
			lo = p.sLo
		}
		if p.sHi.After(hi) {
			hi = p.sHi
		}
	}
	return hi.Sub(lo)
}

// Prune implements Tracker.
func (t *Incremental) Prune(before time.Time) {
	keep := max(t.cfg.BudgetWindow, t.cfg.MinPause)
	for site, s := range t.sites {
		if s.last.Add(keep).Before(before) {
			delete(t.sites, site)
		}
	}
	if len(t.sites) == 0 {
		clear(t.files)
	}
}

// Sites returns how many sites the tracker holds state for.
func (t *Incremental) Sites() int { return len(t.sites) }

// ref names another request for a detail.
func ref(other, cur *trackHit) string {
	if other.file == cur.file || other.file == "" {
		return fmt.Sprintf("line %d", other.line)
	}
	return fmt.Sprintf("line %d of %s", other.line, parse.EscapeControl(other.file))
}

// quote quotes a string from a log or a robots.txt for a detail: one
// printable line, at most 200 bytes of it.
func quote(s string) string {
	if len(s) > 200 {
		s = s[:200]
	}
	return strconv.Quote(s)
}
