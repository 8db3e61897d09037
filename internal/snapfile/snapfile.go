// Package snapfile is the byte format of an audit snapshot (SPEC §14): what
// one `logs --snapshot` run read, for `merge` to replay beside other
// servers' snapshots.
//
// A snapshot is written and read in one pass, front to back, so that it
// streams in bounded memory both ways:
//
//	"lohibot-audit snapshot\n"  the magic line
//	uvarint version             [Version]; a reader refuses any other
//	frame*                      kind byte, uvarint length, payload
//	'Z' digest[32]              SHA-256 of every byte before the 'Z'
//
// Frames are opaque to this package but for hit blocks ([KindHits]): up to
// 64 KiB of claimed hits, each a few varints and its request target, with
// the strings that repeat (sites, user agents, remote users, Retry-After
// values) defined once and then named by number. The string table carries
// over from block to block and is reset when it grows past 65,536 strings
// or 4 MiB, so that neither writer nor reader holds more.
//
// A reader checks the digest when it reaches the end: a damaged or cut
// snapshot is [ErrChecksum] or [ErrTruncated], never a panic, and a frame
// longer than [MaxFrame] is [ErrCorrupt] without being read.
package snapfile

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"net/netip"
	"time"
	"unsafe"
)

// Magic is the first line of every snapshot.
const Magic = "lohibot-audit snapshot\n"

// Version is the format version this package writes and reads.
const Version = 1

// MaxFrame is the longest frame a reader accepts.
const MaxFrame = 64 << 20

// The frame kinds (what they hold is the caller's: package audit).
const (
	KindHeader       = 'H' // the header: who made it, with which crawlers
	KindInputStart   = 's' // an input begins: its name
	KindHits         = 'c' // a block of claimed hits
	KindWarning      = 'w' // a warning said while reading
	KindInputEnd     = 'i' // an input ends: its counts
	KindReadWarnings = 'r' // warnings about the inputs as a whole
	KindSettled      = 'V' // verdicts given without DNS, shared by addresses
	KindVerdicts     = 'v' // a block of addresses and their verdicts
	KindDNSWarnings  = 'd' // the verifier's warnings
	KindEnd          = 'e' // the totals, last before the digest
	kindTail         = 'Z'
)

// Errors of a reader.
var (
	ErrNotSnapshot = errors.New("not a lohibot-audit snapshot")
	ErrTruncated   = errors.New("cut short: it ends before its checksum")
	ErrChecksum    = errors.New("damaged: its SHA-256 checksum does not match its content")
	ErrCorrupt     = errors.New("damaged: its frames do not decode")
)

// VersionError is a reader's error for a snapshot of another format
// version.
type VersionError struct{ Version uint64 }

func (e *VersionError) Error() string {
	return fmt.Sprintf("format version %d, and this lohibot-audit reads version %d", e.Version, Version)
}

// blockSize is the size past which a hit block is written out.
const blockSize = 64 << 10

// Bounds of the string table of hit blocks.
const (
	maxStrings     = 1 << 16
	maxStringBytes = 4 << 20
)

// Hit is one claimed hit as a snapshot keeps it. A decoded Hit's Target
// and Raw are valid only during the call they are given to.
type Hit struct {
	// Mask says which crawlers of the snapshot's set the hit was kept
	// for: bit i for the i-th.
	Mask uint64
	// Client is the client address (a zone kept); when it is not valid,
	// Raw is the client field as logged. Proxy says Client is a trusted
	// proxy's address that forwarded the request without a usable real
	// client (parse.Record.Proxy).
	Client netip.Addr
	Raw    string
	Proxy  bool
	Site   string
	// UserAgent, RemoteUser and RetryAfter are as logged ("" for none).
	UserAgent, RemoteUser, RetryAfter string
	Target                            string
	Line                              int64
	// Time (kept to the nanosecond, as UTC) and Resolution are set when
	// Timed.
	Timed      bool
	Time       time.Time
	Resolution time.Duration
	// Duration is set when HasDuration; StartLogged says Time is the
	// request's start.
	HasDuration, StartLogged bool
	Duration                 time.Duration
	Status                   int
}

// Flags of an encoded hit.
const (
	fTimed = 1 << iota
	fNsec
	fDur
	fDurMicro
	fStartLogged
	fUser
	fRetry
	fMask
	// bits 8 and 9: the client's kind
	fProxy = 1 << 10
)

// Client kinds.
const (
	cV4 = iota
	cV6
	cZoned // an address with a zone, as text
	cRaw   // not an address, as logged
)

// Entry tags in a hit block.
const (
	tagHit = iota
	tagString
	tagReset
)

// resolutions are the resolutions a log reader gives times, encoded as
// their index; another is written out.
var resolutions = [...]time.Duration{
	0, time.Second, 100 * time.Millisecond, 10 * time.Millisecond, time.Millisecond,
	100 * time.Microsecond, 10 * time.Microsecond, time.Microsecond,
	100 * time.Nanosecond, 10 * time.Nanosecond, time.Nanosecond,
}

const otherResolution = 255

// Writer writes a snapshot to an io.Writer. Its methods remember the first
// write error, which Close returns. A Writer is not safe for concurrent
// use.
type Writer struct {
	w     *bufio.Writer
	sum   hash.Hash
	n     int64
	err   error
	block []byte
	state delta
	strs  map[string]uint32
	sizes int
	hits  int64
	// hitBytes counts the bytes of hit blocks, framing included.
	hitBytes int64
	closed   bool
}

// delta is what a hit is encoded against: the previous one of its block.
type delta struct{ line, sec int64 }

// NewWriter returns a Writer that has written the magic line and version.
func NewWriter(w io.Writer) *Writer {
	sw := &Writer{sum: sha256.New(), strs: map[string]uint32{}}
	sw.w = bufio.NewWriterSize(io.MultiWriter(w, sw.sum), 64<<10)
	sw.write([]byte(Magic))
	sw.write(binary.AppendUvarint(nil, Version))
	return sw
}

func (w *Writer) write(b []byte) {
	if w.err != nil {
		return
	}
	n, err := w.w.Write(b)
	w.n += int64(n)
	w.err = err
}

// Frame writes one frame; hits added before it are written first.
func (w *Writer) Frame(kind byte, payload []byte) {
	w.flushHits()
	w.frame(kind, payload)
}

func (w *Writer) frame(kind byte, payload []byte) {
	var head [1 + binary.MaxVarintLen64]byte
	head[0] = kind
	n := 1 + binary.PutUvarint(head[1:], uint64(len(payload)))
	w.write(head[:n])
	w.write(payload)
}

// Hit adds a hit to the hit block being filled.
func (w *Writer) Hit(h *Hit) {
	if w.err != nil {
		return
	}
	w.hits++
	// The table is reset, when full, before the hit's strings are
	// defined: never between two of them.
	need := len(h.Site) + len(h.UserAgent) + len(h.RemoteUser) + len(h.RetryAfter)
	if len(w.strs)+4 > maxStrings || len(w.strs) > 0 && w.sizes+need > maxStringBytes {
		w.block = append(w.block, tagReset)
		clear(w.strs)
		w.sizes = 0
	}
	site, ua := w.str(h.Site), w.str(h.UserAgent)
	var user, retry uint32
	if h.RemoteUser != "" {
		user = w.str(h.RemoteUser)
	}
	if h.RetryAfter != "" {
		retry = w.str(h.RetryAfter)
	}
	var buf [96]byte
	rec := w.encode(buf[:0], h, site, ua, user, retry)
	if len(w.block) > 0 && len(w.block)+len(rec) > blockSize {
		// The strings defined stay defined: the table carries over. The
		// hit is encoded again against the new block.
		w.flushHits()
		rec = w.encode(buf[:0], h, site, ua, user, retry)
	}
	w.block = append(w.block, rec...)
}

// str returns the number of s in the string table, defining it in the
// block being filled when it is new.
func (w *Writer) str(s string) uint32 {
	if id, ok := w.strs[s]; ok {
		return id
	}
	id := uint32(len(w.strs))
	w.strs[s] = id
	w.sizes += len(s)
	w.block = append(w.block, tagString)
	w.block = binary.AppendUvarint(w.block, uint64(len(s)))
	w.block = append(w.block, s...)
	return id
}

// flushHits writes the hit block being filled. The string table carries
// over to the next block.
func (w *Writer) flushHits() {
	if len(w.block) == 0 {
		return
	}
	before := w.n
	w.frame(KindHits, w.block)
	w.hitBytes += w.n - before
	w.block = w.block[:0]
	w.state = delta{}
}

func (w *Writer) encode(b []byte, h *Hit, site, ua, user, retry uint32) []byte {
	var fl uint64
	kind := cRaw
	if h.Client.IsValid() {
		switch {
		case h.Client.Zone() != "":
			kind = cZoned
		case h.Client.Is4():
			kind = cV4
		default:
			kind = cV6
		}
	}
	fl |= uint64(kind) << 8
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
	if h.RemoteUser != "" {
		fl |= fUser
	}
	if h.RetryAfter != "" {
		fl |= fRetry
	}
	if h.Mask != 1 {
		fl |= fMask
	}
	if h.Proxy {
		fl |= fProxy
	}
	b = append(b, tagHit)
	b = binary.AppendUvarint(b, fl)
	if fl&fMask != 0 {
		b = binary.AppendUvarint(b, h.Mask)
	}
	switch kind {
	case cV4:
		a := h.Client.As4()
		b = append(b, a[:]...)
	case cV6:
		a := h.Client.As16()
		b = append(b, a[:]...)
	case cZoned:
		s := h.Client.String()
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	default:
		b = binary.AppendUvarint(b, uint64(len(h.Raw)))
		b = append(b, h.Raw...)
	}
	b = binary.AppendUvarint(b, uint64(site))
	b = binary.AppendUvarint(b, uint64(ua))
	b = binary.AppendVarint(b, h.Line-w.state.line)
	w.state.line = h.Line
	if h.Timed {
		t := h.Time
		sec := t.Unix()
		b = binary.AppendVarint(b, sec-w.state.sec)
		w.state.sec = sec
		if fl&fNsec != 0 {
			b = binary.AppendUvarint(b, uint64(t.Nanosecond()))
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
	if fl&fUser != 0 {
		b = binary.AppendUvarint(b, uint64(user))
	}
	if fl&fRetry != 0 {
		b = binary.AppendUvarint(b, uint64(retry))
	}
	b = binary.AppendUvarint(b, uint64(len(h.Target)))
	return append(b, h.Target...)
}

// Close writes the hits not yet written and the digest, and flushes. It
// returns the first error of any write.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	w.flushHits()
	if w.err == nil {
		w.err = w.w.Flush() // the digest covers every byte before it
	}
	sum := w.sum.Sum(nil)
	w.write([]byte{kindTail})
	w.write(sum)
	if w.err == nil {
		w.err = w.w.Flush()
	}
	return w.err
}

// Err returns the first write error, if any.
func (w *Writer) Err() error { return w.err }

// Stats returns the bytes written so far, the hits added, and the bytes
// their blocks took.
func (w *Writer) Stats() (bytes, hits, hitBytes int64) { return w.n, w.hits, w.hitBytes }

// Reader reads a snapshot frame by frame and checks its digest at the end.
type Reader struct {
	r    *bufio.Reader
	sum  hash.Hash // nil when reading again (NewRereader)
	crc  uint32
	buf  []byte
	done bool
	// known, when reading again, is what the first reading found.
	known *Known
	// Digest is the snapshot's SHA-256 and CRC its CRC-32C (Castagnoli)
	// of the same bytes, set once Next has returned io.EOF.
	Digest [32]byte
	CRC    uint32
}

// Known is what a first reading of a snapshot found: its digest and the
// CRC-32C of the bytes the digest covers.
type Known struct {
	Digest [32]byte
	CRC    uint32
}

// Known returns what this reading found, once Next has returned io.EOF.
func (r *Reader) Known() Known { return Known{Digest: r.Digest, CRC: r.CRC} }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// NewReader reads the magic line and the version: ErrNotSnapshot, a
// *VersionError or a read error when they are not this package's.
func NewReader(r io.Reader) (*Reader, error) {
	return newReader(r, sha256.New(), nil)
}

// NewRereader reads again a snapshot that a first reading found whole
// (with NewReader): instead of computing SHA-256 once more it checks the
// bytes against the first reading's CRC-32C, far cheaper, and the digest
// written at the end against the first one. A snapshot changed between
// the readings ends in ErrChecksum, as a damaged one does.
func NewRereader(r io.Reader, k Known) (*Reader, error) {
	return newReader(r, nil, &k)
}

func newReader(r io.Reader, sum hash.Hash, known *Known) (*Reader, error) {
	sr := &Reader{sum: sum, known: known, r: bufio.NewReaderSize(r, 64<<10)}
	magic := make([]byte, len(Magic))
	if _, err := io.ReadFull(sr.r, magic); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, ErrNotSnapshot
		}
		return nil, err
	}
	if string(magic) != Magic {
		return nil, ErrNotSnapshot
	}
	sr.hash(magic)
	v, err := sr.uvarint()
	if err != nil {
		return nil, err
	}
	if v != Version {
		return nil, &VersionError{Version: v}
	}
	return sr, nil
}

// truncated turns an end of input into ErrTruncated.
func truncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ErrTruncated
	}
	return err
}

// hash adds p to the checksums.
func (r *Reader) hash(p []byte) {
	if r.sum != nil {
		r.sum.Write(p)
	}
	r.crc = crc32.Update(r.crc, castagnoli, p)
}

// byte reads one byte and hashes it.
func (r *Reader) byte() (byte, error) {
	b, err := r.r.ReadByte()
	if err != nil {
		return 0, truncated(err)
	}
	r.hash([]byte{b})
	return b, nil
}

// uvarint reads and hashes a uvarint.
func (r *Reader) uvarint() (uint64, error) {
	var x uint64
	var s uint
	for i := 0; i < binary.MaxVarintLen64; i++ {
		b, err := r.byte()
		if err != nil {
			return 0, err
		}
		if b < 0x80 {
			if i == binary.MaxVarintLen64-1 && b > 1 {
				return 0, ErrCorrupt
			}
			return x | uint64(b)<<s, nil
		}
		x |= uint64(b&0x7f) << s
		s += 7
	}
	return 0, ErrCorrupt
}

// Next returns the next frame's kind and payload (valid until the next
// call), or io.EOF after the digest was read and found right, or an
// error: ErrTruncated, ErrChecksum, ErrCorrupt or the read's.
func (r *Reader) Next() (kind byte, payload []byte, err error) {
	if r.done {
		return 0, nil, io.EOF
	}
	k, err := r.r.ReadByte()
	if err != nil {
		return 0, nil, truncated(err)
	}
	if k == kindTail {
		var want [32]byte
		if r.sum != nil {
			r.sum.Sum(want[:0])
		} else {
			want = r.known.Digest
		}
		var got [32]byte
		if _, err := io.ReadFull(r.r, got[:]); err != nil {
			return 0, nil, truncated(err)
		}
		if got != want || r.known != nil && r.crc != r.known.CRC {
			return 0, nil, ErrChecksum
		}
		if _, err := r.r.ReadByte(); err == nil {
			return 0, nil, ErrCorrupt // bytes after the end
		} else if !errors.Is(err, io.EOF) {
			return 0, nil, err
		}
		r.done, r.Digest, r.CRC = true, got, r.crc
		return 0, nil, io.EOF
	}
	r.hash([]byte{k})
	n, err := r.uvarint()
	if err != nil {
		return 0, nil, err
	}
	if n > MaxFrame {
		return 0, nil, ErrCorrupt
	}
	if uint64(cap(r.buf)) < n {
		r.buf = make([]byte, n)
	}
	r.buf = r.buf[:n]
	if _, err := io.ReadFull(r.r, r.buf); err != nil {
		return 0, nil, truncated(err)
	}
	r.hash(r.buf)
	return k, r.buf, nil
}

// HitDecoder decodes hit blocks in the order they were written: the
// string table carries over from one to the next.
type HitDecoder struct {
	strs  []string
	sizes int
}

// Decode calls fn with each hit of a hit block's payload, in order, and
// stops at fn's first error, which it returns. A Hit given to fn, and its
// Target and Raw, are valid only during the call. A block that does not
// decode is ErrCorrupt.
func (d *HitDecoder) Decode(b []byte, fn func(*Hit) error) error {
	var st delta
	var h Hit
	for i := 0; i < len(b); {
		tag := b[i]
		i++
		switch tag {
		case tagReset:
			d.strs, d.sizes = d.strs[:0], 0
			continue
		case tagString:
			n, k := binary.Uvarint(b[i:])
			if k <= 0 || n > uint64(len(b)-i-k) {
				return ErrCorrupt
			}
			i += k
			if len(d.strs) >= maxStrings || d.sizes+int(n) > maxStringBytes+MaxFrame {
				return ErrCorrupt
			}
			d.strs = append(d.strs, string(b[i:i+int(n)]))
			d.sizes += int(n)
			i += int(n)
			continue
		case tagHit:
		default:
			return ErrCorrupt
		}
		n, ok := d.decodeHit(b[i:], &h, &st)
		if !ok {
			return ErrCorrupt
		}
		i += n
		if err := fn(&h); err != nil {
			return err
		}
	}
	return nil
}

// decodeHit decodes the hit at the start of b; it returns its length.
func (d *HitDecoder) decodeHit(b []byte, h *Hit, st *delta) (int, bool) {
	i := 0
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(b[i:])
		if n <= 0 {
			return 0, false
		}
		i += n
		return v, true
	}
	sv := func() (int64, bool) {
		v, n := binary.Varint(b[i:])
		if n <= 0 {
			return 0, false
		}
		i += n
		return v, true
	}
	bytesOf := func() ([]byte, bool) {
		n, ok := uv()
		if !ok || n > uint64(len(b)-i) {
			return nil, false
		}
		s := b[i : i+int(n)]
		i += int(n)
		return s, true
	}
	str := func() (string, bool) {
		id, ok := uv()
		if !ok || id >= uint64(len(d.strs)) {
			return "", false
		}
		return d.strs[id], true
	}
	fl, ok := uv()
	if !ok || fl>>11 != 0 {
		return 0, false
	}
	*h = Hit{Mask: 1, Timed: fl&fTimed != 0, HasDuration: fl&fDur != 0, StartLogged: fl&fStartLogged != 0, Proxy: fl&fProxy != 0}
	if fl&fMask != 0 {
		if h.Mask, ok = uv(); !ok {
			return 0, false
		}
	}
	switch fl >> 8 & 3 {
	case cV4:
		if len(b)-i < 4 {
			return 0, false
		}
		h.Client = netip.AddrFrom4([4]byte(b[i : i+4]))
		i += 4
	case cV6:
		if len(b)-i < 16 {
			return 0, false
		}
		h.Client = netip.AddrFrom16([16]byte(b[i : i+16]))
		i += 16
	case cZoned:
		s, ok := bytesOf()
		if !ok {
			return 0, false
		}
		a, err := netip.ParseAddr(string(s))
		if err != nil {
			return 0, false
		}
		h.Client = a
	default:
		s, ok := bytesOf()
		if !ok {
			return 0, false
		}
		h.Raw = unsafeString(s)
	}
	if h.Site, ok = str(); !ok {
		return 0, false
	}
	if h.UserAgent, ok = str(); !ok {
		return 0, false
	}
	v, ok := sv()
	if !ok {
		return 0, false
	}
	st.line += v
	h.Line = st.line
	if h.Timed {
		if v, ok = sv(); !ok {
			return 0, false
		}
		st.sec += v
		var nsec uint64
		if fl&fNsec != 0 {
			if nsec, ok = uv(); !ok || nsec >= uint64(time.Second) {
				return 0, false
			}
		}
		h.Time = time.Unix(st.sec, int64(nsec)).UTC()
		if i >= len(b) {
			return 0, false
		}
		r := int(b[i])
		i++
		switch {
		case r == otherResolution:
			if v, ok = sv(); !ok {
				return 0, false
			}
			h.Resolution = time.Duration(v)
		case r < len(resolutions):
			h.Resolution = resolutions[r]
		default:
			return 0, false
		}
	}
	if h.HasDuration {
		if v, ok = sv(); !ok {
			return 0, false
		}
		if fl&fDurMicro != 0 {
			v *= int64(time.Microsecond)
		}
		h.Duration = time.Duration(v)
	}
	if v, ok = sv(); !ok {
		return 0, false
	}
	h.Status = int(v)
	if fl&fUser != 0 {
		if h.RemoteUser, ok = str(); !ok {
			return 0, false
		}
	}
	if fl&fRetry != 0 {
		if h.RetryAfter, ok = str(); !ok {
			return 0, false
		}
	}
	t, ok := bytesOf()
	if !ok {
		return 0, false
	}
	h.Target = unsafeString(t)
	return i, true
}

// unsafeString is b as a string without a copy: b must not change while
// the string is in use.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
