//go:build unix

package watch

import (
	"context"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// groupAlive returns the processes of group pgid that have not exited
// (zombies waiting to be reaped have).
func groupAlive(t *testing.T, pgid int) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var alive []string
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue // exited meanwhile
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			alive = append(alive, d+": "+s)
		}
	}
	return alive
}

// A command's children end with it: those of a command that ignores
// SIGTERM and times out, and those a command leaves behind when it exits.
// Each process of the group holds the write end of a FIFO and says so on
// it; the test reads it to the end, which comes when every one of them
// has exited.
func TestExecEndsTheWholeGroup(t *testing.T) {
	for _, tt := range []struct {
		name    string
		body    string
		timeout time.Duration
		wantErr string
		kids    int
	}{
		// Children of a command that ignores SIGTERM ignore it from their
		// start; each says it started, and is waited for ("ack"), before
		// the next one starts.
		{"ignores TERM and times out", `trap '' TERM
for i in 1 2 3 4 5 6 7 8; do
	sh -c 'echo child >&3; echo >"$0"; exec sleep 1000' "$D/ack" &
	read _ < "$D/ack"
done
sleep 1000 &
echo child >&3
wait`, 500 * time.Millisecond, "timed out", 9},
		{"exits and leaves children", `sh -c 'trap "" TERM; echo child >&3; echo >"$0"; exec sleep 1000' "$D/ack" &
read _ < "$D/ack"
sleep 1000 &
echo child >&3
exit 0`, time.Minute, "", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			script := filepath.Join(dir, "cmd")
			if err := syscall.Mkfifo(filepath.Join(dir, "ack"), 0o600); err != nil {
				t.Fatal(err)
			}
			body := "#!/bin/sh\nD=" + dir + "\necho $$ > $D/pgid\nexec 3>" + fifo + "\n" + tt.body + "\n"
			if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			// The reader: counts the children's lines until every writer
			// has closed the FIFO.
			lines := make(chan int, 1)
			go func() {
				f, err := os.Open(fifo)
				if err != nil {
					lines <- -1
					return
				}
				defer f.Close()
				b, _ := io.ReadAll(f)
				lines <- strings.Count(string(b), "child\n")
			}()
			done := make(chan error, 1)
			x := &Exec{Argv: []string{script}, Timeout: tt.timeout, OnDone: func(_ []string, err error) { done <- err }}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go x.Run(ctx)
			x.Queue(netip.MustParseAddr("203.0.113.9"), "lohisoftbot", "no-ptr")
			var err error
			select {
			case err = <-done:
			case <-time.After(hang):
				t.Fatal("the command was never ended (hang)")
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("command error %v, want %q", err, tt.wantErr)
			}
			select {
			case n := <-lines:
				// At the timeout, a machine too busy to start every child
				// in time has started fewer.
				if n != tt.kids && (tt.wantErr == "" || n < 1) {
					t.Errorf("%d children said they started, want %d", n, tt.kids)
				}
			case <-time.After(hang):
				t.Fatal("a process of the group still holds the FIFO (hang)")
			}
			b, err := os.ReadFile(filepath.Join(dir, "pgid"))
			if err != nil {
				t.Fatal(err)
			}
			pgid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			if alive := groupAlive(t, pgid); len(alive) > 0 {
				t.Errorf("processes of group %d left running:\n%s", pgid, strings.Join(alive, "\n"))
			}
		})
	}
}
