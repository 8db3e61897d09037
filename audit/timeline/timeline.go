// Package timeline keeps, while an audit streams, the requests of each
// crawler to each site in a form that can be drawn: each request exactly
// up to a cap, past it counts per time bucket, within a bound on memory
// whatever the volume (see [Timeline]), for a bounded set of sites and
// crawlers (see [Set]). render draws them; nothing here draws.
package timeline

import (
	"cmp"
	"slices"
	"sort"
	"time"
	"unsafe"

	"github.com/lohisoft/lohibot-audit/conduct"
)

// Class is what a request's client address turned out to be.
type Class uint8

// The classes, in the order the timeline draws their lanes.
const (
	Genuine Class = iota
	Spoofed
	Unverified
	// NumClasses is the number of classes.
	NumClasses
)

// String returns "genuine", "spoofed" or "unverified".
func (c Class) String() string {
	switch c {
	case Genuine:
		return "genuine"
	case Spoofed:
		return "spoofed"
	case Unverified:
		return "unverified"
	}
	return "unknown"
}

// Request is one claimed hit as a timeline keeps it.
type Request struct {
	Time  time.Time
	Class Class
	// Robots is true for a request of /robots.txt; every other request is
	// a page.
	Robots bool
	// Status is the HTTP status answered (0 when not logged).
	Status int
}

// Budget is the page budget the timeline draws: at most Pages pages per
// Window. A zero field means no budget is drawn.
type Budget struct {
	Pages  int
	Window time.Duration
}

// Counts are the requests of one class within a span of time.
type Counts struct {
	Requests int64
	// Robots counts the /robots.txt requests among them.
	Robots int64
	// Errors counts those answered 429 or 5xx (the answers that ask a
	// crawler to back off).
	Errors int64
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	c.Requests += o.Requests
	c.Robots += o.Robots
	c.Errors += o.Errors
}

// Pages is Requests less Robots.
func (c Counts) Pages() int64 { return c.Requests - c.Robots }

// Bucket is the requests of one class within [Start, Start+width).
type Bucket struct {
	Start time.Time
	Counts
}

// DefaultMarkCap is how many requests of each class a Timeline keeps one by
// one before it counts them per time bucket instead.
const DefaultMarkCap = 2000

// MaxBuckets is the most time buckets a Timeline keeps per class: when a
// request would make more, the buckets are merged into wider ones.
const MaxBuckets = 1024

// Timeline is one crawler's requests to one site, kept so that they can be
// drawn: each request exactly (time, class, robots.txt or page, status) up
// to MarkCap per class; past that, that class's requests are counted per
// time bucket instead. Buckets are aligned to the Unix epoch with a width
// from a fixed ladder (1s, 2s, 10s, 30s, 1m, 2m, 10m, 30m, 1h, 2h, 6h, 12h,
// 1d, 7d, 28d, 364d, then ×10), each a multiple of the one before, so that
// merging never splits a bucket and the counts stay exact. The width is
// chosen from the span of the exact requests when the cap is passed, and
// grows whenever more than MaxBuckets buckets would be needed.
//
// Memory: at most about 16 bytes per request kept exactly (MarkCap per
// class, 32 KB at the default) or 32 bytes per bucket (MaxBuckets per
// class, 32 KB), so a Timeline never holds more than about 100 KB plus its
// strings, whatever the number of requests. Requests may be added in any
// order. A Timeline is not safe for concurrent use.
//
// The zero value is an empty timeline with the default cap; set Site,
// Crawler, Budget and MarkCap before the first Add.
type Timeline struct {
	Site    string
	Crawler string
	// Budget is drawn over the genuine pages: the windows that each start
	// at the first page after the one before, with their page counts.
	Budget Budget
	// MarkCap is the number of requests kept exactly per class; zero or
	// less means DefaultMarkCap.
	MarkCap int

	lanes [NumClasses]lane
}

// A lane is one class's requests: exact marks until the cap, then buckets.
type lane struct {
	marks   []mark
	agg     bool
	width   int64 // bucket width in ms, once aggregated
	buckets []bucket
	total   Counts
	minMS   int64
	maxMS   int64
}

// mark is a request kept exactly, in 16 bytes.
type mark struct {
	ms     int64 // Unix milliseconds
	status int16
	robots bool
}

// bucket is [idx*width, (idx+1)*width) in Unix milliseconds.
type bucket struct {
	idx int64
	Counts
}

// bucketLadder holds the bucket widths in ms, each a multiple of the one
// before it.
var bucketLadder = []int64{
	1e3, 2e3, 10e3, 30e3, 60e3, 120e3, 600e3, 1800e3,
	3600e3, 7200e3, 6 * 3600e3, 12 * 3600e3,
	86400e3, 7 * 86400e3, 28 * 86400e3, 364 * 86400e3,
}

// NextWidth returns the bucket width (in ms) after w on the ladder of
// widths, each a multiple of the one before: buckets of one width merge
// whole into buckets of the next.
func NextWidth(w int64) int64 {
	for _, l := range bucketLadder {
		if l > w {
			return l
		}
	}
	return w * 10
}

// Add records one request. A request whose class is not one of Genuine,
// Spoofed and Unverified counts as Unverified.
func (t *Timeline) Add(r Request) {
	c := r.Class
	if c >= NumClasses {
		c = Unverified
	}
	ms := r.Time.UnixMilli()
	status := r.Status
	if status < 0 || status > 999 {
		status = 0
	}
	t.lanes[c].add(mark{ms: ms, status: int16(status), robots: r.Robots}, t.markCap())
}

func (t *Timeline) markCap() int {
	if t.MarkCap > 0 {
		return t.MarkCap
	}
	return DefaultMarkCap
}

// Counts returns the counts of r alone.
func (r Request) Counts() Counts {
	return mark{status: int16(r.Status), robots: r.Robots}.counts()
}

func (m mark) counts() Counts {
	c := Counts{Requests: 1}
	if m.robots {
		c.Robots = 1
	}
	if conduct.IsBackoffStatus(int(m.status)) {
		c.Errors = 1
	}
	return c
}

func (l *lane) add(m mark, capacity int) {
	if l.total.Requests == 0 || m.ms < l.minMS {
		l.minMS = m.ms
	}
	if l.total.Requests == 0 || m.ms > l.maxMS {
		l.maxMS = m.ms
	}
	l.total.Add(m.counts())
	if l.agg {
		l.count(m.ms, m.counts())
		return
	}
	if len(l.marks) < capacity {
		if len(l.marks) == cap(l.marks) {
			// Grow by hand, so the slice never holds more than the cap.
			n := min(max(2*cap(l.marks), 16), capacity)
			grown := make([]mark, len(l.marks), n)
			copy(grown, l.marks)
			l.marks = grown
		}
		l.marks = append(l.marks, m)
		return
	}
	// Past the cap: from now on this class is counted per bucket.
	l.agg = true
	span := l.maxMS - l.minMS
	l.width = bucketLadder[0]
	for span/l.width > MaxBuckets/4 {
		l.width = NextWidth(l.width)
	}
	marks := l.marks
	l.marks = nil
	for _, k := range marks {
		l.count(k.ms, k.counts())
	}
	l.count(m.ms, m.counts())
}

// FloorDiv divides rounding toward minus infinity: the index of the
// bucket of width b that holds a.
func FloorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// count adds c to the bucket holding ms, merging buckets when there would
// be more than MaxBuckets.
func (l *lane) count(ms int64, c Counts) {
	idx := FloorDiv(ms, l.width)
	n := len(l.buckets)
	// Logs come mostly in time order: look at the last bucket first.
	var i int
	if n > 0 && l.buckets[n-1].idx <= idx {
		i = n - 1
		if l.buckets[i].idx < idx {
			i = n
		}
	} else {
		i = sort.Search(n, func(j int) bool { return l.buckets[j].idx >= idx })
	}
	if i < n && l.buckets[i].idx == idx {
		l.buckets[i].Add(c)
		return
	}
	l.buckets = slices.Insert(l.buckets, i, bucket{idx: idx, Counts: c})
	for len(l.buckets) > MaxBuckets {
		l.coarsen(NextWidth(l.width))
	}
}

// coarsen merges the buckets into buckets of width w, a multiple of the
// current width.
func (l *lane) coarsen(w int64) {
	out := l.buckets[:0]
	for _, b := range l.buckets {
		idx := FloorDiv(b.idx*l.width, w)
		if len(out) > 0 && out[len(out)-1].idx == idx {
			out[len(out)-1].Add(b.Counts)
			continue
		}
		out = append(out, bucket{idx: idx, Counts: b.Counts})
	}
	clear(l.buckets[len(out):])
	l.buckets = out
	l.width = w
}

// Total returns the counts of all requests of class c added so far.
func (t *Timeline) Total(c Class) Counts {
	if c >= NumClasses {
		return Counts{}
	}
	return t.lanes[c].total
}

// Span returns the times of the earliest and the latest request of class c
// (millisecond precision); ok is false when there is none.
func (t *Timeline) Span(c Class) (first, last time.Time, ok bool) {
	if c >= NumClasses || t.lanes[c].total.Requests == 0 {
		return time.Time{}, time.Time{}, false
	}
	l := &t.lanes[c]
	return time.UnixMilli(l.minMS).UTC(), time.UnixMilli(l.maxMS).UTC(), true
}

// Aggregated reports whether the requests of class c are counted per bucket
// rather than kept one by one.
func (t *Timeline) Aggregated(c Class) bool {
	return c < NumClasses && t.lanes[c].agg
}

// Requests returns the requests of class c kept one by one, in time order
// (millisecond precision, UTC), or nil when they are aggregated.
func (t *Timeline) Requests(c Class) []Request {
	if c >= NumClasses || t.lanes[c].agg {
		return nil
	}
	ms := slices.Clone(t.lanes[c].marks)
	slices.SortStableFunc(ms, func(a, b mark) int { return cmp.Compare(a.ms, b.ms) })
	out := make([]Request, len(ms))
	for i, m := range ms {
		out[i] = Request{Time: time.UnixMilli(m.ms).UTC(), Class: c, Robots: m.robots, Status: int(m.status)}
	}
	return out
}

// Buckets returns the bucket width and the non-empty buckets of class c in
// time order, or 0 and nil when its requests are kept one by one.
func (t *Timeline) Buckets(c Class) (width time.Duration, buckets []Bucket) {
	if c >= NumClasses || !t.lanes[c].agg {
		return 0, nil
	}
	l := &t.lanes[c]
	out := make([]Bucket, len(l.buckets))
	for i, b := range l.buckets {
		out[i] = Bucket{Start: time.UnixMilli(b.idx * l.width).UTC(), Counts: b.Counts}
	}
	return time.Duration(l.width) * time.Millisecond, out
}

// DefaultMaxTimelines is how many timelines a Set keeps when its
// Max is not set.
const DefaultMaxTimelines = 200

// Set is a set of timelines, one per site and crawler, filled while an
// audit streams. It keeps at most Max of them, since the sites of a log can
// be written by clients (nginx's $host): past that, a request of a new site
// is not kept, except that a genuine request evicts the kept timeline
// without genuine requests that has the fewest requests, so the crawler's
// own sites are always drawn. Omitted counts the requests not kept.
//
// Memory is that of its timelines: at most Max × about 100 KB, and never
// more than about 32 bytes per request added. The zero value is ready to
// use; it is not safe for concurrent use.
type Set struct {
	// Max is the most timelines kept; zero or less means
	// DefaultMaxTimelines.
	Max int
	// MarkCap is given to each new timeline.
	MarkCap int
	// Budget, when set, gives the budget of each new timeline from its
	// crawler's name.
	Budget func(crawler string) Budget
	// Crawlers name the crawlers of an audit by their index, as the
	// Observer is told them: the names of the report's summary.crawlers,
	// in their order. Empty: one crawler, named none.
	Crawlers []string

	m       map[timelineKey]*Timeline
	omitted int64
}

type timelineKey struct{ site, crawler string }

// Add records a request of crawler to site. It reports whether the request
// was kept.
func (s *Set) Add(site, crawler string, r Request) bool {
	k := timelineKey{site, crawler}
	if t, ok := s.m[k]; ok {
		t.Add(r)
		return true
	}
	limit := s.Max
	if limit <= 0 {
		limit = DefaultMaxTimelines
	}
	if s.m == nil {
		s.m = make(map[timelineKey]*Timeline)
	}
	if len(s.m) >= limit {
		if r.Class != Genuine || !s.evict() {
			s.omitted++
			return false
		}
	}
	t := &Timeline{Site: site, Crawler: crawler, MarkCap: s.MarkCap}
	if s.Budget != nil {
		t.Budget = s.Budget(crawler)
	}
	s.m[k] = t
	t.Add(r)
	return true
}

// evict drops the timeline without genuine requests that has the fewest
// requests (ties: the last by site and crawler), if there is one.
func (s *Set) evict() bool {
	var victim timelineKey
	var fewest int64 = -1
	for k, t := range s.m {
		if t.lanes[Genuine].total.Requests > 0 {
			continue
		}
		n := t.lanes[Spoofed].total.Requests + t.lanes[Unverified].total.Requests
		if fewest < 0 || n < fewest || n == fewest && (k.site > victim.site || k.site == victim.site && k.crawler > victim.crawler) {
			victim, fewest = k, n
		}
	}
	if fewest < 0 {
		return false
	}
	delete(s.m, victim)
	s.omitted += fewest
	return true
}

// All returns the timelines kept, sorted by site and crawler.
func (s *Set) All() []*Timeline {
	out := make([]*Timeline, 0, len(s.m))
	for _, t := range s.m {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *Timeline) int {
		return cmp.Or(cmp.Compare(a.Site, b.Site), cmp.Compare(a.Crawler, b.Crawler))
	})
	return out
}

// Omitted returns how many requests were not kept because the set was full.
func (s *Set) Omitted() int64 { return s.omitted }

// footprint returns the bytes the timeline's requests and buckets hold
// (the capacity of its slices), for tests of the memory bound.
func (t *Timeline) footprint() int {
	n := 0
	for i := range t.lanes {
		n += cap(t.lanes[i].marks)*int(unsafe.Sizeof(mark{})) + cap(t.lanes[i].buckets)*int(unsafe.Sizeof(bucket{}))
	}
	return n
}
