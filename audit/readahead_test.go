package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/snapfile"
)

// TestReadAhead: the frames a merge reads ahead come in the snapshot's
// order, those of other kinds left out, hits decoded, large frames
// among small ones, the digest checked at the end; a reader stopped
// midway ends.
func TestReadAhead(t *testing.T) {
	var b bytes.Buffer
	w := snapfile.NewWriter(&b)
	type frame struct {
		kind byte
		size int
	}
	frames := []frame{{snapfile.KindInputStart, 3}, {snapfile.KindWarning, 10}, {snapfile.KindSettled, 50},
		{snapfile.KindWarning, bigFrame + 1}, {snapfile.KindWarning, 5}, {snapfile.KindWarning, bigFrame + 2},
		{snapfile.KindWarning, bigFrame + 3}, {snapfile.KindWarning, 7}}
	for i := range 20 {
		frames = append(frames, frame{snapfile.KindWarning, 100 + i})
	}
	payload := func(i int, f frame) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, f.size) }
	for i, f := range frames {
		w.Frame(f.kind, payload(i, f))
	}
	w.Hit(&snapfile.Hit{Site: "a.example", Target: "/x", Line: 7, Status: 200})
	w.Hit(&snapfile.Hit{Site: "a.example", Target: "/y", Line: 8, Status: 404})
	w.Frame(snapfile.KindInputEnd, []byte("{}"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	snap := b.Bytes()
	digest := func(snap []byte) [32]byte {
		sr, err := snapfile.NewReader(bytes.NewReader(snap))
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, _, err := sr.Next(); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
				return sr.Digest
			}
		}
	}
	want := digest(snap)
	kinds := string([]byte{snapfile.KindInputStart, snapfile.KindWarning, snapfile.KindHits, snapfile.KindInputEnd})
	pool := newFramePool()
	read := func(d [32]byte, stopAfter int) ([]string, error) {
		sr, err := snapfile.NewReader(bytes.NewReader(snap))
		if err != nil {
			t.Fatal(err)
		}
		feed := readAhead(sr, d, kinds, pool)
		defer feed.stop()
		var got []string
		for len(got) < stopAfter {
			f, ok := <-feed.frames
			if !ok {
				return got, errors.New("the frames ended without an end")
			}
			if f.err != nil {
				return got, f.err
			}
			s := fmt.Sprintf("%c %d", f.kind, len(f.p))
			for _, h := range f.hits {
				s += fmt.Sprintf(" %s%s:%d", h.Site, h.Target, h.Status)
			}
			got = append(got, s)
			feed.recycle(f)
		}
		return got, nil
	}
	var wantFrames []string
	for i, f := range frames {
		if f.kind != snapfile.KindSettled {
			wantFrames = append(wantFrames, fmt.Sprintf("%c %d", f.kind, len(payload(i, f))))
		}
	}
	for round := range 2 { // the pool's frames are used again
		got, err := read(want, 1<<30)
		if !errors.Is(err, io.EOF) {
			t.Fatalf("round %d: %v after %q", round, err, got)
		}
		if len(got) != len(wantFrames)+2 || fmt.Sprint(got[:len(wantFrames)]) != fmt.Sprint(wantFrames) ||
			!bytes.HasPrefix([]byte(got[len(wantFrames)]), []byte("c ")) || !bytes.HasSuffix([]byte(got[len(wantFrames)]), []byte(" a.example/x:200 a.example/y:404")) ||
			got[len(got)-1] != "i 2" {
			t.Fatalf("round %d: frames\n%q\nwant\n%q and the hits, the input's end", round, got, wantFrames)
		}
	}
	if _, err := read([32]byte{1}, 1<<30); !errors.Is(err, snapfile.ErrChecksum) {
		t.Fatalf("another digest: %v, want %v", err, snapfile.ErrChecksum)
	}
	for _, n := range []int{1, 3, 4, 6} { // stopped midway, a large frame read or not
		if got, err := read(want, n); err != nil || len(got) != n {
			t.Fatalf("stopped after %d: %q, %v", n, got, err)
		}
	}
}
