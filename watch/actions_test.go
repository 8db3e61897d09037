package watch

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The command gets ADDRESS CRAWLER REASON as separate arguments, no shell
// sees them, and a command that hangs is killed at its timeout and
// reported, not fatal.
func TestExecRunsCommandWithoutShell(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "args")
	script := filepath.Join(dir, "record")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > "+out+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 4)
	x := &Exec{Argv: []string{script, "set", "jail"}, Timeout: time.Minute, OnDone: func(_ []string, err error) { done <- err }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go x.Run(ctx)
	if err := x.Queue(netip.MustParseAddr("203.0.113.7"), "lohisoftbot", "no-ptr; $(touch pwned)"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	want := "set\njail\n203.0.113.7\nlohisoftbot\nno-ptr; $(touch pwned)\n"
	if string(got) != want {
		t.Fatalf("arguments %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Fatal("a shell ran the reason")
	}

	hang := filepath.Join(dir, "hang")
	if err := os.WriteFile(hang, []byte("#!/bin/sh\nexec sleep 1000\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	slow := &Exec{Argv: []string{hang}, Timeout: 10 * time.Millisecond, OnDone: func(_ []string, err error) { done <- err }}
	go slow.Run(ctx)
	slow.Queue(netip.MustParseAddr("203.0.113.8"), "lohisoftbot", "no-ptr")
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("hanging command: %v, want a timeout", err)
	}
	if s := slow.Stats(); s.Failed != 1 || s.OK != 0 {
		t.Fatalf("stats %+v", s)
	}
}
