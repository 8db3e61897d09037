package parse

import (
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// hangTimeout only detects a hang: nothing is asserted about how long a
// step takes.
const hangTimeout = 30 * time.Second

// recordKeys lists file:line and client of records, to compare reads.
func recordKeys(recs []*Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, fmt.Sprintf("%d %s %s", r.Line, r.Client, r.Target))
	}
	return out
}

func compressedFixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "compressed", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestReaderCompressed reads files made by the bzip2, xz and zstd
// programs (one stream, and two in a row) like the plain log.
func TestReaderCompressed(t *testing.T) {
	plain, err := os.ReadFile(filepath.Join("..", "testdata", "logs", "combined.log"))
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(bytes.NewReader(plain), Options{Claims: testClaims, Name: "plain"})
	want := recordKeys(readAll(t, r))
	wantStats := r.Stats()
	if r.Err() != nil || len(want) == 0 {
		t.Fatalf("plain: %v, %d records", r.Err(), len(want))
	}
	for _, tc := range []struct {
		file, kind string
		copies     int
	}{
		{"access.log.bz2", "bzip2", 1}, {"twice.log.bz2", "bzip2", 2},
		{"access.log.xz", "xz", 1}, {"twice.log.xz", "xz", 2},
		{"access.log.zst", "zstd", 1}, {"twice.log.zst", "zstd", 2},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r := NewReader(bytes.NewReader(compressedFixture(t, tc.file)), Options{Claims: testClaims, Name: tc.file, ChunkSize: 512, Workers: 2})
			got := recordKeys(readAll(t, r))
			if r.Err() != nil {
				t.Fatal(r.Err())
			}
			st := r.Stats()
			if st.Compression != tc.kind || st.Gzip || st.Lines != wantStats.Lines*int64(tc.copies) || st.Bytes != int64(len(plain)*tc.copies) {
				t.Errorf("stats %+v", st)
			}
			if len(got) != len(want)*tc.copies || strings.Join(got[:len(want)], "|") != strings.Join(want, "|") {
				t.Errorf("records %v, want %d copies of %v", got, tc.copies, want)
			}
		})
	}
	for _, tc := range []struct{ file, kind, command string }{
		{"access.log.lz4", "lz4", "lz4 -dc"},
		{"access.log.zip", "zip", "unzip -p"},
	} {
		r := NewReader(bytes.NewReader(compressedFixture(t, tc.file)), Options{Claims: testClaims, Name: tc.file})
		if r.Scan() {
			t.Fatalf("%s: a record from a compressed file", tc.file)
		}
		var ce *CompressedError
		if !errors.Is(r.Err(), ErrCompressed) || !errors.As(r.Err(), &ce) || ce.Kind != tc.kind || ce.Command != tc.command {
			t.Fatalf("%s: err %v", tc.file, r.Err())
		}
		if msg := r.Err().Error(); !strings.Contains(msg, tc.file+": compressed with "+tc.kind+": not supported") || strings.Contains(msg, "\n") {
			t.Errorf("%s: message %q", tc.file, msg)
		}
		if st := r.Stats(); st.Lines != 0 || st.Malformed != 0 {
			t.Errorf("%s: stats %+v", tc.file, st)
		}
	}
	// The other magic numbers are named too, and text is never taken for
	// a compressed file.
	for magic, kind := range map[string]string{
		"7z\xbc\xaf\x27\x1c\x00\x04": "7z", "Rar!\x1a\x07\x01\x00": "rar", "LZIP\x01": "lzip", "\x5d\x00\x00\x80\x00": "lzma",
		"\x1f\x9d\x90": "compress (.Z)", "\x02\x21\x4c\x18": "lz4", "\x50\x2a\x4d\x18\x04\x00\x00\x00": "zstd",
	} {
		if got := compressionOf([]byte(magic)); got.name != kind {
			t.Errorf("%q: %q, want %q", magic, got.name, kind)
		}
	}
	for _, text := range []string{"192.0.2.1 - -", "<190>Dec  1", `{"remote_addr"`, "BZh", "PK", "2001:db8::1 - -", "www.example.com 1"} {
		if got := compressionOf([]byte(text)); got.name != "" {
			t.Errorf("%q taken for %s", text, got.name)
		}
	}
}

// bigLog is a generated combined log of 20000 lines (one in five a
// claimed hit), as the bzip2 fixture holds it.
func bigLog(t *testing.T) []byte {
	t.Helper()
	data, err := io.ReadAll(bzip2.NewReader(bytes.NewReader(compressedFixture(t, "big.log.bz2"))))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestReaderCompressedDamage: a truncated or damaged bzip2, xz or zstd
// file is reported like a truncated gzip file: ErrTruncated at the byte
// offset, everything before it read.
func TestReaderCompressedDamage(t *testing.T) {
	text := bigLog(t)
	var xzb, zsb bytes.Buffer
	xw, err := xz.NewWriter(&xzb)
	if err != nil {
		t.Fatal(err)
	}
	zw, err := zstd.NewWriter(&zsb, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []io.WriteCloser{xw, zw} {
		if _, err := w.Write(text); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	full := map[string][]byte{"bzip2": compressedFixture(t, "big.log.bz2"), "xz": xzb.Bytes(), "zstd": zsb.Bytes(), "gzip": gz(t, string(text))}
	r := NewReader(bytes.NewReader(text), Options{Claims: testClaims, Name: "plain", Workers: 2})
	want := recordKeys(readAll(t, r))
	if len(want) != 4000 {
		t.Fatalf("%d records in the plain log", len(want))
	}
	for kind, data := range full {
		t.Run(kind, func(t *testing.T) {
			r := NewReader(bytes.NewReader(data), Options{Claims: testClaims, Name: "log." + kind, Workers: 2, ChunkSize: 4096})
			if n := len(readAll(t, r)); n != len(want) || r.Err() != nil || r.Stats().Compression != kind {
				t.Fatalf("whole: %d records, err %v, stats %+v", n, r.Err(), r.Stats())
			}
			for _, frac := range []int{1, 50, 67, 99} {
				cut := data[:len(data)*frac/100]
				r := NewReader(bytes.NewReader(cut), Options{Claims: testClaims, Name: "cut." + kind, Workers: 2, ChunkSize: 4096})
				got := recordKeys(readAll(t, r))
				var re *ReadError
				if !errors.As(r.Err(), &re) || !errors.Is(r.Err(), ErrTruncated) {
					t.Fatalf("cut at %d%%: err %v, want a ReadError wrapping ErrTruncated", frac, r.Err())
				}
				if re.File != "cut."+kind || re.Offset != int64(len(cut)) || !strings.Contains(re.Error(), kind) {
					t.Errorf("cut at %d%%: %v, want at byte %d", frac, re, len(cut))
				}
				if strings.Join(got, "|") != strings.Join(want[:len(got)], "|") {
					t.Errorf("cut at %d%%: the records read are not the log's first ones", frac)
				}
				if frac == 99 && len(got) < len(want)/2 {
					t.Errorf("cut at 99%%: only %d of %d records read", len(got), len(want))
				}
			}
			// a flipped byte in the middle
			bad := bytes.Clone(data)
			bad[len(bad)/2] ^= 0x55
			r = NewReader(bytes.NewReader(bad), Options{Claims: testClaims, Name: "bad." + kind, Workers: 2})
			readAll(t, r)
			if !errors.Is(r.Err(), ErrTruncated) {
				t.Errorf("damaged: err %v, want ErrTruncated", r.Err())
			}
		})
	}
	// An input that fails is reported as it failed, not as damage.
	boom := errors.New("input/output error")
	r = NewReader(&failingReader{data: full["xz"][:len(full["xz"])/2], err: boom}, Options{Claims: testClaims, Name: "disk.xz"})
	readAll(t, r)
	if !errors.Is(r.Err(), boom) || errors.Is(r.Err(), ErrTruncated) {
		t.Errorf("failing input: err %v", r.Err())
	}
}

// TestReaderLineLimits: a line of exactly MaxLineLength bytes is read,
// with "\n", "\r\n" or the end of the input after it; one byte more is
// "longer than 16 MiB".
func TestReaderLineLimits(t *testing.T) {
	const head = `192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "GET /`
	const tail = ` HTTP/1.1" 200 1 "-" "LohiSoftBot/1.0"`
	line := func(n int) string {
		return head + strings.Repeat("a", n-len(head)-len(tail)) + tail
	}
	short := line(200)
	for _, tc := range []struct {
		name   string
		n      int
		ending string
		ok     bool
	}{
		{"exactly, \\n", MaxLineLength, "\n", true},
		{"exactly, \\r\\n", MaxLineLength, "\r\n", true},
		{"exactly, at the end", MaxLineLength, "", true},
		{"one more, \\n", MaxLineLength + 1, "\n", false},
		{"one more, \\r\\n", MaxLineLength + 1, "\r\n", false},
		{"one more, at the end", MaxLineLength + 1, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			long := line(tc.n)
			in := short + "\n" + long + tc.ending
			if tc.ending != "" {
				in += short + "\n"
			}
			r := NewReader(strings.NewReader(in), Options{Claims: testClaims, Name: "long", Format: Combined, ChunkSize: 1 << 16, Workers: 2})
			recs := readAll(t, r)
			if r.Err() != nil {
				t.Fatal(r.Err())
			}
			st := r.Stats()
			wantLines := int64(2)
			if tc.ending != "" {
				wantLines = 3
			}
			if st.Lines != wantLines || st.Bytes != int64(len(in)) {
				t.Errorf("stats %+v, want %d lines of %d bytes", st, wantLines, len(in))
			}
			if tc.ok {
				if st.Malformed != 0 || len(recs) != int(wantLines) || recs[1].Line != 2 || len(recs[1].Target) != tc.n-len(head)-len(tail)+1 {
					t.Errorf("a line of %d bytes: %d records, stats %+v, examples %v", tc.n, len(recs), st, r.Examples())
				}
				return
			}
			if st.Malformed != 1 || len(recs) != int(wantLines)-1 {
				t.Fatalf("%d records, stats %+v", len(recs), st)
			}
			if ex := r.Examples(); len(ex) != 1 || ex[0].Line != 2 || ex[0].Reason != "line longer than 16 MiB" || len(ex[0].Text) != 200 {
				t.Errorf("examples %v", ex)
			}
		})
	}
}

// TestReaderBlankLines: blank lines are counted apart, not as malformed
// and not among the examples; a log of blank lines only is no error.
func TestReaderBlankLines(t *testing.T) {
	good := `192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" 200 1 "-" "LohiSoftBot/1.0"`
	in := "\n" + good + "\n \n\t\r\n" + "garbage\n" + good + "\r\n\r\n" + good
	for _, f := range []*Format{nil, Combined, withSyslog(Combined), JSON} {
		r := NewReader(strings.NewReader(in), Options{Claims: testClaims, Name: "b", Format: f, ChunkSize: 64})
		recs := readAll(t, r)
		st := r.Stats()
		if f == JSON || f != nil && f.Syslog() {
			// every non-blank line is malformed in those formats
			if st.Blank != 4 || st.Malformed != 4 || st.Lines != 8 {
				t.Errorf("%v: stats %+v", f.Name(), st)
			}
			continue
		}
		if r.Err() != nil || len(recs) != 3 || st.Lines != 8 || st.Blank != 4 || st.Malformed != 1 {
			t.Errorf("format %v: err %v, %d records, stats %+v", f, r.Err(), len(recs), st)
		}
		if ex := r.Examples(); len(ex) != 1 || ex[0].Line != 5 || ex[0].Text != "garbage" {
			t.Errorf("examples %v", ex)
		}
		if recs[0].Line != 2 || recs[1].Line != 6 || recs[2].Line != 8 {
			t.Errorf("lines %d %d %d", recs[0].Line, recs[1].Line, recs[2].Line)
		}
	}
	// Only blank lines: nothing to detect, nothing wrong.
	r := NewReader(strings.NewReader("\n\n  \n"), Options{Claims: testClaims, Name: "blank"})
	if r.Scan() || r.Err() != nil || r.Stats().Blank != 3 || r.Stats().Malformed != 0 || r.Format() != nil {
		t.Errorf("blank log: err %v, stats %+v", r.Err(), r.Stats())
	}
	// More blank lines than the sample holds, then a log: detected from
	// the first chunk with lines in it.
	in = strings.Repeat("\n", detectSample+100) + good + "\n"
	r = NewReader(strings.NewReader(in), Options{Claims: testClaims, Name: "late", ChunkSize: 4096, Workers: 3})
	recs := readAll(t, r)
	if r.Err() != nil || len(recs) != 1 || recs[0].Line != detectSample+101 || r.Format() != Combined || r.Stats().Blank != detectSample+100 {
		t.Errorf("late log: err %v, %d records, format %v, stats %+v", r.Err(), len(recs), r.Format(), r.Stats())
	}
}

// stopAtReader calls stop once reading reaches byte at.
type stopAtReader struct {
	r    io.Reader
	n    int
	at   int
	stop func()
}

func (s *stopAtReader) Read(p []byte) (int, error) {
	if len(p) > 97 {
		p = p[:97] // many small reads: many points to stop at
	}
	n, err := s.r.Read(p)
	if s.n < s.at && s.n+n >= s.at {
		s.stop()
	}
	s.n += n
	return n, err
}

// scanAll runs Scan until it returns false, failing the test on a hang.
func scanAll(t *testing.T, r *Reader, each func(n int)) int {
	t.Helper()
	done := make(chan int, 1)
	go func() {
		n := 0
		for r.Scan() {
			n++
			if each != nil {
				each(n)
			}
		}
		done <- n
	}()
	select {
	case n := <-done:
		return n
	case <-time.After(hangTimeout):
		buf := make([]byte, 1<<20)
		t.Fatalf("Scan hangs after Stop; goroutines:\n%s", buf[:runtime.Stack(buf, true)])
	}
	return 0
}

// waitEnded fails the test when the reader's goroutines do not end.
func waitEnded(t *testing.T, r *Reader) {
	t.Helper()
	ended := make(chan struct{})
	go func() { r.wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(hangTimeout):
		buf := make([]byte, 1<<20)
		t.Fatalf("the reader's goroutines did not end; goroutines:\n%s", buf[:runtime.Stack(buf, true)])
	}
}

// TestReaderStopAnywhere stops readers at many random points (in Scan
// between records, in the middle of a read of the input, from another
// goroutine, before the start), over plain and gzip input, many chunk
// sizes and worker counts: Scan always returns, with ErrStopped when it
// was stopped before the end, and every goroutine ends.
func TestReaderStopAnywhere(t *testing.T) {
	// Larger than the sample detection reads first, so that most stops
	// land while chunks are read, queued and parsed.
	var b strings.Builder
	for i := 0; i < 8000; i++ {
		ua := "Mozilla/5.0"
		if i%3 == 0 {
			ua = "LohiSoftBot/1.0"
		}
		fmt.Fprintf(&b, "192.0.2.%d - - [10/Oct/2026:13:55:36 +0000] \"GET /%s HTTP/1.1\" 200 1 \"-\" \"%s\"\n", i%200+1, strings.Repeat("p", i%90), ua)
	}
	plain := []byte(b.String())
	// gzip without compression: as large as the text, so that the stops
	// in the middle of a read fall after the sample too
	var zb bytes.Buffer
	zw, err := gzip.NewWriterLevel(&zb, gzip.NoCompression)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(plain)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	inputs := map[bool][]byte{false: plain, true: zb.Bytes()}
	base := runtime.NumGoroutine()
	rng := rand.New(rand.NewPCG(1, 2))
	runs := 300
	if testing.Short() {
		runs = 60
	}
	for i := 0; i < runs; i++ {
		gzipped := i%2 == 1
		data := inputs[gzipped]
		opts := Options{
			Claims:    testClaims,
			Name:      "stop",
			Workers:   1 + rng.IntN(4),
			ChunkSize: []int{64, 100, 333, 1000, 4096, 65536}[rng.IntN(6)],
			KeepAll:   rng.IntN(2) == 0, // busier workers
		}
		if rng.IntN(2) == 0 {
			opts.Format = Combined
		}
		how := []int{0, 0, 1, 1, 1, 1, 2, 3}[rng.IntN(8)]
		var r *Reader
		src := &stopAtReader{r: bytes.NewReader(data), at: -1}
		r = NewReader(src, opts)
		stoppedEarly := true
		var each func(int)
		switch how {
		case 0: // in Scan, after some records
			k := 1 + rng.IntN(4000)
			each = func(n int) {
				if n == k {
					r.Stop()
				}
			}
			stoppedEarly = false // unless k is reached; checked below
		case 1: // from the producer, in the middle of a read, mostly after the sample
			src.at = 1 + rng.IntN(len(data))
			if rng.IntN(4) > 0 {
				src.at = detectSample + rng.IntN(len(data)-detectSample)
			}
			src.stop = r.Stop
		case 2: // from another goroutine, at a random moment
			delay := time.Duration(rng.IntN(2000)) * time.Microsecond
			go func() {
				time.Sleep(delay)
				r.Stop()
			}()
			stoppedEarly = false
		case 3: // before the first Scan
			r.Stop()
		}
		n := scanAll(t, r, each)
		err := r.Err()
		switch {
		case how == 0 && n >= 1 && each != nil && err == nil:
			// the k-th record was never reached: read to the end
		case !stoppedEarly && err == nil:
		case errors.Is(err, ErrStopped):
		default:
			t.Fatalf("run %d (how %d, gzip %v, %+v): %d records, err %v", i, how, gzipped, opts, n, err)
		}
		if how == 3 && n != 0 {
			t.Fatalf("run %d: %d records after a Stop before Scan", i, n)
		}
		if r.Scan() {
			t.Fatalf("run %d: Scan after the end returned a record", i)
		}
		waitEnded(t, r)
	}
	// Every goroutine of every reader has ended (others of the test
	// binary come and go, so wait for the count to settle back).
	deadline := time.Now().Add(hangTimeout)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines left, %d before:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReaderStopWhileReadBlocks: Stop ends Scan while the reader waits on
// a pipe that delivers nothing more, in every phase (the sample for
// detection, a chunk, a gzip header).
func TestReaderStopWhileReadBlocks(t *testing.T) {
	line := `192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" 200 1 "-" "LohiSoftBot/1.0"` + "\n"
	for _, tc := range []struct {
		name   string
		format *Format
		first  string // written before the pipe blocks
	}{
		{"nothing ever, detecting", nil, ""},
		{"nothing ever, given format", Combined, ""},
		{"a few lines, detecting", nil, strings.Repeat(line, 10)},
		{"a chunk and more, given format", Combined, strings.Repeat(line, 3000)},
		{"half a gzip header", nil, "\x1f\x8b\x08"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			wrote := make(chan struct{})
			go func() {
				defer close(wrote)
				if tc.first != "" {
					pw.Write([]byte(tc.first))
				}
			}()
			r := NewReader(pr, Options{Claims: testClaims, Name: "-", Format: tc.format, ChunkSize: 4096, Workers: 2})
			go func() {
				// Stop once all was read and Scan waits for more (or
				// about then): the order does not matter, only that Scan
				// returns.
				<-wrote
				runtime.Gosched()
				r.Stop()
			}()
			scanAll(t, r, nil)
			if !errors.Is(r.Err(), ErrStopped) {
				t.Errorf("err %v, want ErrStopped", r.Err())
			}
			// The goroutine blocked in Read ends when Read returns.
			pr.CloseWithError(errors.New("closed"))
			waitEnded(t, r)
		})
	}
}

// TestReaderStopAfterQueued stops the reader exactly when the producer
// has queued a chunk and not yet handed it to a worker: the chunk is then
// never parsed, and Scan must not wait for it.
func TestReaderStopAfterQueued(t *testing.T) {
	line := `192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" 200 1 "-" "LohiSoftBot/1.0"` + "\n"
	in := strings.Repeat(line, 2000)
	defer func() { testHookQueued = nil }()
	for i := 0; i < 200; i++ {
		chunk := 1 + i%5 // stop when this chunk is queued
		queued := 0
		testHookQueued = func(r *Reader) {
			if queued++; queued == chunk {
				r.Stop()
			}
		}
		r := NewReader(strings.NewReader(in), Options{Claims: testClaims, Name: "q", Format: Combined, ChunkSize: 1000, Workers: 1 + i%3})
		scanAll(t, r, nil)
		if !errors.Is(r.Err(), ErrStopped) {
			t.Fatalf("run %d: err %v, want ErrStopped", i, r.Err())
		}
		waitEnded(t, r)
	}
}
