package conduct

import (
	"math"
	"time"

	"github.com/lohisoft/lohibot-audit/parse"
)

// Hit is one request of the crawler, as the checks read it: what an
// audit keeps of a claimed hit, and all a merge of several servers'
// audits needs of it. It carries no pointers and its JSON form is
// stable. Which times the log recorded is said by Resolution and
// HasDuration, never by a zero time: a request logged in year 1 is as
// timed as any other.
type Hit struct {
	// Site is the site the request went to (the record's Host).
	Site string `json:"site"`
	// File and Line say where the request was logged.
	File string `json:"file"`
	Line int64  `json:"line"`
	// IP is the client as the report names it.
	IP string `json:"ip"`
	// Target is the request target as logged.
	Target string `json:"target"`
	Status int    `json:"status"`
	// RemoteUser and RetryAfter are as logged ("" when not logged).
	RemoteUser string `json:"remote_user,omitempty"`
	RetryAfter string `json:"retry_after,omitempty"`
	// Time is the time as logged; it means something only when
	// Resolution, how precise the log reader says it is, is above zero.
	Time       time.Time     `json:"time"`
	Resolution time.Duration `json:"resolution"`
	// Duration is how long the request took, when HasDuration is set;
	// StartLogged then says whether Time is the request's start (Apache
	// %t) rather than its end (nginx $time_local).
	Duration    time.Duration `json:"duration,omitempty"`
	HasDuration bool          `json:"has_duration,omitempty"`
	StartLogged bool          `json:"start_logged,omitempty"`
	// SiteID, when above zero, is the caller's number for Site: the same
	// for every hit of the site, counting the sites from 1, so that the
	// checks find the site by it without hashing its name. Zero: found
	// by the name.
	SiteID uint32 `json:"-"`
}

// HitOf returns what the checks read of a record from the log reader.
func HitOf(rec *parse.Record) Hit {
	h := Hit{
		Site: rec.Host, File: rec.File, Line: rec.Line, IP: rec.ClientRaw, Target: rec.Target, Status: rec.Status,
		RemoteUser: rec.RemoteUser, RetryAfter: rec.RetryAfter,
		Time: rec.Time, Resolution: rec.Resolution,
		Duration: rec.Duration, HasDuration: rec.HasDuration,
		StartLogged: rec.HasDuration && rec.Start.Equal(rec.Time),
	}
	if rec.Client.IsValid() {
		h.IP = rec.Client.String()
	}
	return h
}

// span returns when the request started and ended: both Time without a
// duration, else Time and the other end derived from it.
func (h *Hit) span() (start, end time.Time) {
	switch {
	case !h.HasDuration:
		return h.Time, h.Time
	case h.StartLogged:
		return h.Time, h.Time.Add(h.Duration)
	default:
		return h.Time.Add(-h.Duration), h.Time
	}
}

// hit is a hit with what the log proves about its times: the
// request started in [sLo, sHi) and ended in [eLo, eHi); sNom and eNom are
// the times as logged (or derived with the duration).
//
// It holds what the checks read of a Hit, in 256 bytes (a size the
// allocator has a class for): hits are made and let go by the million.
// What orders it comes first, in one cache line.
type hit struct {
	order
	Site, IP string
	path     string
	extra    *hitExtra // nil when neither is logged
	// Status is as logged; one beyond an int32, which no check tells
	// apart from another status of no class, is kept as the nearest.
	Status int32
	clock  int32 // the clock that timed it (Config.Clock)
	siteID uint32
	timed  bool // the log recorded a time
	page   bool
	dur    bool // the hit has a usable duration
	// resSec: the unit of its logged time is a second or more.
	resSec bool

	eNom               time.Time
	sLo, sHi, eLo, eHi time.Time
}

// order is where a hit stands in the checks' order (compareHits): its
// start as logged, its file (and what is known of it, read only while
// the checks run), its line, and its position in the input, the last
// tie-break.
type order struct {
	sNom time.Time
	f    *fileUnits
	File string
	Line int64
	idx  int64
}

// hitExtra is what few hits log.
type hitExtra struct {
	remoteUser, retryAfter string
}

// RemoteUser and RetryAfter are as logged ("" when not logged).
func (h *hit) RemoteUser() string {
	if h.extra == nil {
		return ""
	}
	return h.extra.remoteUser
}

func (h *hit) RetryAfter() string {
	if h.extra == nil {
		return ""
	}
	return h.extra.retryAfter
}

// fileUnits is what the hits of one file tell about the file.
type fileUnits struct {
	name       string
	clock      int32 // the clock that timed it (Config.Clock)
	tIdx, dIdx int   // indexes into units
	// rank, when above zero, is the file's place among the Checker's
	// files by name (rankFiles): two files compare by it as by name.
	rank int32
	// The hit with the earliest sHi: its sHi and sNom.
	firstHi, firstNom time.Time
	hasFirst          bool
}

// fits reports whether d is a multiple of unit, allowing for the
// rounding error of a duration that went through a float.
func fits(d, unit time.Duration) bool {
	r := d % unit
	if r < 0 {
		r = -r
	}
	return r <= unit/1000 || unit-r <= unit/1000
}

// newHit works out the bounds of a hit's start and end; idx is its
// position in the input.
func newHit(r *Hit, idx int64, f *fileUnits) *hit {
	h := new(hit)
	h.fill(r, idx, f)
	return h
}

// fill makes h hit r (see newHit).
func (h *hit) fill(r *Hit, idx int64, f *fileUnits) {
	path := (&parse.Record{Target: r.Target}).Path()
	*h = hit{order: order{f: f, File: r.File, Line: r.Line, idx: idx}, Site: r.Site, IP: r.IP, path: path,
		timed: r.Resolution > 0, page: IsPage(path), clock: f.clock, siteID: r.SiteID}
	h.Status = int32(max(min(r.Status, math.MaxInt32), math.MinInt32))
	if r.RemoteUser != "" || r.RetryAfter != "" {
		h.extra = &hitExtra{remoteUser: r.RemoteUser, retryAfter: r.RetryAfter}
	}
	if !h.timed {
		return
	}
	t := r.Time
	res := units[f.tIdx]
	if r.Resolution > res {
		res = r.Resolution
	}
	h.resSec = res >= time.Second
	start, end := r.span()
	h.dur = r.HasDuration && r.Duration >= 0 && !end.Before(start)
	if !h.dur {
		// Without a duration the logged time may be either end: the
		// start is at or before it and the end at or after it. The outer
		// bounds (sLo, eHi) assume the request took less than res.
		h.sNom, h.eNom = t, t
		h.sLo, h.sHi = t, t.Add(res)
		h.eLo, h.eHi = t, t.Add(res)
		return
	}
	derr := units[f.dIdx] + floatSlack
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
}

// widenInto makes w a copy of h whose bounds are d wider either way: a
// request of a site that several clocks logged, for the checks with long
// windows (Config.ClockSkew).
func (h *hit) widenInto(w *hit, d time.Duration) {
	*w = *h
	w.sLo, w.sHi = w.sLo.Add(-d), w.sHi.Add(d)
	w.eLo, w.eHi = w.eLo.Add(-d), w.eHi.Add(d)
}
