// Package hitstore keeps the claimed hits of an audit, in the order they
// were added, in a few bytes each, and gives them back log by log.
//
// A hit is encoded in a compact varint form (about 15 bytes and the bytes
// of its request target) into blocks of 64 KiB. Blocks are kept in memory
// up to [Store].Memory bytes; the blocks after those go to a temporary
// file, so that memory does not grow with the hits: reading them back
// costs a block's buffer per open [Reader]. The file is removed as soon as
// it is created where the system allows it (so that nothing is left
// behind, even by a crash), else by Close. When it cannot be written, the
// hits stay in memory and [Store].Warning says why.
//
// Hits are added in segments (one per log read): a Reader reads one
// segment, and several Readers may read at once.
package hitstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Hit is one claimed hit as the store keeps it: its strings other than
// the request target are ids the caller gives them.
type Hit struct {
	Addr, Site, File, Pair uint32
	Line                   int64
	// Time is the time as logged, kept to the nanosecond (as UTC), when
	// Timed.
	Time       time.Time
	Timed      bool
	Resolution time.Duration
	// Duration is kept when HasDuration.
	Duration    time.Duration
	HasDuration bool
	StartLogged bool
	Status      int
	Target      string
}

const (
	// blockSize is the size of a block; a hit larger than that gets a
	// block of its own.
	blockSize = 64 << 10
	// DefaultMemory is the default of Store.Memory.
	DefaultMemory = 8 << 20
)

// Flags of an encoded hit.
const (
	fTimed = 1 << iota
	fDur
	fStartLogged
	fPair
	fNsec
	fDurMicro
)

// resolutions are the resolutions a log reader gives times, encoded as
// their index; another is written out.
var resolutions = [...]time.Duration{
	0, time.Second, 100 * time.Millisecond, 10 * time.Millisecond, time.Millisecond,
	100 * time.Microsecond, 10 * time.Microsecond, time.Microsecond,
	100 * time.Nanosecond, 10 * time.Nanosecond, time.Nanosecond,
}

// otherResolution marks a resolution written out in nanoseconds.
const otherResolution = 255

// block is a sealed block: in memory (data) or in the file at off.
type block struct {
	data []byte
	off  int64
	n    int
}

// Store keeps hits. The zero Store is ready to use, with Memory
// DefaultMemory and its file in the system's temporary directory. A Store
// is not safe for concurrent use, except that Readers may read while
// nothing is added.
type Store struct {
	// Dir is where the temporary file is made; "" is os.TempDir().
	Dir string
	// Memory is how many bytes of encoded hits stay in memory; the rest
	// go to the file. Zero is DefaultMemory; negative keeps every hit in
	// memory.
	Memory int

	segs    [][]block // sealed blocks by segment
	cur     []byte    // the block being filled
	state   delta
	inMem   int
	n       int64
	file    *os.File
	name    string // the file's name while it is to be removed on Close
	size    int64
	warning string
}

// delta is what a hit is encoded against: the previous one in its block.
type delta struct {
	line, sec int64
}

// Add keeps h in the current segment.
func (s *Store) Add(h *Hit) {
	if len(s.segs) == 0 {
		s.segs = append(s.segs, nil)
	}
	var buf [64]byte
	rec := s.encode(buf[:0], h)
	if len(s.cur) > 0 && len(s.cur)+len(rec) > blockSize {
		s.seal()
		rec = s.encode(buf[:0], h) // against a fresh block
	}
	if s.cur == nil {
		s.cur = make([]byte, 0, blockSize)
	}
	s.cur = append(s.cur, rec...)
	s.n++
}

// encode appends the encoding of h, against s.state, to b and moves
// s.state on.
func (s *Store) encode(b []byte, h *Hit) []byte {
	var fl byte
	if h.Timed {
		fl |= fTimed
		if h.Time.Nanosecond() != 0 {
			fl |= fNsec
		}
	}
	if h.HasDuration {
		fl |= fDur
		if h.Duration%time.Microsecond == 0 {
			fl |= fDurMicro
		}
	}
	if h.StartLogged {
		fl |= fStartLogged
	}
	if h.Pair != 0 {
		fl |= fPair
	}
	b = append(b, fl)
	b = binary.AppendUvarint(b, uint64(h.Addr))
	b = binary.AppendUvarint(b, uint64(h.Site))
	b = binary.AppendUvarint(b, uint64(h.File))
	b = binary.AppendVarint(b, h.Line-s.state.line)
	s.state.line = h.Line
	if h.Timed {
		sec := h.Time.Unix()
		b = binary.AppendVarint(b, sec-s.state.sec)
		s.state.sec = sec
		if fl&fNsec != 0 {
			b = binary.AppendUvarint(b, uint64(h.Time.Nanosecond()))
		}
		r := otherResolution
		for i, x := range resolutions {
			if x == h.Resolution {
				r = i
				break
			}
		}
		b = append(b, byte(r))
		if r == otherResolution {
			b = binary.AppendVarint(b, int64(h.Resolution))
		}
	}
	if h.HasDuration {
		d := int64(h.Duration)
		if fl&fDurMicro != 0 {
			d /= int64(time.Microsecond)
		}
		b = binary.AppendVarint(b, d)
	}
	b = binary.AppendVarint(b, int64(h.Status))
	if h.Pair != 0 {
		b = binary.AppendUvarint(b, uint64(h.Pair))
	}
	b = binary.AppendUvarint(b, uint64(len(h.Target)))
	return append(b, h.Target...)
}

// seal ends the block being filled: it stays in memory while the budget
// allows, else it goes to the file.
func (s *Store) seal() {
	s.state = delta{}
	if len(s.cur) == 0 {
		return
	}
	seg := &s.segs[len(s.segs)-1]
	limit := s.Memory
	if limit == 0 {
		limit = DefaultMemory
	}
	if limit > 0 && s.inMem+len(s.cur) > limit && s.warning == "" {
		if off, ok := s.spill(s.cur); ok {
			*seg = append(*seg, block{off: off, n: len(s.cur)})
			s.cur = s.cur[:0]
			return
		}
	}
	b := make([]byte, len(s.cur))
	copy(b, s.cur)
	s.inMem += len(b)
	*seg = append(*seg, block{data: b, n: len(b)})
	s.cur = s.cur[:0]
}

// spill writes a block to the file, making it first; on an error it says
// why in the warning, and every block stays in memory from then on.
func (s *Store) spill(b []byte) (int64, bool) {
	if s.file == nil {
		f, err := os.CreateTemp(s.Dir, "lohibot-audit-hits-*")
		if err != nil {
			s.warning = fmt.Sprintf("cannot make a temporary file for the claimed hits (%v): they are kept in memory; set TMPDIR to a writable directory", err)
			return 0, false
		}
		s.file = f
		if os.Remove(f.Name()) != nil {
			s.name = f.Name() // removed on Close, where an open file cannot be
		}
	}
	if _, err := s.file.WriteAt(b, s.size); err != nil {
		s.warning = fmt.Sprintf("cannot write the claimed hits to a temporary file in %s (%v): they are kept in memory; set TMPDIR to a directory with room", s.dirName(), err)
		return 0, false
	}
	off := s.size
	s.size += int64(len(b))
	return off, true
}

func (s *Store) dirName() string {
	if s.Dir != "" {
		return s.Dir
	}
	return os.TempDir()
}

// EndSegment ends the current segment: what is added next begins a new
// one. An empty segment is kept too, so that segment i is the i-th.
func (s *Store) EndSegment() {
	if len(s.segs) == 0 {
		s.segs = append(s.segs, nil)
	}
	s.seal()
	s.segs = append(s.segs, nil)
}

// Segments returns how many segments the store holds (the one being
// filled included).
func (s *Store) Segments() int {
	if len(s.segs) == 0 {
		return 0
	}
	return len(s.segs)
}

// Len returns how many hits the store holds.
func (s *Store) Len() int64 { return s.n }

// Bytes returns how many bytes the encoded hits take in memory and in the
// file.
func (s *Store) Bytes() (memory, file int64) { return int64(s.inMem + len(s.cur)), s.size }

// Warning says why hits could not go to the temporary file, or "".
func (s *Store) Warning() string { return s.warning }

// Close removes the temporary file. The store is empty afterwards.
func (s *Store) Close() error {
	var err error
	if s.file != nil {
		err = s.file.Close()
		if s.name != "" {
			if rerr := os.Remove(s.name); rerr != nil && err == nil {
				err = rerr
			}
		}
	}
	*s = Store{Dir: s.Dir, Memory: s.Memory}
	return err
}

// ErrCorrupt is the error of a Reader whose bytes do not decode: the
// temporary file was changed under the store.
var ErrCorrupt = errors.New("hit store: bad encoding")

// Reader reads the hits of one segment in the order they were added.
type Reader struct {
	// SkipSite, when set, leaves out the hits of the sites it reports
	// true for, at little more than the cost of reading their bytes.
	SkipSite func(site uint32) bool

	s      *Store
	blocks []block
	next   int // the next block to read
	data   []byte
	pos    int
	buf    []byte
	state  delta
	err    error
}

// Reader returns a reader of segment i. Hits added after the last
// EndSegment are sealed into it first.
func (s *Store) Reader(i int) *Reader {
	if i == len(s.segs)-1 && len(s.cur) > 0 {
		s.seal()
	}
	r := &Reader{s: s}
	if i >= 0 && i < len(s.segs) {
		r.blocks = s.segs[i]
	}
	return r
}

// Next fills in h with the next hit and reports true, or reports false at
// the end or on an error (see Err). With skipTarget the request target is
// left empty, and costs nothing.
func (r *Reader) Next(h *Hit, skipTarget bool) bool {
	for r.pos >= len(r.data) {
		if r.err != nil || r.next >= len(r.blocks) {
			return false
		}
		if !r.load() {
			return false
		}
	}
	for {
		skipped, ok := r.decode(h, skipTarget)
		if !ok {
			r.err = ErrCorrupt
			return false
		}
		if !skipped {
			return true
		}
		for r.pos >= len(r.data) {
			if r.err != nil || r.next >= len(r.blocks) || !r.load() {
				return false
			}
		}
	}
}

// Err returns the error that ended the reading, if any.
func (r *Reader) Err() error { return r.err }

// load makes the next block the one read.
func (r *Reader) load() bool {
	b := r.blocks[r.next]
	r.next++
	r.pos, r.state = 0, delta{}
	if b.data != nil {
		r.data = b.data
		return true
	}
	if cap(r.buf) < b.n {
		r.buf = make([]byte, b.n)
	}
	r.data = r.buf[:b.n]
	if r.s.file == nil {
		r.err = fmt.Errorf("hit store: the temporary file is closed")
		return false
	}
	if _, err := r.s.file.ReadAt(r.data, b.off); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		r.err = fmt.Errorf("hit store: reading back the temporary file: %w", err)
		return false
	}
	return true
}

// decode reads the hit at r.pos into h; skipped reports a hit of a site
// SkipSite leaves out.
func (r *Reader) decode(h *Hit, skipTarget bool) (skipped, ok bool) {
	d := r.data[r.pos:]
	if len(d) == 0 {
		return false, false
	}
	fl := d[0]
	i := 1
	var n int
	var u uint64
	var v int64
	*h = Hit{Timed: fl&fTimed != 0, HasDuration: fl&fDur != 0, StartLogged: fl&fStartLogged != 0}
	if u, n = binary.Uvarint(d[i:]); n <= 0 {
		return false, false
	}
	h.Addr, i = uint32(u), i+n
	if u, n = binary.Uvarint(d[i:]); n <= 0 {
		return false, false
	}
	h.Site, i = uint32(u), i+n
	if r.SkipSite != nil && r.SkipSite(h.Site) {
		skipped, skipTarget = true, true
	}
	if u, n = binary.Uvarint(d[i:]); n <= 0 {
		return false, false
	}
	h.File, i = uint32(u), i+n
	if v, n = binary.Varint(d[i:]); n <= 0 {
		return false, false
	}
	i += n
	r.state.line += v
	h.Line = r.state.line
	if h.Timed {
		if v, n = binary.Varint(d[i:]); n <= 0 {
			return false, false
		}
		i += n
		r.state.sec += v
		var nsec uint64
		if fl&fNsec != 0 {
			if nsec, n = binary.Uvarint(d[i:]); n <= 0 || nsec >= uint64(time.Second) {
				return false, false
			}
			i += n
		}
		h.Time = time.Unix(r.state.sec, int64(nsec)).UTC()
		if i >= len(d) {
			return false, false
		}
		ri := int(d[i])
		i++
		switch {
		case ri == otherResolution:
			if v, n = binary.Varint(d[i:]); n <= 0 {
				return false, false
			}
			h.Resolution, i = time.Duration(v), i+n
		case ri < len(resolutions):
			h.Resolution = resolutions[ri]
		default:
			return false, false
		}
	}
	if h.HasDuration {
		if v, n = binary.Varint(d[i:]); n <= 0 {
			return false, false
		}
		i += n
		if fl&fDurMicro != 0 {
			v *= int64(time.Microsecond)
		}
		h.Duration = time.Duration(v)
	}
	if v, n = binary.Varint(d[i:]); n <= 0 {
		return false, false
	}
	h.Status, i = int(v), i+n
	if fl&fPair != 0 {
		if u, n = binary.Uvarint(d[i:]); n <= 0 {
			return false, false
		}
		h.Pair, i = uint32(u), i+n
	}
	if u, n = binary.Uvarint(d[i:]); n <= 0 || u > uint64(len(d)-i-n) {
		return false, false
	}
	i += n
	if !skipTarget {
		h.Target = string(d[i : i+int(u)])
	}
	r.pos += i + int(u)
	return skipped, true
}
