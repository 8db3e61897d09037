package snapfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"
)

// randomHit makes a hit with the odd values a hostile log may hold.
func randomHit(rng *rand.Rand) Hit {
	times := []time.Time{
		time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC), time.Date(2026, 11, 1, 10, 0, 0, 123_000_000, time.UTC),
		{}, time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
	}
	clients := []netip.Addr{
		netip.MustParseAddr("79.139.58.98"), netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("fe80::1%eth0"),
		netip.MustParseAddr("::ffff:1.2.3.4"), {},
	}
	h := Hit{
		Mask:      []uint64{1, 1, 2, 5, 1 << 63}[rng.IntN(5)],
		Client:    clients[rng.IntN(len(clients))],
		Site:      []string{"a.example", "", "b.example", "\x00\xff"}[rng.IntN(4)],
		UserAgent: fmt.Sprintf("LohiSoftBot/%d", rng.IntN(300)),
		Line:      []int64{1, 2, 1 << 45, -7, 0}[rng.IntN(5)] + rng.Int64N(1000),
		Status:    []int{200, 404, 0, -1, 1 << 20}[rng.IntN(5)],
		Target:    []string{"", "/", "/a?b=c", "\x00\xff"}[rng.IntN(4)],
	}
	if !h.Client.IsValid() {
		h.Raw = []string{"crawl-1.example.net", "", "-"}[rng.IntN(3)]
	} else {
		h.Proxy = rng.IntN(5) == 0
	}
	if rng.IntN(300) == 0 {
		h.Target = strings.Repeat("x", 70_000) // longer than a block
	}
	if rng.IntN(5) > 0 {
		h.Timed = true
		h.Time = times[rng.IntN(len(times))].Add(time.Duration(rng.Int64N(1 << 40))).UTC()
		h.Resolution = []time.Duration{time.Second, time.Millisecond, time.Minute, 3 * time.Nanosecond}[rng.IntN(4)]
	}
	if rng.IntN(2) == 0 {
		h.HasDuration, h.StartLogged = true, rng.IntN(2) == 0
		h.Duration = []time.Duration{0, 1500 * time.Microsecond, 7, -time.Second, 1 << 62}[rng.IntN(5)]
	}
	if rng.IntN(4) == 0 {
		h.RemoteUser = []string{"alice", "-", "x y"}[rng.IntN(3)]
	}
	if rng.IntN(4) == 0 {
		h.RetryAfter = []string{"120", "Wed, 21 Oct 2015 07:28:00 GMT"}[rng.IntN(2)]
	}
	return h
}

// written is what a test writes: frames and hits in order.
type written struct {
	kind    byte
	payload string
	hits    []Hit
}

// writeAll writes items and returns the snapshot's bytes.
func writeAll(t testing.TB, items []written) []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, it := range items {
		if it.kind == KindHits {
			for i := range it.hits {
				w.Hit(&it.hits[i])
			}
			continue
		}
		w.Frame(it.kind, []byte(it.payload))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readAll reads a snapshot back: its frames, hits gathered between them.
func readAll(data []byte) ([]written, [32]byte, error) {
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, [32]byte{}, err
	}
	var out []written
	var d HitDecoder
	for {
		k, p, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, r.Digest, nil
		}
		if err != nil {
			return out, [32]byte{}, err
		}
		if k != KindHits {
			out = append(out, written{kind: k, payload: string(p)})
			continue
		}
		if len(out) == 0 || out[len(out)-1].kind != KindHits {
			out = append(out, written{kind: KindHits})
		}
		last := &out[len(out)-1]
		err = d.Decode(p, func(h *Hit) error {
			c := *h
			c.Target, c.Raw = strings.Clone(c.Target), strings.Clone(c.Raw)
			last.hits = append(last.hits, c)
			return nil
		})
		if err != nil {
			return out, [32]byte{}, err
		}
	}
}

// TestRoundTrip writes frames and hits (with odd values, blocks filled
// past their size, strings past the table's bound) and reads them back
// as written.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var items []written
	items = append(items, written{kind: KindHeader, payload: `{"a":1}`})
	for seg := range 4 {
		items = append(items, written{kind: KindInputStart, payload: fmt.Sprint("log", seg)})
		var hits []Hit
		for range []int{5000, 0, 1, 30000}[seg] {
			hits = append(hits, randomHit(rng))
		}
		if seg == 3 {
			// More distinct user agents than the table holds.
			for i := range 70_000 {
				h := randomHit(rng)
				h.UserAgent = fmt.Sprint("ua", i)
				hits = append(hits, h)
			}
		}
		if len(hits) > 0 {
			items = append(items, written{kind: KindHits, hits: hits})
		}
		items = append(items, written{kind: KindInputEnd, payload: ""})
	}
	items = append(items, written{kind: KindEnd, payload: "end"})
	data := writeAll(t, items)
	got, digest, err := readAll(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(items) {
		t.Fatalf("read %d items, wrote %d", len(got), len(items))
	}
	for i := range items {
		if got[i].kind != items[i].kind || got[i].payload != items[i].payload {
			t.Fatalf("item %d: got %c %q, want %c %q", i, got[i].kind, got[i].payload, items[i].kind, items[i].payload)
		}
		if len(got[i].hits) != len(items[i].hits) {
			t.Fatalf("item %d: %d hits, want %d", i, len(got[i].hits), len(items[i].hits))
		}
		for j := range items[i].hits {
			if !reflect.DeepEqual(got[i].hits[j], items[i].hits[j]) {
				t.Fatalf("item %d hit %d:\n got %+v\nwant %+v", i, j, got[i].hits[j], items[i].hits[j])
			}
		}
	}
	if digest == [32]byte{} {
		t.Error("no digest")
	}
}

// TestDamage flips bytes and cuts the snapshot short: every damage is an
// error from the reader (checksum, truncation or framing), never a panic
// and never a clean read.
func TestDamage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var hits []Hit
	for range 300 {
		hits = append(hits, randomHit(rng))
	}
	data := writeAll(t, []written{{kind: KindHeader, payload: "{}"}, {kind: KindHits, hits: hits}, {kind: KindEnd, payload: "x"}})
	for i := len(Magic) + 1; i < len(data); i += 1 + rng.IntN(7) {
		bad := bytes.Clone(data)
		bad[i] ^= byte(1 + rng.IntN(255))
		if _, _, err := readAll(bad); err == nil {
			t.Fatalf("byte %d changed: read without error", i)
		}
	}
	for n := 0; n < len(data); n += 1 + rng.IntN(13) {
		_, _, err := readAll(data[:n])
		if err == nil {
			t.Fatalf("cut at %d of %d: read without error", n, len(data))
		}
		if n >= len(Magic)+1 && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut at %d: %v, want truncated", n, err)
		}
	}
	if _, _, err := readAll(append(bytes.Clone(data), 0)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a byte after the end: %v, want ErrCorrupt", err)
	}
}

// TestRereader: a snapshot read again (NewRereader, checked by the first
// reading's CRC-32C) reads as it did; changed between the readings, by
// one byte or by a whole other snapshot with its own right digest, it is
// an error, never a clean read.
func TestRereader(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var hits []Hit
	for range 300 {
		hits = append(hits, randomHit(rng))
	}
	items := []written{{kind: KindHeader, payload: "{}"}, {kind: KindHits, hits: hits}, {kind: KindEnd, payload: "x"}}
	data := writeAll(t, items)
	first, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	drain := func(r *Reader) error {
		for {
			if _, _, err := r.Next(); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
		}
	}
	if err := drain(first); err != nil {
		t.Fatal(err)
	}
	known := first.Known()
	if known.CRC == 0 || known.Digest == [32]byte{} {
		t.Fatalf("first reading found nothing: %+v", known)
	}
	again := func(b []byte) error {
		r, err := NewRereader(bytes.NewReader(b), known)
		if err != nil {
			return err
		}
		if err := drain(r); err != nil {
			return err
		}
		if r.Known() != known {
			t.Fatalf("read again: %+v, first %+v", r.Known(), known)
		}
		return nil
	}
	if err := again(data); err != nil {
		t.Fatalf("the same bytes read again: %v", err)
	}
	for i := len(Magic) + 1; i < len(data); i += 1 + rng.IntN(9) {
		bad := bytes.Clone(data)
		bad[i] ^= byte(1 + rng.IntN(255))
		if err := again(bad); err == nil {
			t.Fatalf("byte %d changed between the readings: read again without error", i)
		}
	}
	items[2].payload = "y"
	if err := again(writeAll(t, items)); !errors.Is(err, ErrChecksum) {
		t.Errorf("another whole snapshot read again: %v, want ErrChecksum", err)
	}
}

// TestVersionAndMagic: another format version and another file are
// refused by what they are.
func TestVersionAndMagic(t *testing.T) {
	data := writeAll(t, nil)
	other := append([]byte(Magic), binary.AppendUvarint(nil, Version+1)...)
	other = append(other, data[len(Magic)+1:]...)
	var ve *VersionError
	if _, _, err := readAll(other); !errors.As(err, &ve) || ve.Version != Version+1 {
		t.Errorf("version %d: %v", Version+1, err)
	}
	for _, s := range []string{"", "127.0.0.1 - - [01/Jan/2026:00:00:00 +0000] \"GET / HTTP/1.1\" 200 1\n"} {
		if _, _, err := readAll([]byte(s)); !errors.Is(err, ErrNotSnapshot) {
			t.Errorf("%q: %v, want ErrNotSnapshot", s, err)
		}
	}
}

// TestDigestNamesContent: the same content has the same digest, another
// content another.
func TestDigestNamesContent(t *testing.T) {
	a := writeAll(t, []written{{kind: KindHeader, payload: "a"}})
	b := writeAll(t, []written{{kind: KindHeader, payload: "b"}})
	_, da, _ := readAll(a)
	_, da2, _ := readAll(bytes.Clone(a))
	_, db, _ := readAll(b)
	if da != da2 || da == db {
		t.Errorf("digests: %x %x %x", da, da2, db)
	}
}

// FuzzReader feeds the reader and the hit decoder arbitrary bytes after
// the magic line: an error or a clean read, never a panic.
func FuzzReader(f *testing.F) {
	rng := rand.New(rand.NewPCG(5, 6))
	var hits []Hit
	for range 20 {
		hits = append(hits, randomHit(rng))
	}
	f.Add(writeAll(f, []written{{kind: KindHeader, payload: "{}"}, {kind: KindHits, hits: hits}}))
	f.Add([]byte(Magic + "\x01c\x05\x00\x00\x00\x00\x00Z"))
	f.Fuzz(func(t *testing.T, data []byte) {
		readAll(data)
		var d HitDecoder
		d.Decode(data, func(*Hit) error { return nil })
	})
}

// BenchmarkDecode measures decoding hit blocks.
func BenchmarkDecode(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	var hits []Hit
	for range 100_000 {
		h := randomHit(rng)
		h.Target = "/page/" + fmt.Sprint(rng.IntN(1_000_000))
		hits = append(hits, h)
	}
	data := writeAll(b, []written{{kind: KindHits, hits: hits}})
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		r, _ := NewReader(bytes.NewReader(data))
		var d HitDecoder
		for {
			_, p, err := r.Next()
			if err != nil {
				break
			}
			d.Decode(p, func(*Hit) error { return nil })
		}
	}
	b.ReportMetric(float64(len(hits))*float64(b.N)/b.Elapsed().Seconds(), "hits/s")
}
