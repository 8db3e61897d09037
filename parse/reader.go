package parse

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Limits of the reader.
const (
	// DefaultChunkSize is how much input one worker parses at a time.
	DefaultChunkSize = 1 << 20
	// MaxLineLength is the longest line that is parsed; a longer line is
	// counted as malformed and skipped without being held in memory.
	MaxLineLength = 16 << 20
	// DefaultMaxExamples is how many malformed lines a Reader keeps.
	DefaultMaxExamples = 10
	// detectLines is how many lines auto-detection looks at, in at most
	// detectSample bytes.
	detectLines  = 50
	detectSample = 256 << 10
)

// Errors of the reader, matched with errors.Is.
var (
	// ErrUnknownFormat means auto-detection found no format that the
	// first lines of an input match.
	ErrUnknownFormat = errors.New("cannot detect the log format")
	// ErrTruncated means an input ended early or was damaged (a
	// truncated or corrupt gzip file); everything before is read.
	ErrTruncated = errors.New("input is truncated or damaged")
	// ErrStopped means Stop was called before the input ended.
	ErrStopped = errors.New("reading stopped")
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

// Options configure a Reader. The zero value reads a log in a detected
// format, keeps claimed hits only, and uses one worker per CPU.
type Options struct {
	// Name is the input's name in records and errors ("-" for stdin).
	Name string
	// Format is the log format; nil detects it from the first lines.
	Format *Format
	// Site is the site of requests whose line records no virtual host.
	Site string
	// TrustXFF takes the client from X-Forwarded-For.
	TrustXFF bool
	// Listed are addresses whose requests are kept even without the
	// product token (the crawler's published addresses).
	Listed *AddrSet
	// Workers is the number of parsing goroutines (0: GOMAXPROCS).
	Workers int
	// MaxExamples is how many malformed lines to keep (0: 10).
	MaxExamples int
	// ChunkSize is the size of the blocks handed to workers (0: 1 MiB).
	ChunkSize int
	// KeepAll builds a record for every valid line, not only claimed hits.
	KeepAll bool
}

// Stats counts what a Reader has seen so far.
type Stats struct {
	Lines     int64 // lines read, malformed included
	Malformed int64
	Bytes     int64 // bytes of log text (after decompression)
	Gzip      bool
	// FirstTime and LastTime are the times logged on the first and the
	// last well-formed lines: the span the input covers (zero when no
	// line was well formed).
	FirstTime, LastTime time.Time
	// MalformedClaims counts the malformed lines that carry the product
	// token somewhere: claims that could not be read as requests.
	MalformedClaims int64
}

// Reader reads access log lines and yields the records of interest, like
// bufio.Scanner: call Scan until it returns false, then Err. Lines are
// parsed by several goroutines, and records come out in input order.
type Reader struct {
	opts    Options
	src     io.Reader
	counted *countingReader

	started bool
	queue   chan chan *chunkResult
	stop    chan struct{}
	stopped sync.Once
	format  atomic.Pointer[Format]
	gzip    atomic.Bool
	lines   atomic.Int64
	prodErr error // set by the producer before closing queue

	cur      *chunkResult
	idx      int
	baseLine int64
	rec      *Record
	stats    Stats
	examples []*LineError
	err      error
	done     bool
}

// NewReader returns a Reader of r. r may be plain text or gzip (detected by
// its magic bytes).
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
	rd := &Reader{opts: opts, src: c, counted: c, stop: make(chan struct{})}
	if opts.Format != nil {
		rd.format.Store(opts.Format)
	}
	return rd
}

// Format returns the format in use: the one given, or the one detected
// (nil before the first Scan, or when the input was empty).
func (r *Reader) Format() *Format { return r.format.Load() }

// Record returns the record found by the last Scan. It stays valid after
// the next Scan.
func (r *Reader) Record() *Record { return r.rec }

// Stats returns the counts so far; after Scan returned false they cover the
// whole input.
func (r *Reader) Stats() Stats {
	s := r.stats
	s.Gzip = r.gzip.Load()
	return s
}

// Examples returns the first malformed lines.
func (r *Reader) Examples() []*LineError { return r.examples }

// Err returns the error that ended reading, or nil at the end of the
// input. A *ReadError wrapping ErrTruncated means what came before was
// read; ErrUnknownFormat means nothing was.
func (r *Reader) Err() error { return r.err }

// BytesRead returns how many bytes of the raw input (compressed, for gzip)
// have been read; it may be called from any goroutine.
func (r *Reader) BytesRead() int64 { return r.counted.n.Load() }

// LinesRead returns how many lines have been parsed so far; it may be
// called from any goroutine.
func (r *Reader) LinesRead() int64 { return r.lines.Load() }

// Stop makes the reader stop early: Scan soon returns false and Err
// returns ErrStopped. Unlike Close it may be called from any goroutine,
// for example when the run is interrupted.
func (r *Reader) Stop() {
	r.stopped.Do(func() { close(r.stop) })
}

// Close stops the reader's goroutines early. It is not needed after Scan
// has returned false.
func (r *Reader) Close() {
	r.stopped.Do(func() { close(r.stop) })
	if r.queue != nil {
		for range r.queue {
		}
	}
}

// Scan advances to the next record of interest.
func (r *Reader) Scan() bool {
	if r.done {
		return false
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
		var ch chan *chunkResult
		ok := false
		select {
		case ch, ok = <-r.queue:
		case <-r.stop:
		}
		if !ok {
			r.done = true
			select {
			case <-r.stop:
				r.err = ErrStopped
				go func() { // let the producer and workers end
					for range r.queue {
					}
				}()
			default:
				r.err = r.prodErr
			}
			r.stopped.Do(func() { close(r.stop) })
			return false
		}
		res := <-ch
		r.lines.Add(res.lines)
		r.stats.Lines += res.lines
		r.stats.Malformed += res.malformed
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

// chunkResult is what a worker found in one chunk. Line numbers in it are
// relative to the chunk.
type chunkResult struct {
	lines, malformed, bytes int64
	malformedClaims         int64
	firstTime, lastTime     time.Time // of the first and last well-formed lines
	recs                    []Record
	examples                []*LineError
}

type job struct {
	buf      []byte
	pooled   bool
	oversize bool  // buf holds the start of a line longer than MaxLineLength
	size     int64 // oversize: the length of the whole line
	out      chan *chunkResult
}

// produce reads the input in chunks cut at line ends and hands them to
// workers; the queue keeps the results in input order.
func (r *Reader) produce() {
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

	br := bufio.NewReaderSize(r.src, 64<<10)
	var src io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			r.prodErr = &ReadError{File: r.opts.Name, Offset: r.counted.n.Load(), Err: fmt.Errorf("%w: gzip header: %v", ErrTruncated, err)}
			return
		}
		r.gzip.Store(true)
		src = zr
	}
	if r.format.Load() == nil {
		// Large reads bypass this buffer, so it costs nothing after the
		// sample has been looked at.
		sb := bufio.NewReaderSize(src, detectSample)
		sample, perr := sb.Peek(detectSample)
		if perr == nil {
			// Only whole lines tell the format; when the first line is
			// longer than the sample, the first chunk decides below.
			if cut := bytes.LastIndexByte(sample, '\n'); cut >= 0 {
				sample = sample[:cut+1]
			} else {
				sample = nil
			}
		}
		if len(sample) > 0 && !r.detect(sample) {
			return
		}
		src = sb
	}

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
		select {
		case jobs <- j:
		case <-r.stop:
			return false
		}
		return true
	}

	var carry []byte
	for {
		buf := getBuf()
		pooled := true
		if len(carry) > cap(buf)/2 {
			// A long line: give it room to end in this buffer, up to the
			// longest line we parse.
			buf = make([]byte, 0, min(max(len(carry)*2, r.opts.ChunkSize), MaxLineLength))
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
			case len(buf) < MaxLineLength:
				// One line fills the buffer: read on with a bigger one.
				carry = buf
				continue
			default:
				// Longer than any line we parse: count it, keep its start
				// as the example, skip to its end.
				rest, skipped, serr := skipLine(src)
				if !send(job{buf: buf[:200], oversize: true, size: int64(len(buf)) + skipped}) {
					return
				}
				carry = rest
				if serr == nil {
					continue
				}
				if len(carry) > 0 && !send(job{buf: carry}) {
					return
				}
				r.setReadErr(serr)
				return
			}
		}
		if len(buf) > 0 {
			if r.format.Load() == nil && !r.detect(buf) {
				return
			}
			if !send(job{buf: buf, pooled: pooled}) {
				return
			}
		}
		if eof {
			r.setReadErr(err)
			return
		}
	}
}

// setReadErr records why reading stopped, unless it was the end of input.
func (r *Reader) setReadErr(err error) {
	if err == nil || errors.Is(err, io.EOF) {
		return
	}
	var corrupt flate.CorruptInputError
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || errors.As(err, &corrupt) {
		err = fmt.Errorf("%w: %v", ErrTruncated, err)
	}
	r.prodErr = &ReadError{File: r.opts.Name, Offset: r.counted.n.Load(), Err: err}
}

// detect sets the format from the whole lines in sample, or records why it
// cannot and returns false.
func (r *Reader) detect(sample []byte) bool {
	f, err := Detect(sample)
	if err != nil {
		r.prodErr = fmt.Errorf("%s: %w", r.opts.Name, err)
		return false
	}
	r.format.Store(f)
	return true
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
// what followed it in the last read, and how many bytes it discarded.
func skipLine(r io.Reader) (rest []byte, skipped int64, err error) {
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
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
		f := r.format.Load()
		if lp == nil || lpFormat != f {
			lp = newLineParser(f, r.opts.Listed, r.opts.Site, r.opts.TrustXFF)
			lp.keepAll = r.opts.KeepAll
			lpFormat = f
		}
		res := &chunkResult{bytes: int64(len(j.buf))}
		if j.oversize {
			res.lines, res.malformed, res.bytes = 1, 1, j.size
			if ContainsToken(j.buf) {
				res.malformedClaims = 1
			}
			res.examples = []*LineError{{Line: 1, Text: string(j.buf), Reason: "line longer than " + strconv.Itoa(MaxLineLength>>20) + " MiB"}}
			j.out <- res
			continue
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

// parseChunk parses the lines of one chunk.
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
		keep, reason := lp.parse(line, &rec)
		if reason != "" {
			res.malformed++
			if ContainsToken(line) {
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

// Detect returns the built-in format that most of the first lines of
// sample match (JSON, vhost_combined, nginx main, combined, common).
func Detect(sample []byte) (*Format, error) {
	var lines [][]byte
	for len(sample) > 0 && len(lines) < detectLines {
		var line []byte
		if i := bytes.IndexByte(sample, '\n'); i >= 0 {
			line, sample = sample[:i], sample[i+1:]
		} else {
			line, sample = sample, nil
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("%w: no lines to look at", ErrUnknownFormat)
	}
	var best *Format
	bestN := 0
	var rec Record
	for _, f := range autoCandidates {
		lp := newLineParser(f, nil, "", false)
		n := 0
		for _, l := range lines {
			if _, reason := lp.parse(l, &rec); reason == "" {
				n++
			}
		}
		if n > bestN {
			best, bestN = f, n
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%w: the first line %q matches none of json, vhost_combined, nginx_main, combined, common", ErrUnknownFormat, EscapeControl(clip(lines[0])))
	}
	return best, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
