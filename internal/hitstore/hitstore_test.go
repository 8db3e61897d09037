package hitstore

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// randomHit makes a hit with the odd values a hostile log may hold.
func randomHit(rng *rand.Rand) Hit {
	times := []time.Time{
		time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC), time.Date(2026, 11, 1, 10, 0, 0, 123_000_000, time.UTC),
		{}, time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC), time.Date(-3000, 1, 1, 0, 0, 0, 1, time.UTC),
	}
	h := Hit{
		Addr: rng.Uint32N(1 << 20), Site: rng.Uint32(), File: rng.Uint32N(3),
		Line:   []int64{1, 2, 1 << 45, -7, 0}[rng.IntN(5)] + rng.Int64N(1000),
		Status: []int{200, 404, 0, -1, 1 << 20}[rng.IntN(5)],
		Target: []string{"", "/", "/a?b=c", "\x00\xff"}[rng.IntN(4)],
	}
	if rng.IntN(500) == 0 {
		h.Target = strings.Repeat("x", 70_000) // longer than a block
	}
	if rng.IntN(5) > 0 {
		h.Timed = true
		h.Time = times[rng.IntN(len(times))].Add(time.Duration(rng.Int64N(1 << 40)))
		h.Resolution = []time.Duration{time.Second, time.Millisecond, time.Minute, 3 * time.Nanosecond}[rng.IntN(4)]
	}
	if rng.IntN(2) == 0 {
		h.HasDuration, h.StartLogged = true, rng.IntN(2) == 0
		h.Duration = []time.Duration{0, 1500 * time.Microsecond, 7, -time.Second, 1 << 62}[rng.IntN(5)]
	}
	if rng.IntN(4) == 0 {
		h.Pair = rng.Uint32()
	}
	return h
}

// TestRoundTrip stores hits in segments, with a memory budget small
// enough that most go to the file, and reads every segment back, several
// at once, as they were added.
func TestRoundTrip(t *testing.T) {
	for _, memory := range []int{-1, 1, 100 << 10} {
		rng := rand.New(rand.NewPCG(1, uint64(memory+2)))
		s := &Store{Dir: t.TempDir(), Memory: memory}
		var want [][]Hit
		for seg := range 5 {
			var hits []Hit
			for range []int{3000, 0, 1, 20000, 50}[seg] {
				h := randomHit(rng)
				s.Add(&h)
				hits = append(hits, h)
			}
			want = append(want, hits)
			if seg < 4 {
				s.EndSegment()
			}
		}
		if s.Segments() != 5 || s.Warning() != "" {
			t.Fatalf("memory %d: %d segments, warning %q", memory, s.Segments(), s.Warning())
		}
		mem, file := s.Bytes()
		if memory == 1 && (file == 0 || mem > 2*blockSize) {
			t.Fatalf("memory 1: %d bytes in memory, %d in the file", mem, file)
		}
		if memory == -1 && file != 0 {
			t.Fatalf("memory -1 wrote %d bytes to a file", file)
		}
		readers := make([]*Reader, 5)
		for i := range readers {
			readers[i] = s.Reader(i)
		}
		got := make([][]Hit, 5)
		// Interleaved, as a merge of the logs reads them.
		for more := true; more; {
			more = false
			for i, r := range readers {
				var h Hit
				if r.Next(&h, false) {
					got[i] = append(got[i], h)
					more = true
				}
			}
		}
		for i := range want {
			if err := readers[i].Err(); err != nil {
				t.Fatal(err)
			}
			if len(got[i]) != len(want[i]) {
				t.Fatalf("memory %d, segment %d: %d hits back, want %d", memory, i, len(got[i]), len(want[i]))
			}
			for j := range want[i] {
				w := want[i][j]
				if w.Timed {
					w.Time = w.Time.UTC()
				} else {
					w.Time, w.Resolution = time.Time{}, 0
				}
				if !w.HasDuration {
					w.Duration = 0
				}
				if !reflect.DeepEqual(got[i][j], w) {
					t.Fatalf("memory %d, segment %d, hit %d:\ngot  %+v\nwant %+v", memory, i, j, got[i][j], w)
				}
			}
		}
		// Leaving out the hits of some sites: the others, whole.
		r3 := s.Reader(3)
		r3.SkipSite = func(site uint32) bool { return site%2 == 1 }
		var kept []Hit
		for h := (Hit{}); r3.Next(&h, false); {
			kept = append(kept, h)
		}
		var wantKept []Hit
		for _, h := range got[3] {
			if h.Site%2 == 0 {
				wantKept = append(wantKept, h)
			}
		}
		if r3.Err() != nil || !reflect.DeepEqual(kept, wantKept) {
			t.Fatalf("memory %d: %d hits of even sites, want %d (%v)", memory, len(kept), len(wantKept), r3.Err())
		}
		// Without the targets: the same but for them.
		r := s.Reader(3)
		var h Hit
		for j := 0; r.Next(&h, true); j++ {
			if h.Target != "" || h.Line != want[3][j].Line {
				t.Fatalf("skipping targets: hit %d is %+v", j, h)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNoFileLeft checks that the temporary file is gone once made (or at
// the latest on Close), and that a store whose directory cannot take it
// keeps its hits in memory and says why.
func TestNoFileLeft(t *testing.T) {
	dir := t.TempDir()
	s := &Store{Dir: dir, Memory: 1}
	h := Hit{Line: 1, Target: strings.Repeat("/p", 40_000)}
	for range 10 {
		s.Add(&h)
	}
	if _, file := s.Bytes(); file == 0 {
		t.Fatal("nothing went to the file")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}

	s = &Store{Dir: filepath.Join(dir, "missing"), Memory: 1}
	for range 10 {
		s.Add(&h)
	}
	if w := s.Warning(); !strings.Contains(w, "cannot make a temporary file for the claimed hits") || !strings.Contains(w, "TMPDIR") {
		t.Fatalf("warning %q", w)
	}
	n := 0
	for r := s.Reader(0); r.Next(&Hit{}, false); n++ {
	}
	if n != 10 {
		t.Fatalf("%d hits back from memory, want 10", n)
	}
}

// TestCorrupt checks that a file changed under the store ends its
// readers with an error, never a panic or a wrong hit.
func TestCorrupt(t *testing.T) {
	s := &Store{Dir: t.TempDir(), Memory: 1}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		h := randomHit(rng)
		h.Target = "/x"
		s.Add(&h)
	}
	s.Reader(0) // seals the last block
	junk := make([]byte, s.size)
	for i := range junk {
		junk[i] = byte(rng.Uint32())
	}
	if _, err := s.file.WriteAt(junk, 0); err != nil {
		t.Fatal(err)
	}
	r := s.Reader(0)
	for r.Next(&Hit{}, false) {
	}
	if r.Err() == nil {
		t.Fatal("random bytes read as hits")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir); err != nil {
		t.Fatal(err)
	}
}

// FuzzReader reads any bytes as a block of hits: never a panic, and an
// error rather than hits past what does not decode.
func FuzzReader(f *testing.F) {
	s := &Store{Memory: -1}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20 {
		h := randomHit(rng)
		h.Target = "/x"
		s.Add(&h)
	}
	s.Reader(0)
	f.Add(s.segs[0][0].data)
	f.Add([]byte{fTimed | fNsec, 1, 2, 3, 4, 5, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &Reader{s: &Store{}, blocks: []block{{data: data, n: len(data)}}}
		n := 0
		for h := (Hit{}); r.Next(&h, n%2 == 0); n++ {
			if n > len(data) {
				t.Fatalf("%d hits from %d bytes", n, len(data))
			}
		}
	})
}
