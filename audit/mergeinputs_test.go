package audit

import (
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func TestSnapshotFiles(t *testing.T) {
	dir := t.TempDir()
	here := filepath.Join(dir, "web1.snap")
	if err := os.WriteFile(here, []byte("snapshot"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := SnapshotFiles([]string{here, filepath.Join(dir, "gone.snap")})
	if len(files) != 2 || files[0].Name != here {
		t.Fatalf("files %+v", files)
	}
	f, err := files[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "snapshot" {
		t.Errorf("read %q", b)
	}
	if _, err := files[1].Open(); err == nil || err.Error() != "no such file or directory" {
		t.Errorf("a missing snapshot: %v, want the cause without the path", err)
	}
}

func TestMergeMemory(t *testing.T) {
	gc := func() int { v := debug.SetGCPercent(100); debug.SetGCPercent(v); return v }
	before := gc()
	restore := MergeMemory("")
	if got := gc(); got != MergeGCPercent {
		t.Errorf("GOGC during a merge: %d, want %d", got, MergeGCPercent)
	}
	restore()
	if got := gc(); got != before {
		t.Errorf("GOGC after: %d, want %d", got, before)
	}
	MergeMemory("200")()
	if got := gc(); got != before {
		t.Errorf("with GOGC set: %d, want it left at %d", got, before)
	}
}
