package emit

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lohibot.nft")
	v1 := []byte("# generated 2026-12-01T03:00:00Z\n203.0.113.7\n")
	v1later := []byte("# generated 2026-12-02T03:00:00Z\n203.0.113.7\n")
	v2 := []byte("# generated 2026-12-03T03:00:00Z\n203.0.113.8\n")

	changed, err := WriteFileAtomic(path, v1, SameIgnoringGenerated)
	if err != nil || !changed {
		t.Fatalf("first write: changed=%v err=%v", changed, err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, v1) {
		t.Fatalf("file holds %q", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", fi.Mode().Perm())
	}

	// The same rules a day later: the file, its inode and mtime stay.
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	ino := inode(t, path)
	changed, err = WriteFileAtomic(path, v1later, SameIgnoringGenerated)
	if err != nil || changed {
		t.Fatalf("unchanged write: changed=%v err=%v", changed, err)
	}
	fi, _ := os.Stat(path)
	if !fi.ModTime().Equal(old) || inode(t, path) != ino {
		t.Errorf("an unchanged write touched the file")
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, v1) {
		t.Errorf("an unchanged write rewrote the file: %q", got)
	}

	// New rules: a new file (new inode) with the old permissions.
	changed, err = WriteFileAtomic(path, v2, SameIgnoringGenerated)
	if err != nil || !changed {
		t.Fatalf("changed write: changed=%v err=%v", changed, err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, v2) {
		t.Errorf("file holds %q", got)
	}
	if inode(t, path) == ino {
		t.Errorf("the file was rewritten in place, not renamed over")
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the old 0600", fi.Mode().Perm())
	}

	// nil same compares byte for byte.
	changed, err = WriteFileAtomic(path, v2, nil)
	if err != nil || changed {
		t.Errorf("byte-identical write: changed=%v err=%v", changed, err)
	}
	changed, err = WriteFileAtomic(path, v1later, nil)
	if err != nil || !changed {
		t.Errorf("write with nil same: changed=%v err=%v", changed, err)
	}
	assertNoTemp(t, dir)
}

func TestWriteFileAtomicSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.conf")
	link := filepath.Join(dir, "link.conf")
	if err := os.WriteFile(target, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteFileAtomic(link, []byte("new\n"), nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symbolic link was replaced: %v", err)
	}
	if got, _ := os.ReadFile(target); string(got) != "new\n" {
		t.Errorf("target holds %q", got)
	}
	assertNoTemp(t, dir)
}

func TestWriteFileAtomicErrors(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"missing directory": filepath.Join(dir, "nope", "x.nft"),
		"a directory":       dir,
		"no name":           "",
	}
	for name, path := range cases {
		if _, err := WriteFileAtomic(path, []byte("x"), nil); err == nil {
			t.Errorf("%s: no error", name)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error is not one line: %q", name, err)
		}
	}
	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		if _, err := WriteFileAtomic(filepath.Join(ro, "x.nft"), []byte("x"), nil); err == nil {
			t.Errorf("read-only directory: no error")
		}
	}
	assertNoTemp(t, dir)
}

// assertNoTemp fails when a temporary file was left behind in dir.
func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// TestWriteFileAtomicCancelled checks that a cancelled write leaves the
// old file and no temporary file.
func TestWriteFileAtomicCancelled(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.nft")
	if err := os.WriteFile(path, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	changed, err := WriteFileAtomicContext(ctx, path, []byte("new\n"), nil)
	if changed || !errors.Is(err, context.Canceled) {
		t.Errorf("changed %v, err %v; want false and context.Canceled", changed, err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old\n" {
		t.Errorf("the file holds %q, want the old content", got)
	}
	assertNoTemp(t, dir)
}

// TestWriteFileAtomicDevice checks that a device is written directly:
// /dev/null takes it, /dev/full says the disk is full.
func TestWriteFileAtomicDevice(t *testing.T) {
	if changed, err := WriteFileAtomic("/dev/null", []byte("x\n"), nil); err != nil || !changed {
		t.Errorf("/dev/null: changed %v, err %v", changed, err)
	}
	_, err := WriteFileAtomic("/dev/full", []byte("x\n"), nil)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("/dev/full: err %v, want ENOSPC", err)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		t.Errorf("/dev/full: err %v does not wrap a *fs.PathError", err)
	}
}

// TestRemoveTempFiles checks that only this process's temporary files for
// the path go.
func TestRemoveTempFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a[1].nft")
	mine := filepath.Join(dir, tempPrefix("a[1].nft")+"123")
	other := filepath.Join(dir, ".a[1].nft.tmp-1-456") // another process's
	for _, p := range []string{path, mine, other} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	RemoveTempFiles(path)
	for p, want := range map[string]bool{path: true, mine: false, other: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}
