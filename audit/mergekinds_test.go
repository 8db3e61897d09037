package audit

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/interrupt"
)

// TestMergeErrorKinds: each way a merge can fail ends the run as its
// kind says: a snapshot that cannot be merged and an opt-out that does
// not fit are usage errors, other failures inputs not read whole.
func TestMergeErrorKinds(t *testing.T) {
	sound, _ := soundSnapshot(t)
	file := func(name string, b []byte) SnapshotFile {
		return SnapshotFile{Name: name, Open: func() (io.ReadSeekCloser, error) { return readSeekNopCloser{bytes.NewReader(b)}, nil }}
	}
	optOuts := func(err error) func([]*crawler.Profile) (map[string]conduct.OptOuts, error) {
		return func([]*crawler.Profile) (map[string]conduct.OptOuts, error) { return nil, err }
	}
	rep, err := MergeOptions{Snapshots: []SnapshotFile{file("web1.snap", sound)}}.Merge(context.Background())
	if rep == nil || err != nil {
		t.Fatalf("a sound snapshot: %v, %v", rep, err)
	}
	for _, tc := range []struct {
		name string
		mo   MergeOptions
		kind fail.Kind
		msg  string
	}{
		{"not a snapshot", MergeOptions{Snapshots: []SnapshotFile{file("web1.snap", sound), file("notes.txt", []byte("hello\n"))}},
			fail.Usage, "cannot merge snapshot notes.txt: "},
		{"an opt-out that does not fit", MergeOptions{Snapshots: []SnapshotFile{file("web1.snap", sound)}, OptOuts: optOuts(fail.Usagef("--opted-out x"))},
			fail.Usage, "--opted-out x"},
		{"another failure", MergeOptions{Snapshots: []SnapshotFile{file("web1.snap", sound)}, OptOuts: optOuts(errors.New("broken"))},
			fail.Incomplete, "broken"},
	} {
		rep, err := tc.mo.Merge(context.Background())
		if rep != nil || fail.KindOf(err) != tc.kind || !strings.HasPrefix(err.Error(), tc.msg) {
			t.Errorf("%s: %v, %v (kind %v), want no report and %q (kind %v)", tc.name, rep, err, fail.KindOf(err), tc.msg, tc.kind)
		}
	}
	var se *SnapshotError
	if _, err := (MergeOptions{Snapshots: []SnapshotFile{file("notes.txt", []byte("hello\n"))}}).Merge(context.Background()); !errors.As(err, &se) {
		t.Errorf("not a snapshot: %v, want a *SnapshotError within", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if rep, err := (MergeOptions{Snapshots: []SnapshotFile{file("web1.snap", sound)}}).Merge(ctx); rep != nil || !errors.Is(err, interrupt.ErrInterrupted) {
		t.Errorf("cancelled: %v, %v, want interrupt.ErrInterrupted", rep, err)
	}
}
