package watchstate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/parse"
)

func TestLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", fi.Mode().Perm())
	}
	if runtime.GOOS == "linux" {
		// flock locks belong to an open file: a second one conflicts even
		// within this process.
		_, err := Acquire(dir)
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
			t.Fatalf("second lock: got %v, want ErrLocked naming pid %d", err, os.Getpid())
		}
	}
	l.Release()
	l2, err := Acquire(dir)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	l2.Release()
}

// handler answers with what it was given and records the unblocks asked.
type handler struct {
	mu    sync.Mutex
	asked [][]netip.Addr
	ttl   time.Duration
}

func (h *handler) Status() Status {
	return Status{PID: 7, Files: []FileStatus{{Name: "access.log", Offset: 99, Line: 3}}}
}

func (h *handler) Unblock(ctx context.Context, addrs []netip.Addr, ttl time.Duration) []Unblocked {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asked = append(h.asked, addrs)
	h.ttl = ttl
	out := make([]Unblocked, len(addrs))
	for i, a := range addrs {
		out[i] = Unblocked{Addr: a, Until: now.Add(ttl), NFTables: []string{"spoofed_live_v4"}}
	}
	return out
}

func serve(t *testing.T, dir string, h Handler) {
	t.Helper()
	ln, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { Serve(ctx, ln, h); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func TestControl(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	if _, err := Ask(ctx, dir, Request{Op: OpStatus}); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("no socket: got %v, want ErrNotRunning", err)
	}
	h := &handler{}
	serve(t, dir, h)
	fi, err := os.Stat(SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&fs.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want a socket 0600", fi.Mode())
	}
	resp, err := Ask(ctx, dir, Request{Op: OpStatus})
	if err != nil {
		t.Fatal(err)
	}
	if s := resp.Status; s == nil || !s.Running || s.PID != 7 || s.Files[0].Offset != 99 {
		t.Errorf("status: got %+v", resp.Status)
	}
	resp, err = Ask(ctx, dir, Request{Op: OpUnblock, Addrs: []string{"192.0.2.7", "::ffff:198.51.100.1"}, TTL: 3600})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Unblocked) != 2 || resp.Unblocked[1].Addr != netip.MustParseAddr("198.51.100.1") || h.ttl != time.Hour {
		t.Errorf("unblock: got %+v, ttl %v", resp.Unblocked, h.ttl)
	}
	for _, tt := range []struct {
		req  Request
		want string
	}{
		{Request{Op: OpUnblock, Addrs: []string{"192.0.2.0/24"}, TTL: 60}, "is a range"},
		{Request{Op: OpUnblock, Addrs: []string{"example.com"}, TTL: 60}, "give IP addresses"},
		{Request{Op: OpUnblock, Addrs: []string{"::"}, TTL: 60}, "unspecified"},
		{Request{Op: OpUnblock, Addrs: []string{"192.0.2.1"}, TTL: 0}, "ttl"},
		{Request{Op: "shutdown"}, "unknown request"},
	} {
		if _, err := Ask(ctx, dir, tt.req); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: got %v, want an error with %q", tt.req, err, tt.want)
		}
	}
	if len(h.asked) != 1 {
		t.Errorf("the handler was asked %d times, want once (bad requests never reach it)", len(h.asked))
	}
	// A request that is not JSON gets an error answer, and the server
	// goes on.
	c, err := net.Dial("unix", SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("hello\n"))
	buf := make([]byte, 200)
	n, _ := c.Read(buf)
	c.Close()
	if !strings.Contains(string(buf[:n]), "not a request") {
		t.Errorf("garbage: got %q", buf[:n])
	}
	if _, err := Ask(ctx, dir, Request{Op: OpStatus}); err != nil {
		t.Errorf("after garbage: %v", err)
	}
}

func TestStaleSocket(t *testing.T) {
	dir := t.TempDir()
	// A socket left by a watch that ended: nobody listens.
	ln, err := net.Listen("unix", SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := Ask(context.Background(), dir, Request{Op: OpStatus}); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("stale socket: got %v, want ErrNotRunning", err)
	}
	serve(t, dir, &handler{})
	if _, err := Ask(context.Background(), dir, Request{Op: OpStatus}); err != nil {
		t.Fatalf("after Listen over the stale socket: %v", err)
	}
}

func TestSocketRemovedOnStop(t *testing.T) {
	dir := t.TempDir()
	ln, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { Serve(ctx, ln, &handler{}); close(done) }()
	cancel()
	<-done
	if _, err := os.Stat(SocketPath(dir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket after stop: %v", err)
	}
}

func TestSocketPathTooLong(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(dir); err == nil || !strings.Contains(err.Error(), "--state-dir") {
		t.Errorf("got %v, want an error naming --state-dir", err)
	}
}

func TestParseAddrs(t *testing.T) {
	got, err := ParseAddrs([]string{"192.0.2.1", "2001:DB8::1", "::ffff:10.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Addr{netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("10.0.0.1")}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: got %v, want %v", i, got[i], want[i])
		}
	}
	if _, err := ParseAddrs([]string{"192.0.2.1", "fe80::1%eth0"}); err == nil || !strings.Contains(err.Error(), "zone") {
		t.Errorf("zone: got %v", err)
	}
}

// unblock's arguments: none, a range and what is no address are usage
// errors that say what to give, escaped.
func TestAddrArgs(t *testing.T) {
	got, err := AddrArgs([]string{"203.0.113.7", "2001:db8::7"})
	if err != nil || len(got) != 2 || got[1] != netip.MustParseAddr("2001:db8::7") {
		t.Errorf("two addresses: %v, %v", got, err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "give the addresses to unblock, such as 'lohibot-audit unblock 203.0.113.7'"},
		{[]string{"192.0.2.0/24"}, `"192.0.2.0/24" is a range: give single addresses`},
		{[]string{"203.0.113.7", "no\x1baddr"}, "give IP addresses such as 192.0.2.7 or 2001:db8::7"},
	} {
		_, err := AddrArgs(tt.args)
		if fail.KindOf(err) != fail.Usage || !strings.Contains(err.Error(), tt.want) || strings.ContainsRune(err.Error(), 0x1b) {
			t.Errorf("%q: %v (kind %v), want a usage error with %q, escaped", tt.args, err, fail.KindOf(err), tt.want)
		}
	}
}

// A socket that does not answer is said with its path escaped: a state
// directory's name is the operator's, and a message is one line.
func TestAskSaysSocketEscaped(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "st\x1bate")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		// Each connection is closed at once, unanswered.
		for c, err := ln.Accept(); err == nil; c, err = ln.Accept() {
			c.Close()
		}
	}()
	for _, op := range []string{OpStatus, OpUnblock} {
		_, err := Ask(context.Background(), dir, Request{Op: op})
		// Closed at once: the request or the answer fails, as it comes.
		want := "cannot ask the running watch through " + parse.EscapeControl(SocketPath(dir)) + ": "
		if fail.KindOf(err) != fail.Incomplete || !strings.HasPrefix(fmt.Sprint(err), want) || strings.ContainsRune(fmt.Sprint(err), 0x1b) {
			t.Errorf("%s: %q, want %q…", op, err, want)
		}
	}
}
