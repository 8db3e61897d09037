package conduct

import (
	"cmp"
	"strings"
	"time"
)

// Disorder is how far out of time order a log's lines may be and still be
// checked in order: a server writes a line when its request ends, so a
// line of a long request comes after those of shorter requests that began
// later. [Checker.Run] holds each log's hits this long (at most
// maxDisorderHits of them) to put them in order; a hit that comes later
// than that is counted and checked for what needs no order (robots.txt,
// credentials), but left out of its site's time checks, with a warning
// naming its file, and those checks are listed as not fully checked.
const Disorder = 15 * time.Minute

// maxDisorderHits bounds the hits a log holds back to put them in order.
const maxDisorderHits = 1 << 16

// Source gives the hits of one log, as the log holds them: in time order
// but for lines a little out of place (see [Disorder]). Next fills in h
// and reports true, or reports false at the end.
type Source interface {
	Next(h *Hit) bool
}

// source is a Source that numbers its hits: the number orders hits that
// are alike in all else, as the input order does in Check.
type source interface {
	next(h *Hit) (idx int64, ok bool)
}

// numbered numbers the hits of the i-th Source given to Run.
type numbered struct {
	src Source
	i   int64
	n   int64
}

func (s *numbered) next(h *Hit) (int64, bool) {
	if !s.src.Next(h) {
		return 0, false
	}
	s.n++
	return s.i<<40 | s.n, true
}

// sliceSource gives hits from memory in the order given, those of the
// sites keep holds (keep nil: all).
type sliceSource struct {
	hits  []Hit
	order []int
	keep  func(string) bool
	pos   int
}

func (s *sliceSource) next(h *Hit) (int64, bool) {
	for s.pos < len(s.order) {
		i := s.order[s.pos]
		s.pos++
		if s.keep == nil || s.keep(s.hits[i].Site) {
			*h = s.hits[i]
			return int64(i), true
		}
	}
	return 0, false
}

// orderKey is where a hit stands in the checks' order: by start as
// logged (the zero time without one), file and line; then by input order.
type orderKey struct {
	t    time.Time
	file string
	line int64
}

func orderKeyOf(h *Hit) orderKey {
	k := orderKey{file: h.File, line: h.Line}
	if h.Resolution > 0 {
		k.t = h.Time
		if start, end := h.span(); h.HasDuration && h.Duration >= 0 && !end.Before(start) {
			k.t = start
		}
	}
	return k
}

func (k *orderKey) compare(o *orderKey) int {
	return cmp.Or(k.t.Compare(o.t), strings.Compare(k.file, o.file), cmp.Compare(k.line, o.line))
}

// compareHits orders hits as the checks take them.
func compareHits(a, b *hit) int { return compareOrders(&a.order, &b.order) }

// compareOrders orders hits by where they stand (see order).
func compareOrders(a, b *order) int {
	// One by one: most hits differ in time, and cmp.Or would compare
	// the files and lines of every pair all the same.
	if c := a.sNom.Compare(b.sNom); c != 0 {
		return c
	}
	if a.f == nil || a.f != b.f { // one file, one name
		if c := compareFiles(a, b); c != 0 {
			return c
		}
	}
	return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.idx, b.idx))
}

// compareFiles orders the files of two hits by name: by their ranks when
// both have one (rankFiles), which is the same order.
func compareFiles(a, b *order) int {
	if a.f != nil && b.f != nil && a.f.rank > 0 && b.f.rank > 0 {
		return cmp.Compare(a.f.rank, b.f.rank)
	}
	return strings.Compare(a.File, b.File)
}

// reorder puts one source's hits in order, holding back those within
// Disorder of the latest one read; it is a feed of the hits in that
// order. held is sorted from head on: a log being nearly in order, a hit
// read goes at or near its end. What it gives depends on its source
// alone, so that it may run ahead of the merge, in a goroutine of its own.
type reorder struct {
	src    feed
	held   []*hit
	head   int
	newest time.Time // the latest start read
	read   bool      // newest is set
	done   bool
}

// first returns the earliest hit held; there must be one.
func (r *reorder) first() *hit { return r.held[r.head] }

func (r *reorder) count() int { return len(r.held) - r.head }

// hold puts h in its place among the hits held.
func (r *reorder) hold(h *hit) {
	if r.head > 0 && len(r.held) == cap(r.held) {
		// Move what is held to the front rather than grow.
		n := copy(r.held, r.held[r.head:])
		clear(r.held[n:])
		r.held, r.head = r.held[:n], 0
	}
	i := len(r.held)
	for i > r.head && compareHits(h, r.held[i-1]) < 0 {
		i--
	}
	r.held = append(r.held, nil)
	copy(r.held[i+1:], r.held[i:])
	r.held[i] = h
}

// take removes and returns the earliest hit held.
func (r *reorder) take() *hit {
	h := r.held[r.head]
	r.held[r.head] = nil
	r.head++
	if r.head == len(r.held) {
		r.held, r.head = r.held[:0], 0
	}
	return h
}

// nextHit returns the next hit in order, or nil at the end.
func (r *reorder) nextHit() *hit {
	r.fill()
	if r.count() == 0 {
		return nil
	}
	return r.take()
}

// fill reads until the earliest hit held can go: the hits to come start
// no earlier than Disorder before the latest read, or the source ended,
// or too many are held.
func (r *reorder) fill() {
	for !r.done && !r.ready() {
		h := r.src.nextHit()
		if h == nil {
			r.done = true
			break
		}
		if h.timed && (!r.read || h.sNom.After(r.newest)) {
			r.newest, r.read = h.sNom, true
		}
		r.hold(h)
	}
}

func (r *reorder) ready() bool {
	switch n := r.count(); {
	case n == 0:
		return false
	case n >= maxDisorderHits:
		return true
	}
	return r.read && r.newest.Sub(r.first().sNom) >= Disorder
}

// merger merges sources in the checks' order (each a reorder, or read
// ahead from one): a heap of them by their next hit.
type merger []*headed

// headed is a source of a merger with its next hit, and that hit's start
// as logged (sNom), compared first without going to the hit.
type headed struct {
	f    feed
	head *hit
	t    time.Time
}

func (s *headed) setHead(h *hit) {
	s.head = h
	if h != nil {
		s.t = h.sNom
	}
}

// less reports whether a's next hit comes before b's.
func (a *headed) less(b *headed) bool {
	if c := a.t.Compare(b.t); c != 0 {
		return c < 0
	}
	return compareHits(a.head, b.head) < 0
}

// down moves the i-th source down the heap to its place.
func (m merger) down(i int) {
	for n := len(m); ; {
		c := 2*i + 1
		if c >= n {
			return
		}
		if r := c + 1; r < n && m[r].less(m[c]) {
			c = r
		}
		if !m[c].less(m[i]) {
			return
		}
		m[i], m[c] = m[c], m[i]
		i = c
	}
}

func newMerger(sources []feed) *merger {
	m := merger{}
	for _, f := range sources {
		if h := f.nextHit(); h != nil {
			s := &headed{f: f}
			s.setHead(h)
			m = append(m, s)
		}
	}
	for i := len(m)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return &m
}

// next returns the next hit of all sources in order, as far as their
// windows can tell, or nil at the end.
func (m *merger) next() *hit {
	if len(*m) == 0 {
		return nil
	}
	s := (*m)[0]
	h := s.head
	if s.setHead(s.f.nextHit()); s.head == nil {
		last := len(*m) - 1
		(*m)[0], (*m)[last] = (*m)[last], nil
		*m = (*m)[:last]
	}
	m.down(0)
	return h
}

func (m *merger) nextHit() *hit { return m.next() }

// splitMerge returns feeds merged in n shares, each share in a goroutine
// of its own (the merger made there): merging their outputs gives the
// hits in the order that merging feeds at once gives them, as a merge
// always takes the earliest of the hits next in its sources (the order
// of compareHits has no ties), and a share's earliest is that of its
// sources.
func splitMerge(feeds []feed, n int) []feed {
	out := make([]feed, 0, n)
	for i := range n {
		share := feeds[i*len(feeds)/n : (i+1)*len(feeds)/n]
		out = append(out, readAheadBy(&lazyMerger{feeds: share}, groupBatch, groupBatches))
	}
	return out
}

// lazyMerger is a merger of feeds made as its first hit is asked for.
type lazyMerger struct {
	feeds []feed
	m     *merger
}

func (l *lazyMerger) nextHit() *hit {
	if l.m == nil {
		l.m = newMerger(l.feeds)
	}
	return l.m.next()
}

// feed gives the hits of a source with their bounds worked out.
type feed interface {
	// nextHit returns the next hit, or nil at the end.
	nextHit() *hit
}

// direct is a feed that reads its source as it is asked. Read ahead
// (shared), it looks its files up under the Checker's lock.
type direct struct {
	src    source
	e      *Checker
	buf    Hit
	shared bool
	f      *fileUnits // the file of the last hit (shared)
}

func (d *direct) nextHit() *hit {
	idx, ok := d.src.next(&d.buf)
	if !ok {
		return nil
	}
	if !d.shared {
		return newHit(&d.buf, idx, d.e.fileOf(d.buf.File))
	}
	if d.f == nil || d.f.name != d.buf.File {
		d.f = d.e.sharedFileOf(d.buf.File)
	}
	return newHit(&d.buf, idx, d.f)
}

// Reading ahead: each source of a Run of at most maxAhead sources is
// read and put in order in a goroutine of its own, up to two batches of
// aheadBatch hits ahead of the merge (a few MiB for maxAhead sources).
// Past two cores, of at least two shares of minShare sources, each share
// (one per core, at most) is merged in a goroutine of its own too, up to
// groupBatches+1 batches of groupBatch hits ahead of the merge of the
// shares.
const (
	maxAhead     = 256
	aheadBatch   = 64
	minShare     = 4
	groupBatch   = 256
	groupBatches = 4
)

// ahead is a feed whose source is read in a goroutine of its own.
type ahead struct {
	batches chan []*hit
	cur     []*hit
	pos     int
}

// readAhead starts reading f in a goroutine of its own, a batch of
// aheadBatch hits at a time, one batch ahead; it reads to the end of the
// feed, as Run does.
func readAhead(f feed) *ahead { return readAheadBy(f, aheadBatch, 1) }

// readAheadBy is readAhead with batch hits a batch, up to depth batches
// ahead.
func readAheadBy(f feed, batch, depth int) *ahead {
	a := &ahead{batches: make(chan []*hit, depth)}
	go func() {
		defer close(a.batches)
		b := make([]*hit, 0, batch)
		for h := f.nextHit(); h != nil; h = f.nextHit() {
			b = append(b, h)
			if len(b) == batch {
				a.batches <- b
				b = make([]*hit, 0, batch)
			}
		}
		if len(b) > 0 {
			a.batches <- b
		}
	}()
	return a
}

func (a *ahead) nextHit() *hit {
	for a.pos == len(a.cur) {
		b, ok := <-a.batches
		if !ok {
			a.cur, a.pos = nil, 0
			return nil
		}
		a.cur, a.pos = b, 0
	}
	h := a.cur[a.pos]
	a.cur[a.pos] = nil
	a.pos++
	return h
}
