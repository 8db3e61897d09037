package logfiles

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// hangTimeout bounds a wait that only a hang would reach.
const hangTimeout = time.Minute

// A file a pattern matched that is rotated away before it is read reads
// as empty, with a warning; a concrete name that vanishes stays an input
// that could not be read.
func TestPatternFileGoneBeforeRead(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFile(t, filepath.Join(dir, "access.log.1"), "line\n")
	testutil.WriteFile(t, filepath.Join(dir, "access.log"), "line\n")
	in, err := Expand([]string{filepath.Join(dir, "access.log"), filepath.Join(dir, "access.log.*")})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Files) != 2 {
		t.Fatalf("files %q, want access.log and access.log.1", in.Files)
	}
	for _, f := range in.Files {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	r, _, err := in.Opener(filepath.Join(dir, "access.log.1"))(context.Background())
	if err != nil {
		t.Fatalf("opening the rotated-away file: %v, want an empty read", err)
	}
	if b, _ := io.ReadAll(r); len(b) != 0 {
		t.Errorf("read %q, want nothing", b)
	}
	if w := in.Warnings(); len(w) != 1 || !strings.Contains(w[0], "access.log.1, matched by a pattern, was gone") {
		t.Errorf("warnings %q do not say the file was gone", in.Warnings())
	}
	if _, _, err := in.Opener(filepath.Join(dir, "access.log"))(context.Background()); err == nil {
		t.Error("a named file that vanished opened without error")
	}
}

// TestOpenFIFO checks that opening a named pipe nobody writes to
// gives up when the run is cancelled, instead of waiting for a writer.
func TestOpenFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "access.log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		f, err := Open(ctx, fifo)
		if f != nil {
			f.Close()
		}
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Open = %v, want context.Canceled", err)
		}
	case <-time.After(hangTimeout):
		t.Fatal("Open of a FIFO without a writer did not give up when cancelled")
	}
	// The open left waiting ends once a writer comes.
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
}
