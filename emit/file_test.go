package emit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

func TestSameIgnoringGenerated(t *testing.T) {
	cases := []struct {
		name     string
		old, cur string
		want     bool
	}{
		{"identical", "a\n# generated 2026-12-01T03:00:00Z\nb\n", "a\n# generated 2026-12-01T03:00:00Z\nb\n", true},
		{"only the time differs", "a\n# generated 2026-12-01T03:00:00Z\nb\n", "a\n# generated 2026-12-02T03:00:05Z\nb\n", true},
		{"json description", `{"description": "x, generated 2026-12-01T03:00:00Z; y"}`, `{"description": "x, generated 2027-01-01T00:00:00Z; y"}`, true},
		{"unknown time", "# generated unknown\n", "# generated 2026-12-01T03:00:00Z\n", true},
		{"an address changed", "# generated 2026-12-01T03:00:00Z\n203.0.113.7\n", "# generated 2026-12-02T03:00:00Z\n203.0.113.8\n", false},
		{"the marker is gone", "# generated 2026-12-01T03:00:00Z\nx\n", "#\nx\n", false},
		{"empty old file", "", "# generated 2026-12-01T03:00:00Z\n", false},
	}
	for _, c := range cases {
		if got := SameIgnoringGenerated([]byte(c.old), []byte(c.cur)); got != c.want {
			t.Errorf("%s: SameIgnoringGenerated = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestWriteFile: a new file is written; the same rules but for the time
// in their header leave it as it is; other rules replace it; a path that
// cannot be written leaves the old file and says so; a cancelled run
// gives the context's error.
func TestWriteFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "lohibot.nft")
	first := []byte("# generated 2026-12-01T03:00:00Z\n203.0.113.7\n")
	if changed, err := WriteFile(ctx, path, first); !changed || err != nil {
		t.Fatalf("a new file: changed %v, %v", changed, err)
	}
	if changed, err := WriteFile(ctx, path, []byte("# generated 2026-12-02T03:00:00Z\n203.0.113.7\n")); changed || err != nil {
		t.Errorf("only the time differs: changed %v, %v", changed, err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, first) {
		t.Errorf("an unchanged file was written: %q", got)
	}
	next := []byte("# generated 2026-12-02T03:00:00Z\n203.0.113.8\n")
	if changed, err := WriteFile(ctx, path, next); !changed || err != nil {
		t.Errorf("new rules: changed %v, %v", changed, err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, next) {
		t.Errorf("file holds %q, want %q", got, next)
	}

	missing := filepath.Join(t.TempDir(), "no-dir", "lohibot.nft")
	_, err := WriteFile(ctx, missing, next)
	if fail.KindOf(err) != fail.Unwritten || err.Error() != "cannot write the rules to "+missing+": no such file or directory" ||
		fail.HintOf(err) != "check that the directory exists, is writable and has room; the old file, if any, is as it was" {
		t.Errorf("no directory: %v (kind %d, hint %q)", err, fail.KindOf(err), fail.HintOf(err))
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := WriteFile(cancelled, path, []byte("# generated 2026-12-03T03:00:00Z\n198.51.100.1\n")); err != context.Canceled {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, next) {
		t.Errorf("a cancelled write changed the file: %q", got)
	}
}
