package parse

import (
	"bytes"
	"compress/bzip2"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// runTool pipes in through a command and returns its output.
func runTool(t *testing.T, in []byte, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(testutil.NeedTool(t, ".ci/install-compressors", name), args...)
	cmd.Stdin = bytes.NewReader(in)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out.Bytes()
}

// capLog is a small combined log with one claimed hit per 50 lines.
func capLog(lines int) []byte {
	var b bytes.Buffer
	for i := 0; i < lines; i++ {
		ua := "Mozilla/5.0"
		if i%50 == 0 {
			ua = "Mozilla/5.0 (compatible; LohiSoftBot/1.0)"
		}
		fmt.Fprintf(&b, "203.0.113.%d - - [01/Dec/2026:06:25:01 +0100] \"GET /p/%d HTTP/1.1\" 200 %d \"-\" \"%s\"\n", i%250+1, i, i, ua)
	}
	return b.Bytes()
}

// setXZDict rewrites the LZMA2 dictionary size of the first block header
// at or after off (a stream header's start) to props (lzma2Dict's
// encoding) and fixes the header's CRC32: the file then asks for that
// dictionary and decodes as before.
func setXZDict(t *testing.T, f []byte, off int, props byte) {
	t.Helper()
	h := f[off+12:]
	size := (int(h[0]) + 1) * 4
	flags := h[1]
	i := 2
	skipVLI := func() uint64 {
		var v uint64
		for n := 0; ; n++ {
			c := h[i]
			i++
			v |= uint64(c&0x7f) << (7 * n)
			if c&0x80 == 0 {
				return v
			}
		}
	}
	if flags&0x40 != 0 {
		skipVLI()
	}
	if flags&0x80 != 0 {
		skipVLI()
	}
	for n := 0; n <= int(flags&3); n++ {
		id := skipVLI()
		ps := int(skipVLI())
		if id == 0x21 {
			h[i] = props
			binary.LittleEndian.PutUint32(h[size-4:], crc32.ChecksumIEEE(h[:size-4]))
			return
		}
		i += ps
	}
	t.Fatal("no LZMA2 filter in the first block header")
}

// readCapped reads data with a cap, returning the records, the error and
// the bytes allocated meanwhile.
func readCapped(t *testing.T, data []byte, maxDict int64) (recs int, err error, alloc uint64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := NewReader(bytes.NewReader(data), Options{Claims: testClaims, Name: "in", MaxDict: maxDict, Workers: 1})
	for r.Scan() {
		recs++
	}
	runtime.ReadMemStats(&after)
	return recs, r.Err(), after.TotalAlloc - before.TotalAlloc
}

// TestReaderXZDictCap: an xz file whose block asks for a 1.5 GiB
// dictionary (as xz --lzma2=dict=1536MiB writes it) is refused with a
// *DictError before the decompressor allocates it, in the first stream or
// in a later one; a file within the cap reads whole.
func TestReaderXZDictCap(t *testing.T) {
	log := capLog(2000)
	good := runTool(t, log, "xz", "--lzma2=dict=1MiB", "-c")
	hostile := bytes.Clone(good)
	setXZDict(t, hostile, 0, 37) // 3 << 29: 1536 MiB
	if d := lzma2Dict(37); d != 1536<<20 {
		t.Fatalf("lzma2Dict(37) = %d", d)
	}
	late := append(bytes.Clone(good), hostile...)

	for _, tc := range []struct {
		name    string
		data    []byte
		maxDict int64
		need    int64 // 0: reads whole
		recs    int
	}{
		{"hostile first stream", hostile, 0, 1536 << 20, 0},
		{"hostile second stream", late, 0, 1536 << 20, 40},
		{"1 MiB dictionary under a 512 KiB cap", good, 512 << 10, 1 << 20, 0},
		{"1 MiB dictionary under the default cap", good, 0, 0, 40},
		{"1 MiB dictionary under a 1 MiB cap", good, 1 << 20, 0, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err, alloc := readCapped(t, tc.data, tc.maxDict)
			if recs != tc.recs {
				t.Errorf("records = %d, want %d", recs, tc.recs)
			}
			if alloc > 64<<20 {
				t.Errorf("allocated %d MiB", alloc>>20)
			}
			if tc.need == 0 {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			var de *DictError
			var re *ReadError
			if !errors.As(err, &de) || !errors.As(err, &re) || !errors.Is(err, ErrDictTooLarge) {
				t.Fatalf("err = %v, want a *ReadError with a *DictError", err)
			}
			wantCap := tc.maxDict
			if wantCap == 0 {
				wantCap = DefaultMaxDict
			}
			if de.Kind != "xz" || de.Need != tc.need || de.Cap != wantCap {
				t.Errorf("DictError = %+v", de)
			}
			if !strings.Contains(err.Error(), "--max-dict "+mib(tc.need)) {
				t.Errorf("err = %q does not say which --max-dict reads it", err)
			}
		})
	}
}

// TestXZCapWalksEveryLayout: files the xz program writes in its other
// layouts (several blocks with sizes in their headers, every check type,
// several streams with padding between them) pass the container walk
// whole, and decode as they were.
func TestXZCapWalksEveryLayout(t *testing.T) {
	log := capLog(3000)
	var files [][]byte
	for _, args := range [][]string{
		{"-c"},
		{"-c", "-0"},
		{"-c", "-T2", "--block-size=16KiB"},
		{"-c", "--block-size=10KiB"},
		{"-c", "--check=none"},
		{"-c", "--check=crc32"},
		{"-c", "--check=sha256"},
		{"-c", "--lzma2=preset=6,dict=4KiB"},
	} {
		files = append(files, runTool(t, log, "xz", args...))
	}
	padded := append(bytes.Clone(files[0]), 0, 0, 0, 0, 0, 0, 0, 0)
	padded = append(padded, files[2]...)
	files = append(files, padded)
	// A stream of text stored as is (LZMA2 uncompressed chunks).
	var stored bytes.Buffer
	w, err := xz.WriterConfig{DictCap: 4096}.NewWriter(&stored)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(log)
	w.Close()
	files = append(files, stored.Bytes())
	for i, f := range files {
		x := newXZCap(bytes.NewReader(f), DefaultMaxDict)
		got, err := io.ReadAll(x)
		if err != nil || !bytes.Equal(got, f) {
			t.Errorf("file %d: walk err = %v, passed %d of %d bytes", i, err, len(got), len(f))
			continue
		}
		if x.state != xzStreamPad {
			t.Errorf("file %d: walk ended in state %d, not after a stream", i, x.state)
		}
		xr, err := xz.NewReader(newXZCap(bytes.NewReader(f), DefaultMaxDict))
		if err != nil {
			t.Fatal(err)
		}
		text, err := io.ReadAll(xr)
		want := log
		if i == len(files)-2 {
			want = append(bytes.Clone(log), log...)
		}
		if err != nil || !bytes.Equal(text, want) {
			t.Errorf("file %d: decoded %d bytes, err %v", i, len(text), err)
		}
	}
}

// TestReaderZstdWindowCap: a zstd frame that declares a 2 GiB window (as
// zstd --long=31 writes from a pipe) is refused with a *DictError, first
// frame or later; one within the cap reads.
func TestReaderZstdWindowCap(t *testing.T) {
	log := capLog(2000)
	// A frame header forged in Go: window descriptor 0xa8 (2^31), one
	// raw block holding the text.
	forged := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xa8}
	var bh [3]byte
	hdr := uint32(len(log))<<3 | 1 // raw, last
	bh[0], bh[1], bh[2] = byte(hdr), byte(hdr>>8), byte(hdr>>16)
	forged = append(append(forged, bh[:]...), log...)
	if w := zstdWindow(forged); w != 2<<30 {
		t.Fatalf("zstdWindow = %d", w)
	}
	var small bytes.Buffer
	zw, _ := zstd.NewWriter(&small, zstd.WithWindowSize(1<<20), zstd.WithEncoderConcurrency(1))
	zw.Write(log)
	zw.Close()

	cases := []struct {
		name    string
		data    []byte
		maxDict int64
		need    int64 // -1: reads whole; 0: refused without the size
		recs    int
	}{
		{"forged 2 GiB window", forged, 0, 2 << 30, 0},
		{"forged window in a later frame", append(bytes.Clone(small.Bytes()), forged...), 0, 0, 40},
		{"1 MiB window under a 512 KiB cap", small.Bytes(), 512 << 10, 1 << 20, 0},
		{"1 MiB window", small.Bytes(), 0, -1, 40},
	}
	if _, err := exec.LookPath("zstd"); err == nil || os.Getenv("CI") != "" {
		cli := runTool(t, log, "zstd", "--long=31", "-c")
		cases = append(cases, struct {
			name    string
			data    []byte
			maxDict int64
			need    int64
			recs    int
		}{"zstd --long=31 from a pipe", cli, 0, 2 << 30, 0})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			recs, err, alloc := readCapped(t, tc.data, tc.maxDict)
			if recs != tc.recs {
				t.Errorf("records = %d, want %d", recs, tc.recs)
			}
			if alloc > 64<<20 {
				t.Errorf("allocated %d MiB", alloc>>20)
			}
			if tc.need < 0 {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			var de *DictError
			if !errors.As(err, &de) || de.Kind != "zstd" || de.Need != tc.need {
				t.Fatalf("err = %v (%+v), want a zstd *DictError needing %d", err, de, tc.need)
			}
			if !strings.Contains(err.Error(), "--max-dict") {
				t.Errorf("err = %q does not name --max-dict", err)
			}
		})
	}
}

// TestBzip2Bounded: bzip2 needs no cap, as its largest block ("BZh9") is
// 900 kB: decompressing a level-9 file allocates a few MiB however it was
// made.
func TestBzip2Bounded(t *testing.T) {
	log := bytes.Repeat(capLog(5000), 4)
	f := runTool(t, log, "bzip2", "-9", "-c")
	if string(f[:4]) != "BZh9" {
		t.Fatalf("header %q", f[:4])
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n, err := io.Copy(io.Discard, bzip2.NewReader(bytes.NewReader(f)))
	runtime.ReadMemStats(&after)
	if err != nil || n != int64(len(log)) {
		t.Fatalf("decoded %d bytes, err %v", n, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("bzip2 -9 took %d MiB", alloc>>20)
	}
}

// FuzzXZCap: the container walk never panics, never lets more bytes pass
// than it was given, and whatever it passes of an xz file the xz library
// decodes without asking for more than the cap.
func FuzzXZCap(f *testing.F) {
	var b bytes.Buffer
	w, _ := xz.NewWriter(&b)
	w.Write(capLog(30))
	w.Close()
	f.Add(b.Bytes(), uint32(1<<20))
	f.Add(b.Bytes()[:40], uint32(4096))
	f.Add([]byte("\xfd7zXZ\x00\x00\x04\xe6\xd6\xb4\x46\x00\x00\x00\x00\x1c\xdf\x44\x21\x1f\xb6\xf3\x7d\x01\x00\x00\x00\x00\x04YZ"), uint32(0))
	f.Fuzz(func(t *testing.T, data []byte, capBytes uint32) {
		x := newXZCap(bytes.NewReader(data), int64(capBytes))
		got, err := io.ReadAll(x)
		if len(got) > len(data) || !bytes.Equal(got, data[:len(got)]) {
			t.Fatalf("passed %d bytes that are not the input's first", len(got))
		}
		var de *DictError
		if errors.As(err, &de) && de.Need <= de.Cap {
			t.Fatalf("refused %+v", de)
		}
		zstdWindow(data)
	})
}
