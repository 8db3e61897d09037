package atomicfile

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

	"github.com/lohisoft/lohibot-audit/internal/interrupt"
)

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// sameButFirstLine is a same function that ignores the first line, as
// emit ignores its "generated" marker.
func sameButFirstLine(old, cur []byte) bool {
	_, o, _ := bytes.Cut(old, []byte("\n"))
	_, c, _ := bytes.Cut(cur, []byte("\n"))
	return bytes.Equal(o, c)
}

func write(path string, data []byte, mode fs.FileMode, same func(old, cur []byte) bool) (bool, error) {
	return Write(context.Background(), path, data, mode, same)
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lohibot.nft")
	v1 := []byte("# generated 2026-12-01T03:00:00Z\n203.0.113.7\n")
	v1later := []byte("# generated 2026-12-02T03:00:00Z\n203.0.113.7\n")
	v2 := []byte("# generated 2026-12-03T03:00:00Z\n203.0.113.8\n")

	changed, err := write(path, v1, 0o644, sameButFirstLine)
	if err != nil || !changed {
		t.Fatalf("first write: changed=%v err=%v", changed, err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, v1) {
		t.Fatalf("file holds %q", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", fi.Mode().Perm())
	}

	// The same content by same's judgement: the file, its inode and
	// mtime stay.
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	ino := inode(t, path)
	changed, err = write(path, v1later, 0o644, sameButFirstLine)
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

	// New content: a new file (new inode) with the old permissions, not
	// the mode for new files.
	changed, err = write(path, v2, 0o644, sameButFirstLine)
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

	// bytes.Equal keeps a byte-identical file; nil same always writes.
	changed, err = write(path, v2, 0o644, bytes.Equal)
	if err != nil || changed {
		t.Errorf("byte-identical write: changed=%v err=%v", changed, err)
	}
	ino = inode(t, path)
	changed, err = write(path, v2, 0o644, nil)
	if err != nil || !changed || inode(t, path) == ino {
		t.Errorf("write with nil same: changed=%v err=%v, new inode %v", changed, err, inode(t, path) != ino)
	}
	assertNoTemp(t, dir)
}

// A new file gets the mode asked for: 0600 for a cache.
func TestWriteNewFileMode(t *testing.T) {
	dir := t.TempDir()
	for _, mode := range []fs.FileMode{0o600, 0o644} {
		path := filepath.Join(dir, mode.String())
		if _, err := write(path, []byte("x"), mode, nil); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != mode {
			t.Errorf("new file with mode %v: %v, %v", mode, fi.Mode().Perm(), err)
		}
	}
}

func TestWriteSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.conf")
	link := filepath.Join(dir, "link.conf")
	if err := os.WriteFile(target, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := write(link, []byte("new\n"), 0o644, nil); err != nil {
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

func TestWriteErrors(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"missing directory": filepath.Join(dir, "nope", "x.nft"),
		"a directory":       dir,
		"no name":           "",
	}
	for name, path := range cases {
		if _, err := write(path, []byte("x"), 0o644, nil); err == nil {
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
		if _, err := write(filepath.Join(ro, "x.nft"), []byte("x"), 0o644, nil); err == nil {
			t.Errorf("read-only directory: no error")
		}
	}
	assertNoTemp(t, dir)
}

// A failed write leaves the target as it was: here the temporary file's
// name is too long for the file system, so it cannot be made.
func TestWriteFailureLeavesTarget(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, strings.Repeat("n", 250))
	if err := os.WriteFile(long, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if changed, err := write(long, []byte("new\n"), 0o644, nil); err == nil || changed {
		t.Fatalf("changed %v, err %v; want an error (the temporary name is too long)", changed, err)
	}
	if got, _ := os.ReadFile(long); string(got) != "old\n" {
		t.Errorf("the file holds %q after a failed write", got)
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

// TestWriteCancelled checks that a cancelled write leaves the old file and
// no temporary file.
func TestWriteCancelled(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.nft")
	if err := os.WriteFile(path, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	changed, err := Write(ctx, path, []byte("new\n"), 0o644, nil)
	if changed || !errors.Is(err, context.Canceled) {
		t.Errorf("changed %v, err %v; want false and context.Canceled", changed, err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old\n" {
		t.Errorf("the file holds %q, want the old content", got)
	}
	assertNoTemp(t, dir)
}

// TestWriteDevice checks that a device is written directly: /dev/null
// takes it, /dev/full says the disk is full.
func TestWriteDevice(t *testing.T) {
	if changed, err := write("/dev/null", []byte("x\n"), 0o644, nil); err != nil || !changed {
		t.Errorf("/dev/null: changed %v, err %v", changed, err)
	}
	_, err := write("/dev/full", []byte("x\n"), 0o644, nil)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("/dev/full: err %v, want ENOSPC", err)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		t.Errorf("/dev/full: err %v does not wrap a *fs.PathError", err)
	}
}

// TestRemoveTemp checks that only this process's temporary files for the
// path go.
func TestRemoveTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a[1].nft")
	mine := filepath.Join(dir, tempPrefix("a[1].nft")+"123")
	other := filepath.Join(dir, ".a[1].nft.tmp-1-456") // another process's
	for _, p := range []string{path, mine, other} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	RemoveTemp(path)
	for p, want := range map[string]bool{path: true, mine: false, other: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}

// TestRemoveTempOnForcedExit checks that a forced exit removes the
// temporary file of a registered path, and that of no longer registered
// path stays.
func TestRemoveTempOnForcedExit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.nft")
	tmp := filepath.Join(dir, tempPrefix("rules.nft")+"1")
	stuck := make(chan struct{})
	defer close(stuck)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	forcedExit := func() {
		t.Helper()
		if _, forced := interrupt.Wait(ctx, 0, func() int { <-stuck; return 0 }); !forced {
			t.Fatal("Wait did not force the exit of a stuck run")
		}
	}
	for _, registered := range []bool{true, false} {
		if err := os.WriteFile(tmp, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		unregister := RemoveTempOnForcedExit(path)
		if !registered {
			unregister()
		}
		forcedExit()
		unregister()
		if _, err := os.Stat(tmp); (err == nil) != !registered {
			t.Errorf("registered %v: temporary file exists %v after a forced exit", registered, err == nil)
		}
	}
}
