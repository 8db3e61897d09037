package watchstate

import (
	"bufio"
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// TestStatusOf: the running watch's status, else the one its state keeps,
// each with when it was taken. No watch and no state, a state that does
// not read and an answer without a status are fail.Incomplete; a request
// the watch refuses is fail.Usage.
func TestStatusOf(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	check := func(what string, err error, prefix string, kind fail.Kind) {
		t.Helper()
		if err == nil || !strings.HasPrefix(err.Error(), prefix) || fail.KindOf(err) != kind {
			t.Errorf("%s: %v (kind %d), want %q… of kind %d", what, err, fail.KindOf(err), prefix, kind)
		}
	}

	_, _, err := StatusOf(ctx, dir, now)
	check("no watch, no state", err, "no watch runs with state directory "+dir+", and none left a state there", fail.Incomplete)
	if h := fail.HintOf(err); !strings.Contains(h, "--state-dir") {
		t.Errorf("hint %q, want one naming --state-dir", h)
	}

	if err := os.WriteFile(Path(dir), []byte("not a state\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = StatusOf(ctx, dir, now)
	check("a state that does not read", err, "no watch runs with state directory "+dir+", and its state cannot be read: ", fail.Incomplete)

	written := now.Add(-time.Hour)
	if err := Write(ctx, dir, &State{Written: written, PID: 42, Status: &Status{Running: true, PID: 42}}); err != nil {
		t.Fatal(err)
	}
	s, at, err := StatusOf(ctx, dir, now)
	if err != nil || s.Running || s.PID != 42 || !at.Equal(written) {
		t.Errorf("stopped watch: %+v at %v, %v; want pid 42 not running, at %v", s, at, err, written)
	}

	serve(t, dir, &handler{})
	s, at, err = StatusOf(ctx, dir, now)
	if err != nil || s.PID != 7 || !at.Equal(s.At) {
		t.Errorf("running watch: %+v at %v, %v; want pid 7 at its status's time", s, at, err)
	}
	_, err = Ask(ctx, dir, Request{Op: "bogus"})
	check("a refused request", err, `the running watch refuses: unknown request "bogus"`, fail.Usage)

	// Something else on the socket answers without a status.
	other := t.TempDir()
	ln, err := net.Listen("unix", SocketPath(other))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		bufio.NewReader(c).ReadBytes('\n')
		c.Write([]byte("{}\n"))
	}()
	_, _, err = StatusOf(ctx, other, now)
	check("an answer without a status", err, "the watch on "+SocketPath(other)+" answered without its status", fail.Incomplete)
}
