package audit

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/snapfile"
	"github.com/lohisoft/lohibot-audit/parse"
)

// A snapshot comes from another host, and its checksum guards against
// damage, not against whoever wrote it: whatever its frames hold under a
// checksum that matches, a merge of it (beside a sound one) gives a
// report or an error, never a panic or a hang.

// hostileSnapshotLog is the log of the sound snapshot: the crawler from
// its address and from others, a remote user, a malformed line.
const hostileSnapshotLog = `www.example.org:443 79.139.58.98 - - [01/Dec/2026:06:25:01 +0000] "GET /robots.txt HTTP/1.1" 200 5 "-" "LohiSoftBot/1.0"
www.example.org:443 79.139.58.98 - bob [01/Dec/2026:06:25:02 +0000] "GET /a HTTP/1.1" 503 5 "-" "LohiSoftBot/1.0"
www.example.org:443 203.0.113.7 - - [01/Dec/2026:06:25:02 +0000] "GET /a HTTP/1.1" 200 5 "-" "LohiSoftBot/1.0"
b.example:80 2001:db8::5 - - [01/Dec/2026:06:26:02 +0000] "GET /b?x=1 HTTP/1.1" 404 5 "-" "Mozilla/5.0 (compatible; LohiSoftBot/1.1)"
not a log line LohiSoftBot
`

// soundSnapshot is the snapshot of a run over hostileSnapshotLog, and its
// frames as framedInput reads them.
func soundSnapshot(t testing.TB) (snap, frames []byte) {
	t.Helper()
	var b bytes.Buffer
	sw := NewSnapshotWriter(&b)
	sw.Server = "web1"
	p, ok := crawler.Builtin("lohisoftbot")
	if !ok {
		t.Fatal("no built-in crawler lohisoftbot")
	}
	o := Options{Inputs: []Input{textInput("x.log", hostileSnapshotLog)}, Format: parse.VhostCombined,
		Snapshot: sw, Subjects: []Subject{{Profile: p}}}
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := snapfile.NewReader(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for {
		kind, p, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, kind)
		frames = binary.AppendUvarint(frames, uint64(len(p)))
		frames = append(frames, p...)
	}
	if !bytes.Contains(frames, []byte("www.example.org")) {
		t.Fatal("the sound snapshot holds no hits")
	}
	return b.Bytes(), frames
}

// framedInput writes data as a snapshot's frames (a kind byte, a uvarint
// length and the payload, in turn; what is left when that no longer
// reads is dropped) under a checksum that matches.
func framedInput(t testing.TB, data []byte) []byte {
	var b bytes.Buffer
	w := snapfile.NewWriter(&b)
	for len(data) > 0 {
		n, k := binary.Uvarint(data[1:])
		if k <= 0 || n > uint64(len(data)-1-k) {
			break
		}
		w.Frame(data[0], data[1+k:1+k+int(n)])
		data = data[1+k+int(n):]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type readSeekNopCloser struct{ *bytes.Reader }

func (readSeekNopCloser) Close() error { return nil }

// mergeHostile merges the snapshot of data's frames with the sound one.
func mergeHostile(t testing.TB, data, sound []byte) {
	t.Helper()
	file := func(name string, b []byte) SnapshotFile {
		return SnapshotFile{Name: name, Open: func() (io.ReadSeekCloser, error) { return readSeekNopCloser{bytes.NewReader(b)}, nil }}
	}
	rep, err := MergeSnapshots(context.Background(), MergeOptions{
		Snapshots: []SnapshotFile{file("hostile.snap", framedInput(t, data)), file("sound.snap", sound)}})
	switch {
	case rep == nil && err == nil:
		t.Fatalf("neither a report nor an error for frames %q", data)
	case err != nil && strings.TrimSpace(err.Error()) == "":
		t.Fatalf("an error that says nothing for frames %q", data)
	}
}

// TestMergeHostileFrames changes the sound snapshot's frames at random
// (bytes changed, cut, repeated) under a checksum that matches.
func TestMergeHostileFrames(t *testing.T) {
	sound, frames := soundSnapshot(t)
	mergeHostile(t, frames, sound)
	rng := rand.New(rand.NewPCG(7, 8))
	for range 500 {
		data := bytes.Clone(frames)
		for range 1 + rng.IntN(4) {
			switch i := rng.IntN(len(data)); rng.IntN(4) {
			case 0:
				data = data[:i]
			case 1:
				data = append(data[:i:i], append(bytes.Clone(data[i:min(len(data), i+rng.IntN(64))]), data[i:]...)...)
			default:
				data[i] = byte(rng.IntN(256))
			}
			if len(data) == 0 {
				break
			}
		}
		mergeHostile(t, data, sound)
	}
}

// FuzzMergeSnapshots is TestMergeHostileFrames for the fuzzer.
func FuzzMergeSnapshots(f *testing.F) {
	sound, frames := soundSnapshot(f)
	f.Add(frames)
	f.Fuzz(func(t *testing.T, data []byte) { mergeHostile(t, data, sound) })
}
