package audit

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/fail"
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

// TestSnapshotTarget: the --snapshot and --server-name rules, and the
// snapshot of a target that can be written.
func TestSnapshotTarget(t *testing.T) {
	dir := t.TempDir()
	host := func() (string, error) { return "web1", nil }
	noHost := func() (string, error) { return "", errors.New("no name") }
	for _, tc := range []struct {
		name   string
		target SnapshotTarget
		kind   fail.Kind
		msg    string
	}{
		{"none", SnapshotTarget{Hostname: host}, fail.Other, ""},
		{"a server name alone", SnapshotTarget{ServerName: "web1", Hostname: host}, fail.Usage,
			"--server-name names the server in a --snapshot: give --snapshot FILE too"},
		{"standard output", SnapshotTarget{Path: "-", Hostname: host}, fail.Usage,
			"--snapshot -: give a file name (standard output carries the report)"},
		{"no host name", SnapshotTarget{Path: filepath.Join(dir, "a.snap"), Hostname: noHost}, fail.Usage,
			"cannot tell this host's name for the --snapshot (no name): give --server-name NAME"},
		{"a missing directory", SnapshotTarget{Path: filepath.Join(dir, "no", "b.snap"), Hostname: host}, fail.Unwritten,
			"cannot write the snapshot " + filepath.Join(dir, "no", "b.snap") + ": no such file or directory"},
	} {
		p, err := tc.target.Start()
		if p != nil || fail.KindOf(err) != tc.kind || (err == nil) != (tc.msg == "") || (err != nil && err.Error() != tc.msg) {
			t.Errorf("%s: %v, %v (kind %v), want no snapshot and %q (kind %v)", tc.name, p, err, fail.KindOf(err), tc.msg, tc.kind)
		}
	}
	var none *PendingSnapshot
	none.Abort()
	if err := none.Commit(context.Background()); err != nil {
		t.Errorf("no snapshot: Commit %v", err)
	}

	path := filepath.Join(dir, "c.snap")
	p, err := SnapshotTarget{Path: path, Hostname: host, ToolVersion: "v-test", TrustedProxies: []string{"cloudflare"}, TrustXFF: true}.Start()
	if err != nil {
		t.Fatal(err)
	}
	if p.Server != "web1" || p.ToolVersion != "v-test" || !p.TrustXFF || len(p.TrustedProxies) != 1 || p.undo == nil {
		t.Errorf("started %+v, want the target's fields and a forced-exit cleanup", p.SnapshotWriter)
	}
	if err := p.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("committed: %v", err)
	}
}
