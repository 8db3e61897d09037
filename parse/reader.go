package parse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/addrset"
	"github.com/lohisoft/lohibot-audit/proxy"
)

// Limits of the reader.
const (
	// DefaultChunkSize is how much input one worker parses at a time.
	DefaultChunkSize = 1 << 20
	// MaxLineLength is the longest line that is parsed, without its line
	// ending; a longer line is counted as malformed and skipped without
	// being held in memory.
	MaxLineLength = 16 << 20
	// DefaultMaxExamples is how many malformed lines a Reader keeps.
	DefaultMaxExamples = 10
	// detectLines is how many non-blank lines auto-detection looks at, in
	// at most detectSample bytes.
	detectLines  = 50
	detectSample = 256 << 10
	// maxBuf holds the longest line with its "\r\n".
	maxBuf = MaxLineLength + 2
)

// Errors of the reader, matched with errors.Is.
var (
	// ErrUnknownFormat means auto-detection found no format that most of
	// the first lines of an input match with an IP address as the client.
	ErrUnknownFormat = errors.New("cannot detect the log format")
	// ErrTruncated means an input ended early or was damaged (a
	// truncated or corrupt gzip, bzip2, xz or zstd file); everything
	// before is read.
	ErrTruncated = errors.New("input is truncated or damaged")
	// ErrStopped means Stop was called before the input ended.
	ErrStopped = errors.New("reading stopped")
	// ErrCompressed means the input is compressed in a way the reader
	// cannot undo (lz4, zip, 7z, …); nothing of it was read. The error
	// is a *CompressedError.
	ErrCompressed = errors.New("compressed input")
)

// LineError is a line that did not match the log format.
type LineError struct {
	File   string
	Line   int64
	Text   string // the line, cut to 200 bytes (not escaped)
	Reason string
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason)
}

// ReadError is an input that could not be read whole.
type ReadError struct {
	File   string
	Offset int64 // bytes of the file read when it happened
	Err    error
}

func (e *ReadError) Error() string {
	return fmt.Sprintf("%s: read stopped at byte %d: %v", e.File, e.Offset, e.Err)
}

func (e *ReadError) Unwrap() error { return e.Err }

// CompressedError is an input compressed with a program whose output the
// reader does not decompress. It wraps ErrCompressed.
type CompressedError struct {
	File string
	// Kind names the compression: "lz4", "zip", "7z", "rar", "lzip",
	// "lzma", "compress (.Z)".
	Kind string
	// Command decompresses such a file to standard output.
	Command string
}

func (e *CompressedError) Error() string {
	return fmt.Sprintf("%s: compressed with %s: not supported; decompress it and pipe it in as - (%s %s | …)", e.File, e.Kind, e.Command, e.File)
}

func (e *CompressedError) Unwrap() error { return ErrCompressed }

// Options configure a Reader. The zero value reads a log in a detected
// format, keeps claimed hits only, and uses one worker per CPU.
type Options struct {
	// Name is the input's name in records and errors ("-" for stdin).
	Name string
	// Format is the log format; nil detects it from the first lines.
	// With a format given, a client field may hold a host name (the
	// record's Client is then the zero Addr); a detected format takes IP
	// address literals only. Either way, a syslog header or a container
	// runtime's prefix in front of the first lines is noticed and read
	// past on every line.
	Format *Format
	// Site is the site of requests whose line records no virtual host.
	Site string
	// TrustXFF trusts every connecting address as a proxy of the
	// operator's (--trust-xff): the client is read from the real-client
	// header the format logs, as for Trust's proxies.
	TrustXFF bool
	// Trust are the proxies (--trusted-proxy) whose requests carry the
	// real client in a logged header: X-Forwarded-For (walked from the
	// right past trusted addresses), CF-Connecting-IP, True-Client-IP or
	// X-Real-IP (see Record.ClientFrom). nil trusts none.
	Trust *proxy.Set
	// Claims are the crawlers' User-Agent tokens, one group per crawler:
	// a line whose User-Agent carries one is a claimed hit, kept, and its
	// Record.Claims says which groups it names. nil claims nothing: only
	// the requests of Listed addresses (or, with KeepAll, every request)
	// are kept.
	Claims *TokenSet
	// Listed are addresses whose requests are kept even without a
	// crawler's token (the crawlers' published addresses).
	Listed *addrset.Set
	// Workers is the number of parsing goroutines (0: GOMAXPROCS).
	Workers int
	// MaxExamples is how many malformed lines to keep (0: 10).
	MaxExamples int
	// ChunkSize is the size of the blocks handed to workers (0: 1 MiB).
	ChunkSize int
	// KeepAll builds a record for every valid line, not only claimed hits.
	KeepAll bool
	// MaxDict is the most memory, in bytes, that the decompressor of an
	// xz or zstd input may take for its dictionary or window (0:
	// DefaultMaxDict); an input that needs more ends reading with a
	// *DictError.
	MaxDict int64
	// Location is the zone of logged times without a UTC offset (Apache
	// %{…}t without %z, HAProxy's accept date); nil means time.Local.
	Location *time.Location
}

// Stats counts what a Reader has seen so far.
type Stats struct {
	// Lines counts every line read: requests, malformed lines, blank
	// lines and comments.
	Lines     int64
	Malformed int64
	// Blank counts the empty lines and those of spaces and tabs only:
	// they are neither requests nor malformed.
	Blank int64
	// Comments counts the lines that start with '#' (after any spaces)
	// and do not match the format (AWStats' and W3C logs' headers), and
	// the entries of Caddy's other loggers among its access log's. They
	// are neither requests nor malformed.
	Comments int64
	Bytes    int64 // bytes of log text (after decompression)
	Gzip     bool  // the input was gzip (Compression is "gzip")
	// Compression is how the input was compressed: "gzip", "bzip2",
	// "xz", "zstd", or "" for plain text.
	Compression string
	// FirstTime and LastTime are the times logged on the first and the
	// last well-formed lines: the span the input covers (zero when no
	// line was well formed).
	FirstTime, LastTime time.Time
	// MalformedClaims counts the malformed lines that carry a crawler's
	// token somewhere: claims that could not be read as requests.
	MalformedClaims int64
}

// Reader reads access log lines and yields the records of interest, like
// bufio.Scanner: call Scan until it returns false, then Err. Lines are
// parsed by several goroutines, and records come out in input order.
//
// Plain text is read as it is; gzip, bzip2, xz and zstd (told by their
// magic bytes, several members or streams in a row included) are
// decompressed; other compressed inputs end reading with a
// *CompressedError.
type Reader struct {
	opts    Options
	src     io.Reader
	counted *countingReader
	xzCap   *xzCap // the container walk of an xz input

	started     bool
	queue       chan chan *chunkResult
	stop        chan struct{}
	stopped     sync.Once
	finished    chan struct{} // closed when the producer and the workers have ended
	format      atomic.Pointer[Format]
	guess       atomic.Pointer[Guess]
	compression atomic.Value // string
	lines       atomic.Int64
	prodErr     error // set by the producer before closing queue
	settled     bool  // producer: the format is final

	cur      *chunkResult
	idx      int
	baseLine int64
	rec      *Record
	stats    Stats
	examples []*LineError
	err      error
	done     bool
}

// NewReader returns a Reader of r. r may be plain text or compressed
// with gzip, bzip2, xz or zstd (detected by its magic bytes).
func NewReader(r io.Reader, opts Options) *Reader {
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.MaxExamples <= 0 {
		opts.MaxExamples = DefaultMaxExamples
	}
	if opts.ChunkSize <= 0 {
		opts.ChunkSize = DefaultChunkSize
	}
	if opts.ChunkSize > MaxLineLength {
		opts.ChunkSize = MaxLineLength
	}
	c := &countingReader{r: r}
	rd := &Reader{opts: opts, src: c, counted: c, stop: make(chan struct{}), finished: make(chan struct{})}
	if opts.Format != nil {
		rd.format.Store(opts.Format)
	}
	rd.compression.Store("")
	return rd
}

// Format returns the format in use: the one given, or the one detected
// (nil before the first Scan, or when the input held no line to tell
// it). A format given without "syslog+" or "container+" comes back with
// it when the input's lines start with such headers.
func (r *Reader) Format() *Format { return r.format.Load() }

// Guess is what auto-detection makes of the first lines of an input read
// with a given format that some of them do not match: how the user learns
// that --log-format is wrong, and which one is right.
type Guess struct {
	// Lines is how many non-blank lines were looked at (at most 50), and
	// Fit how many of them match the given format.
	Lines, Fit int
	// Format is the format auto-detection reads the lines as; nil when
	// none fits, with Err saying why (it wraps ErrUnknownFormat, and is an
	// *UnsupportedError for a kind of log that is not read).
	Format *Format
	Err    error
}

// Guess returns what auto-detection makes of the first lines of an input
// read with a given format, when some of them do not match it; nil when
// no format was given, when every line looked at matches it, or before
// the first Scan.
func (r *Reader) Guess() *Guess { return r.guess.Load() }

// Record returns the record found by the last Scan. It stays valid after
// the next Scan.
func (r *Reader) Record() *Record { return r.rec }

// Stats returns the counts so far; after Scan returned false they cover the
// whole input.
func (r *Reader) Stats() Stats {
	s := r.stats
	s.Compression, _ = r.compression.Load().(string)
	s.Gzip = s.Compression == "gzip"
	return s
}

// Examples returns the first malformed lines.
func (r *Reader) Examples() []*LineError { return r.examples }

// Err returns the error that ended reading, or nil at the end of the
// input. A *ReadError wrapping ErrTruncated means what came before was
// read; ErrUnknownFormat and ErrCompressed mean nothing was; ErrStopped
// means Stop was called.
func (r *Reader) Err() error { return r.err }

// BytesRead returns how many bytes of the raw input (compressed, for a
// compressed input) have been read; it may be called from any goroutine.
func (r *Reader) BytesRead() int64 { return r.counted.n.Load() }

// LinesRead returns how many lines have been parsed so far; it may be
// called from any goroutine.
func (r *Reader) LinesRead() int64 { return r.lines.Load() }

// Stop makes the reader stop early: Scan returns false at once (a Scan
// waiting for input returns too) and Err returns ErrStopped. It may be
// called from any goroutine, at any time, more than once. The reader's
// goroutines end as soon as they notice, except that one blocked in a
// Read of the input ends only when that Read returns.
func (r *Reader) Stop() {
	r.stopped.Do(func() { close(r.stop) })
}

// Close stops the reader (see Stop). It is not needed after Scan has
// returned false.
func (r *Reader) Close() { r.Stop() }

// isStopped reports whether Stop was called (or reading ended).
func (r *Reader) isStopped() bool {
	select {
	case <-r.stop:
		return true
	default:
		return false
	}
}

// end finishes reading with err.
func (r *Reader) end(err error) bool {
	r.done, r.err = true, err
	r.stopped.Do(func() { close(r.stop) }) // lets the producer end
	r.cur = nil
	return false
}

// Scan advances to the next record of interest.
func (r *Reader) Scan() bool {
	if r.done {
		return false
	}
	if r.isStopped() {
		if !r.started {
			close(r.finished)
			r.started = true
		}
		return r.end(ErrStopped)
	}
	if !r.started {
		r.started = true
		r.queue = make(chan chan *chunkResult, r.opts.Workers*2)
		go r.produce()
	}
	for {
		if r.cur != nil && r.idx < len(r.cur.recs) {
			rec := &r.cur.recs[r.idx]
			r.idx++
			rec.Line += r.baseLine
			rec.File = r.opts.Name
			r.rec = rec
			return true
		}
		if r.cur != nil {
			r.baseLine += r.cur.lines
			r.cur = nil
		}
		// Both waits also watch stop: the producer may have queued a
		// chunk that it then never handed to a worker.
		var ch chan *chunkResult
		var ok bool
		select {
		case ch, ok = <-r.queue:
		case <-r.stop:
			return r.end(ErrStopped)
		}
		if !ok {
			if r.isStopped() {
				return r.end(ErrStopped)
			}
			return r.end(r.prodErr)
		}
		var res *chunkResult
		select {
		case res = <-ch:
		case <-r.stop:
			return r.end(ErrStopped)
		}
		r.lines.Add(res.lines)
		r.stats.Lines += res.lines
		r.stats.Malformed += res.malformed
		r.stats.Blank += res.blank
		r.stats.Comments += res.comments
		r.stats.Bytes += res.bytes
		r.stats.MalformedClaims += res.malformedClaims
		if r.stats.FirstTime.IsZero() {
			r.stats.FirstTime = res.firstTime
		}
		if !res.lastTime.IsZero() {
			r.stats.LastTime = res.lastTime
		}
		for _, e := range res.examples {
			if len(r.examples) >= r.opts.MaxExamples {
				break
			}
			e.Line += r.baseLine
			e.File = r.opts.Name
			r.examples = append(r.examples, e)
		}
		r.cur, r.idx = res, 0
	}
}

// wait blocks until the reader's goroutines have ended (for tests).
func (r *Reader) wait() {
	if r.started {
		<-r.finished
	}
}

// chunkResult is what a worker found in one chunk. Line numbers in it are
// relative to the chunk.
type chunkResult struct {
	lines, malformed, blank, bytes int64
	comments                       int64
	malformedClaims                int64
	firstTime, lastTime            time.Time // of the first and last well-formed lines
	recs                           []Record
	examples                       []*LineError
}

type job struct {
	buf      []byte
	format   *Format // the format of its lines, when not the reader's
	pooled   bool
	oversize bool  // buf holds the start of a line longer than MaxLineLength
	size     int64 // oversize: the length of the whole line
	out      chan *chunkResult
}

// produce reads the input in chunks cut at line ends and hands them to
// workers; the queue keeps the results in input order. Every wait in it
// also watches stop, so that it ends soon after Stop unless a Read of the
// input blocks.
func (r *Reader) produce() {
	defer close(r.finished)
	defer close(r.queue)
	jobs := make(chan job, r.opts.Workers)
	var wg sync.WaitGroup
	pool := make(chan []byte, r.opts.Workers*2+2)
	for w := 0; w < r.opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.work(jobs, pool)
		}()
	}
	defer func() {
		close(jobs)
		wg.Wait()
	}()

	src, closeSrc, err := r.decompress()
	if closeSrc != nil {
		defer closeSrc()
	}
	if err != nil {
		r.prodErr = err
		return
	}
	// The first lines tell the format, or whether a given format comes
	// after syslog headers. Large reads bypass this buffer, so it costs
	// nothing after the sample has been looked at.
	// A reader given small chunks (live mode parses a few lines at a
	// time) gets a sample buffer no larger than a chunk.
	sampleSize := min(detectSample, max(r.opts.ChunkSize, 4096))
	sb := bufio.NewReaderSize(src, sampleSize)
	sample, perr := sb.Peek(sampleSize)
	if r.isStopped() {
		return
	}
	if perr == nil {
		// Only whole lines tell the format; when the first line is
		// longer than the sample, the first chunk decides below.
		if cut := bytes.LastIndexByte(sample, '\n'); cut >= 0 {
			sample = sample[:cut+1]
		} else {
			sample = nil
		}
	}
	if len(sample) > 0 && !r.settle(sample) {
		return
	}
	src = sb

	getBuf := func() []byte {
		select {
		case b := <-pool:
			return b[:0]
		default:
			return make([]byte, 0, r.opts.ChunkSize)
		}
	}
	send := func(j job) bool {
		j.out = make(chan *chunkResult, 1)
		select {
		case r.queue <- j.out:
		case <-r.stop:
			return false
		}
		if testHookQueued != nil {
			testHookQueued(r)
		}
		select {
		case jobs <- j:
		case <-r.stop:
			return false
		}
		return true
	}

	var carry []byte
	for {
		if r.isStopped() {
			return
		}
		buf := getBuf()
		pooled := true
		if len(carry) > cap(buf)/2 {
			// A long line: give it room to end in this buffer, up to the
			// longest line we parse.
			buf = make([]byte, 0, min(max(len(carry)*2, r.opts.ChunkSize), maxBuf))
			pooled = false
		}
		buf = append(buf, carry...)
		carry = nil
		n, err := readFull(src, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		eof := err != nil

		if !eof {
			cut := bytes.LastIndexByte(buf, '\n')
			switch {
			case cut >= 0:
				carry = append([]byte(nil), buf[cut+1:]...)
				buf = buf[:cut+1]
			case len(buf) < maxBuf:
				// One line fills the buffer: read on with a bigger one.
				carry = buf
				continue
			default:
				// Longer than any line we parse: count it, keep its start
				// as the example, skip to its end.
				rest, skipped, serr := r.skipLine(src)
				if !send(job{buf: buf[:200], oversize: true, size: int64(len(buf)) + skipped}) {
					return
				}
				carry = rest
				if serr == nil {
					continue
				}
				if len(carry) > 0 && !send(job{buf: carry, format: r.format.Load()}) {
					return
				}
				r.setReadErr(serr)
				return
			}
		}
		if len(buf) > 0 {
			if !r.settled && !r.settle(buf) {
				return
			}
			if f := r.format.Load(); f != nil && f.w3c != nil && bytes.Contains(buf, []byte("#Fields:")) {
				// A W3C log's format changes at each #Fields:
				// directive: each piece goes with its own, and none
				// goes back to the pool while the others are read.
				pieces, formats, last := w3cSplit(buf, f)
				for i, p := range pieces {
					if !send(job{buf: p, format: formats[i]}) {
						return
					}
				}
				r.format.Store(last)
			} else if !send(job{buf: buf, pooled: pooled, format: r.format.Load()}) {
				return
			}
		}
		if eof {
			r.setReadErr(err)
			return
		}
	}
}

// testHookQueued, when set by a test, runs after the producer has queued
// a chunk's result and before it hands the chunk to a worker.
var testHookQueued func(*Reader)

// setReadErr records why reading stopped, unless it was the end of input.
// Errors of a decompressor (not of the input under it) mean the input is
// truncated or damaged.
func (r *Reader) setReadErr(err error) {
	if err == nil || errors.Is(err, io.EOF) {
		return
	}
	kind, _ := r.compression.Load().(string)
	// When the input itself failed, that is the cause.
	fromInput := r.counted.inputErr() != nil
	switch {
	case kind != "" && !fromInput:
		err = r.decompressError(kind, err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		err = fmt.Errorf("%w: %v", ErrTruncated, err)
	}
	r.prodErr = &ReadError{File: r.opts.Name, Offset: r.counted.n.Load(), Err: err}
}

// settle decides the format from the whole lines in sample: the given
// format, after a syslog header when the lines fit it better so, or the
// detected one; for a W3C log, the format its first #Fields: directive
// says. It returns false, with the reason in prodErr, when no format can
// be detected. A sample of blank lines and comments decides nothing.
func (r *Reader) settle(b []byte) bool {
	s := readSample(b)
	lines := s.lines
	if len(lines) == 0 {
		return true
	}
	r.settled = true
	if given := r.opts.Format; given != nil {
		if given.w3c != nil {
			if s.fields == "" {
				// Every line will say that no #Fields: came first.
				return true
			}
			f, err := compileW3C(s.fields, w3cSep(lines))
			if err != nil {
				r.prodErr = fmt.Errorf("%s: %w", r.opts.Name, err)
				return false
			}
			r.format.Store(f)
		} else if f := withBestHeader(given, lines); f != given {
			r.format.Store(f)
		}
		if _, fit := fitCount(r.format.Load(), lines); fit < len(lines) {
			g := &Guess{Lines: len(lines), Fit: fit}
			g.Format, g.Err = detectFormat(s)
			r.guess.Store(g)
		}
		return true
	}
	f, err := detectFormat(s)
	if err != nil {
		r.prodErr = fmt.Errorf("%s: %w", r.opts.Name, err)
		return false
	}
	r.format.Store(f)
	return true
}

// w3cSplit cuts buf (whole lines) where a W3C log's #Fields: directive
// changes its format: each piece is read in the format before it. It
// returns the pieces and their formats, and the format after buf.
func w3cSplit(buf []byte, cur *Format) ([][]byte, []*Format, *Format) {
	var pieces [][]byte
	var formats []*Format
	start := 0
	for off := 0; off < len(buf); {
		var line []byte
		next := len(buf)
		if i := bytes.IndexByte(buf[off:], '\n'); i >= 0 {
			next = off + i + 1
		}
		line = bytes.TrimRight(buf[off:next], "\r\n")
		if fields, ok := w3cFields(line); ok && (cur.w3c == nil || fields != cur.w3c.fields) {
			sep := byte(' ')
			if cur.w3c != nil && cur.w3c.sep != 0 {
				sep = cur.w3c.sep
			}
			if nl := bytes.IndexByte(buf[next:], '\n'); nl > 0 && bytes.IndexByte(buf[next:next+nl], '\t') >= 0 {
				sep = '\t'
			}
			if f, err := compileW3C(fields, sep); err == nil {
				if off > start {
					pieces, formats = append(pieces, buf[start:off]), append(formats, cur)
				}
				start, cur = off, f
			}
		}
		off = next
	}
	pieces, formats = append(pieces, buf[start:]), append(formats, cur)
	return pieces, formats, cur
}

// readFull reads until p is full or the input ends. It returns io.EOF (or
// the read error) when the input ended.
func readFull(r io.Reader, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := r.Read(p[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// skipLine discards input up to and including the next '\n' and returns
// what followed it in the last read, and how many bytes it discarded. It
// gives up when the reader is stopped.
func (r *Reader) skipLine(src io.Reader) (rest []byte, skipped int64, err error) {
	buf := make([]byte, 64<<10)
	for {
		if r.isStopped() {
			return nil, skipped, ErrStopped
		}
		n, err := src.Read(buf)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return append([]byte(nil), buf[i+1:n]...), skipped + int64(i+1), err
		}
		skipped += int64(n)
		if err != nil {
			return nil, skipped, err
		}
	}
}

// work parses chunks.
func (r *Reader) work(jobs <-chan job, pool chan []byte) {
	var lp *lineParser
	var lpFormat *Format
	for j := range jobs {
		f := j.format
		if f == nil {
			f = r.format.Load()
		}
		if f != nil && (lp == nil || lpFormat != f) {
			lp = newLineParser(f, r.opts.Claims, r.opts.Listed, r.opts.Site, r.opts.TrustXFF || r.opts.Trust.All())
			lp.trust = r.opts.Trust
			lp.loc = r.opts.Location
			lp.keepAll = r.opts.KeepAll
			lp.ipOnly = r.opts.Format == nil
			lpFormat = f
		}
		res := &chunkResult{bytes: int64(len(j.buf))}
		if j.oversize {
			res.lines, res.malformed, res.bytes = 1, 1, j.size
			if r.opts.Claims.Contains(j.buf) {
				res.malformedClaims = 1
			}
			res.examples = []*LineError{{Line: 1, Text: string(j.buf), Reason: tooLong}}
			j.out <- res
			continue
		}
		if f == nil {
			lp = nil // chunks of blank lines before the format is known
		}
		r.parseChunk(lp, j.buf, res)
		if j.pooled {
			select {
			case pool <- j.buf:
			default:
			}
		}
		j.out <- res
	}
}

// tooLong is the reason given for a line longer than MaxLineLength.
var tooLong = "line longer than " + strconv.Itoa(MaxLineLength>>20) + " MiB"

// parseChunk parses the lines of one chunk. lp is nil while the format is
// not known, for chunks of blank lines.
func (r *Reader) parseChunk(lp *lineParser, buf []byte, res *chunkResult) {
	var rec Record
	var n int64
	var lastGood []byte
	for len(buf) > 0 {
		var line []byte
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			line, buf = buf[:i], buf[i+1:]
		} else {
			line, buf = buf, nil
		}
		n++
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		keep, reason := false, "the log format is not known"
		switch {
		case len(line) > MaxLineLength:
			// only the last line of an input, without a line end
			reason = tooLong
		case lp != nil:
			keep, reason = lp.parse(line, &rec)
		}
		if reason != "" {
			if isBlank(line) {
				res.blank++
				continue
			}
			if isComment(line) || lp != nil && lp.notRequest {
				res.comments++
				continue
			}
			res.malformed++
			if r.opts.Claims.Contains(line) {
				res.malformedClaims++
			}
			if len(res.examples) < r.opts.MaxExamples {
				t := line
				if len(t) > 200 {
					t = t[:200]
				}
				res.examples = append(res.examples, &LineError{Line: n, Text: string(t), Reason: reason})
			}
			continue
		}
		if keep {
			rec.Line = n
			if res.recs == nil {
				res.recs = make([]Record, 0, 32)
			}
			res.recs = append(res.recs, rec)
		}
		if res.firstTime.IsZero() {
			if keep {
				res.firstTime = rec.Time
			} else {
				res.firstTime = lp.lineTime(line)
			}
		}
		lastGood = line
	}
	res.lines = n
	if lastGood != nil {
		res.lastTime = lp.lineTime(lastGood)
	}
}

// isBlank reports whether line holds nothing but spaces and tabs.
func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// countingReader counts the bytes read through it, and keeps the first
// error other than io.EOF that the input returned.
type countingReader struct {
	r   io.Reader
	n   atomic.Int64
	err atomic.Pointer[error]
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	if err != nil && err != io.EOF && c.err.Load() == nil {
		c.err.Store(&err)
	}
	return n, err
}

// inputErr returns the first error the input returned, other than io.EOF.
func (c *countingReader) inputErr() error {
	if e := c.err.Load(); e != nil {
		return *e
	}
	return nil
}
