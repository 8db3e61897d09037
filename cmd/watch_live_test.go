package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/dnstest"
)

// liveWatch is a watch command running in the test, with its signals
// injected.
type liveWatch struct {
	t              *testing.T
	stdout, stderr *syncBuffer
	hup, usr1      chan os.Signal
	cancel         context.CancelFunc
	done           chan int
	log            string
}

// startWatch runs watch with args (the followed log is added at the end,
// read from its start), env's Stdout when set, and injected SIGHUP and
// SIGUSR1.
func startWatch(t *testing.T, env *Env, log string, args ...string) *liveWatch {
	t.Helper()
	w := &liveWatch{t: t, stdout: &syncBuffer{}, stderr: &syncBuffer{}, hup: make(chan os.Signal, 1),
		usr1: make(chan os.Signal, 1), done: make(chan int, 1), log: log}
	if env.Stdout == nil {
		env.Stdout = w.stdout
	}
	env.Stderr = w.stderr
	if env.Now == nil {
		env.Now = time.Now
	}
	watchSignals = func() (<-chan os.Signal, <-chan os.Signal, func()) { return w.hup, w.usr1, func() {} }
	t.Cleanup(func() { watchSignals = nil })
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	t.Cleanup(cancel)
	args = append(append([]string{"watch", "--from-start", "--no-cache", "--site", "www.example"}, args...), log)
	go func() { w.done <- Run(ctx, env, args) }()
	return w
}

// write appends lines to the followed log.
func (w *liveWatch) write(lines ...string) {
	w.t.Helper()
	f, err := os.OpenFile(w.log, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		w.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "")); err != nil {
		w.t.Fatal(err)
	}
}

// waitOut waits until stdout holds s; waitErr until stderr does.
func (w *liveWatch) waitOut(s string) {
	w.t.Helper()
	waitFor(w.t, w.done, w.stderr, func() bool { return strings.Contains(w.stdout.String(), s) })
}

func (w *liveWatch) waitErr(s string) {
	w.t.Helper()
	waitFor(w.t, w.done, w.stderr, func() bool { return strings.Contains(w.stderr.String(), s) })
}

// reload sends SIGHUP and waits until the reload is done.
func (w *liveWatch) reload() {
	w.t.Helper()
	n := strings.Count(w.stderr.String(), "reloaded")
	w.hup <- syscall.SIGHUP
	waitFor(w.t, w.done, w.stderr, func() bool { return strings.Count(w.stderr.String(), "reloaded") > n })
}

// stop cancels the run (SIGTERM) and returns its exit code.
func (w *liveWatch) stop() int {
	w.t.Helper()
	w.cancel()
	select {
	case code := <-w.done:
		return code
	case <-time.After(watchHang):
		w.t.Fatal("watch did not stop")
		return -1
	}
}

// failingWriter fails every write with ENOSPC while full is set, and
// counts the writes tried.
type failingWriter struct {
	mu    sync.Mutex
	full  bool
	tries int
	b     bytes.Buffer
}

func (f *failingWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tries++
	if f.full {
		return 0, syscall.ENOSPC
	}
	return f.b.Write(p)
}

func (f *failingWriter) set(full bool) {
	f.mu.Lock()
	f.full = full
	f.mu.Unlock()
}

func (f *failingWriter) state() (tries int, out string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tries, f.b.String()
}

// watchFixture is a loopback DNS server where 192.0.2.10 is the genuine
// crawler and other addresses have no PTR, an IP list file, and an empty
// log.
func watchFixture(t *testing.T) (srv, list, log string) {
	t.Helper()
	z := dnstest.NewZone(t,
		"10.2.0.192.in-addr.arpa. 300 IN PTR crawler-1.bot.lohisoft.com.",
		"crawler-1.bot.lohisoft.com. 300 IN A 192.0.2.10",
	)
	srv = dnstest.Serve(t, z)
	dir := t.TempDir()
	list = filepath.Join(dir, "ips.json")
	if err := os.WriteFile(list, []byte(`{"ips":["79.139.58.98"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	log = filepath.Join(dir, "access.log")
	if err := os.WriteFile(log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return srv, list, log
}

const claimUA = "Mozilla/5.0 (compatible; LohiSoftBot/1.0)"

// Events that cannot be written (a full disk) are said once and waited
// out; writing resumes when it can, and SIGTERM still ends watch with 0.
func TestWatchFullDiskForEventsIsNotFatal(t *testing.T) {
	srv, list, log := watchFixture(t)
	out := &failingWriter{full: true}
	w := startWatch(t, &Env{Stdout: out}, log, "--resolver", srv, "--ip-list", list)
	w.write(watchLine("203.0.113.7", claimUA), watchLine("203.0.113.8", claimUA))
	waitFor(t, w.done, w.stderr, func() bool { tries, _ := out.state(); return tries >= 2 })
	w.waitErr("cannot write events")
	out.set(false)
	w.write(watchLine("203.0.113.9", claimUA))
	waitFor(t, w.done, w.stderr, func() bool { _, s := out.state(); return strings.Contains(s, `"ip":"203.0.113.9"`) })
	w.waitErr("events are written again")
	if code := w.stop(); code != 0 {
		t.Fatalf("exit %d after SIGTERM, want 0; stderr:\n%s", code, w.stderr.String())
	}
	if n := strings.Count(w.stderr.String(), "cannot write events"); n != 1 {
		t.Errorf("the full disk was said %d times, want once; stderr:\n%s", n, w.stderr.String())
	}
	if _, s := out.state(); strings.Contains(s, "203.0.113.7") || strings.Contains(s, "203.0.113.8") {
		t.Errorf("events written while the disk was full:\n%s", s)
	}
}
