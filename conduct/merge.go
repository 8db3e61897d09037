package conduct

import (
	"cmp"
	"container/heap"
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

// sliceSource gives hits from memory in the order given.
type sliceSource struct {
	hits  []Hit
	order []int
	pos   int
}

func (s *sliceSource) next(h *Hit) (int64, bool) {
	if s.pos == len(s.order) {
		return 0, false
	}
	i := s.order[s.pos]
	s.pos++
	*h = s.hits[i]
	return int64(i), true
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
func compareHits(a, b *hit) int {
	return cmp.Or(a.sNom.Compare(b.sNom), strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.idx, b.idx))
}

// hitHeap is a min-heap of hits in the checks' order.
type hitHeap []*hit

func (q hitHeap) Len() int           { return len(q) }
func (q hitHeap) Less(i, j int) bool { return compareHits(q[i], q[j]) < 0 }
func (q hitHeap) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *hitHeap) Push(x any)        { *q = append(*q, x.(*hit)) }
func (q *hitHeap) Pop() any {
	old := *q
	x := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return x
}

// reorder puts one source's hits in order, holding back those within
// Disorder of the latest one read.
type reorder struct {
	src    source
	e      *Checker
	held   hitHeap
	newest time.Time // the latest start read
	read   bool      // newest is set
	done   bool
	buf    Hit
}

// fill reads until the earliest hit held can go: the hits to come start
// no earlier than Disorder before the latest read, or the source ended,
// or too many are held.
func (r *reorder) fill() {
	for !r.done && !r.ready() {
		idx, ok := r.src.next(&r.buf)
		if !ok {
			r.done = true
			break
		}
		h := newHit(&r.buf, idx, r.e.fileOf(r.buf.File))
		if h.timed && (!r.read || h.sNom.After(r.newest)) {
			r.newest, r.read = h.sNom, true
		}
		heap.Push(&r.held, h)
	}
}

func (r *reorder) ready() bool {
	if len(r.held) == 0 {
		return false
	}
	if len(r.held) >= maxDisorderHits {
		return true
	}
	return r.read && r.newest.Sub(r.held[0].sNom) >= Disorder
}

// merger merges the reordered sources by the checks' order.
type merger []*reorder

func (m merger) Len() int { return len(m) }
func (m merger) Less(i, j int) bool {
	return compareHits(m[i].held[0], m[j].held[0]) < 0
}
func (m merger) Swap(i, j int) { m[i], m[j] = m[j], m[i] }
func (m *merger) Push(x any)   { *m = append(*m, x.(*reorder)) }
func (m *merger) Pop() any {
	old := *m
	x := old[len(old)-1]
	*m = old[:len(old)-1]
	return x
}

func newMerger(e *Checker, sources []source) *merger {
	m := &merger{}
	for _, s := range sources {
		r := &reorder{src: s, e: e}
		r.fill()
		if len(r.held) > 0 {
			*m = append(*m, r)
		}
	}
	heap.Init(m)
	return m
}

// next returns the next hit of all sources in order, as far as their
// windows can tell, or nil at the end.
func (m *merger) next() *hit {
	if len(*m) == 0 {
		return nil
	}
	r := (*m)[0]
	h := heap.Pop(&r.held).(*hit)
	r.fill()
	if len(r.held) > 0 {
		heap.Fix(m, 0)
	} else {
		heap.Pop(m)
	}
	return h
}
