package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"strings"
	"sync/atomic"
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
	known := func(snap []byte) snapfile.Known {
		sr, err := snapfile.NewReader(bytes.NewReader(snap))
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, _, err := sr.Next(); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
				return sr.Known()
			}
		}
	}
	want := known(snap)
	kinds := string([]byte{snapfile.KindInputStart, snapfile.KindWarning, snapfile.KindHits, snapfile.KindInputEnd})
	pool := newFramePool()
	read := func(k snapfile.Known, stopAfter int) ([]string, error) {
		sr, err := snapfile.NewRereader(bytes.NewReader(snap), k)
		if err != nil {
			t.Fatal(err)
		}
		feed := readAhead(sr, kinds, pool, nil)
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
	if _, err := read(snapfile.Known{Digest: [32]byte{1}, CRC: want.CRC}, 1<<30); !errors.Is(err, snapfile.ErrChecksum) {
		t.Fatalf("another digest: %v, want %v", err, snapfile.ErrChecksum)
	}
	for _, n := range []int{1, 3, 4, 6} { // stopped midway, a large frame read or not
		if got, err := read(want, n); err != nil || len(got) != n {
			t.Fatalf("stopped after %d: %q, %v", n, got, err)
		}
	}
}

// TestReadAheadHints: what the hint func gives each hit's client is
// kept by hit, through blocks and however the addresses repeat.
func TestReadAheadHints(t *testing.T) {
	var b bytes.Buffer
	w := snapfile.NewWriter(&b)
	// The genuine crawler's two addresses, among others each seen once,
	// and clients that are no address.
	addrs := []netip.Addr{netip.MustParseAddr("79.139.58.98"), netip.MustParseAddr("2001:db8::7")}
	rng := rand.New(rand.NewPCG(1, 2))
	var want []netip.Addr
	for i := range 20000 { // several blocks of 64 KiB
		a := addrs[rng.IntN(len(addrs))]
		switch rng.IntN(10) {
		case 0:
			a = netip.AddrFrom4([4]byte{203, 0, byte(i >> 8), byte(i)})
		case 1:
			a = netip.Addr{}
		}
		h := &snapfile.Hit{Mask: 1, Client: a, Site: "a.example", Target: "/p/" + strings.Repeat("x", rng.IntN(20)), Line: int64(i + 1), Status: 200}
		if !a.IsValid() {
			h.Raw = "unknown"
		}
		w.Hit(h)
		want = append(want, a)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	sr, err := snapfile.NewReader(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	expect := func(a netip.Addr, out []int32) []int32 {
		v := int32(-1)
		if a.IsValid() {
			s := a.As16()
			v = int32(s[14])<<8 | int32(s[15])
		}
		return append(out, v, -v)
	}
	var calls atomic.Int64
	hint := func(a netip.Addr, out []int32) []int32 {
		calls.Add(1)
		return expect(a, out)
	}
	feed := readAhead(sr, string([]byte{snapfile.KindHits}), newFramePool(), hint)
	defer feed.stop()
	n, frames := 0, 0
	for f := range feed.frames {
		if f.err != nil {
			if !errors.Is(f.err, io.EOF) {
				t.Fatal(f.err)
			}
			break
		}
		frames++
		if len(f.hints) != 2*len(f.hits) {
			t.Fatalf("frame %d: %d hints for %d hits", frames, len(f.hints), len(f.hits))
		}
		for i, h := range f.hits {
			if h.Client != want[n] {
				t.Fatalf("hit %d: client %v, want %v", n, h.Client, want[n])
			}
			if w := expect(h.Client, nil); f.hints[2*i] != w[0] || f.hints[2*i+1] != w[1] {
				t.Fatalf("hit %d (%v): hints %v, want %v", n, h.Client, f.hints[2*i:2*i+2], w)
			}
			n++
		}
		feed.recycle(f)
	}
	if n != len(want) || frames < 3 {
		t.Fatalf("%d hits in %d frames, want %d in several", n, frames, len(want))
	}
	if c := calls.Load(); c >= int64(n/2) {
		t.Fatalf("the hint was asked %d times for %d hits: the repeated addresses are asked again", c, n)
	}
}
