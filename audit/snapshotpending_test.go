package audit

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestPendingSnapshot: a snapshot file is in place once committed, never
// before, and not at all when aborted or cancelled; a file that cannot be
// made is an error before anything is read.
func TestPendingSnapshot(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "web1.snap")
	entries := func() int {
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	p, err := CreateSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	p.Server, p.ToolVersion = "web1", "v-test"
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the snapshot is in place before its commit: %v", err)
	}
	if err := p.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() == 0 || entries() != 1 {
		t.Fatalf("after the commit: %v, %d files", err, entries())
	}

	p, err = CreateSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	p.Abort()
	if fi2, err := os.Stat(path); err != nil || !os.SameFile(fi, fi2) || entries() != 1 {
		t.Errorf("an aborted snapshot replaced the last one or left a file: %v, %d files", err, entries())
	}

	gone := filepath.Join(dir, "cancelled.snap")
	p, err = CreateSnapshot(gone)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Commit(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled commit: %v, want context.Canceled", err)
	}
	if entries() != 1 {
		t.Errorf("a cancelled commit left %d files, want the first snapshot only", entries())
	}

	var pe *fs.PathError
	if _, err := CreateSnapshot(filepath.Join(dir, "no", "such.snap")); !errors.As(err, &pe) {
		t.Errorf("a snapshot in a missing directory: %v, want a path error", err)
	}
}
