package watch

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/crowdsec"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/watchstate"
)

// TestStoppedUnblocker: with no state, unblock says where it looks (the
// default table here); with one, it undoes blocks where the last watch
// made them, and says what it cannot use.
func TestStoppedUnblocker(t *testing.T) {
	now := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	agent := crowdsec.Agent{Version: "v-test"}
	dir := t.TempDir()
	var said []string
	say := func(m string) { said = append(said, m) }
	u, closeU, err := StoppedUnblocker(dir, now, agent, say)
	if err != nil {
		t.Fatal(err)
	}
	closeU()
	want := "no state in " + dir + " tells where a watch blocked"
	if runtime.GOOS == "linux" {
		want += ": taking the addresses out of the sets of nftables table inet lohibot here, if it holds them"
		if u.Sets == nil {
			t.Error("no state: the default table's sets are not tried")
		}
	}
	want += "; CrowdSec decisions are not known: end them with 'cscli decisions delete --ip ADDRESS'"
	if len(said) != 1 || said[0] != want {
		t.Errorf("said %q, want %q", said, want)
	}
	if u.CrowdSec != nil {
		t.Error("no state: a CrowdSec Local API is guessed")
	}

	write := func(tg watchstate.Targets) {
		t.Helper()
		s := &watchstate.State{Written: now, PID: 1, Targets: tg, Status: &watchstate.Status{PID: 1, At: now}}
		if err := watchstate.Write(context.Background(), dir, s); err != nil {
			t.Fatal(err)
		}
	}
	creds := filepath.Join(dir, "creds.yaml")
	if err := os.WriteFile(creds, []byte("url: http://127.0.0.1:8080/\nlogin: m\npassword: p\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	said = nil
	write(watchstate.Targets{NFTables: "ip fw", CrowdSec: "http://127.0.0.1:8080/", CrowdSecCredentials: creds})
	u, closeU, err = StoppedUnblocker(dir, now, agent, say)
	if err != nil {
		t.Fatal(err)
	}
	closeU()
	p, ok := u.CrowdSec.(*crowdsec.Pusher)
	if !ok {
		t.Fatalf("crowdsec target: %T", u.CrowdSec)
	}
	if p.Client.Credentials.URL != "http://127.0.0.1:8080" || p.TTL != time.Hour || p.Client.UserAgent != "lohibot-audit/v-test" || u.Sets == nil || len(said) != 0 {
		t.Errorf("state of nftables and crowdsec: %+v, said %q", u, said)
	}

	write(watchstate.Targets{CrowdSec: "http://127.0.0.1:8080/", CrowdSecCredentials: filepath.Join(dir, "gone.yaml")})
	_, _, err = StoppedUnblocker(dir, now, agent, say)
	var ce *CredentialsError
	if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "crowdsec: ") || !strings.HasSuffix(err.Error(), "no such file or directory") {
		t.Errorf("credentials gone: %v, want a CredentialsError", err)
	}
	write(watchstate.Targets{NFTables: "inet lohibot", NFTNetNS: filepath.Join(dir, "no-netns")})
	_, _, err = StoppedUnblocker(dir, now, agent, say)
	if err == nil || err.Error() != "nftables: the network namespace of the last watch: no such file or directory" {
		t.Errorf("namespace gone: %v", err)
	}
}

// WriteUnblocked writes an event per address; an address with errors
// makes the run incomplete, an event lost an output not written.
func TestWriteUnblocked(t *testing.T) {
	now := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	a, b := netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("2001:db8::7")
	out := []watchstate.Unblocked{{Addr: a, Until: now.Add(time.Hour), NFTables: []string{"spoofed_live_v4"}},
		{Addr: b, Until: now.Add(time.Hour), Errors: []string{"crowdsec: connection refused"}}}
	var buf strings.Builder
	err := WriteUnblocked(&buf, false, out, now)
	if fail.KindOf(err) != fail.Incomplete || err.Error() != "not everything could be undone: see each address's errors" ||
		strings.Count(buf.String(), `"event":"unblock"`) != 2 {
		t.Errorf("%v (kind %v), written:\n%s", err, fail.KindOf(err), buf.String())
	}
	buf.Reset()
	if err := WriteUnblocked(&buf, true, out[:1], now); err != nil || buf.String() != UnblockLine(out[0], now)+"\n" {
		t.Errorf("for people: %v, %q", err, buf.String())
	}
	err = WriteUnblocked(&failingWriter{fail: true}, false, out, now)
	if fail.KindOf(err) != fail.Unwritten || err.Error() != "cannot write to standard output" {
		t.Errorf("lost: %v (kind %v), want an output not written", err, fail.KindOf(err))
	}
}

// askedWatch answers the control socket as a running watch would, and
// records the unblocks asked of it.
type askedWatch struct {
	mu    sync.Mutex
	addrs []netip.Addr
	ttl   time.Duration
}

func (w *askedWatch) Status() watchstate.Status { return watchstate.Status{PID: 7} }

func (w *askedWatch) Unblock(_ context.Context, addrs []netip.Addr, ttl time.Duration) []watchstate.Unblocked {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.addrs, w.ttl = addrs, ttl
	var out []watchstate.Unblocked
	for _, a := range addrs {
		out = append(out, watchstate.Unblocked{Addr: a, CrowdSec: []string{a.String()}})
	}
	return out
}

// With a watch running, Unblock asks it over its control socket, the ttl
// in seconds; nothing is done here.
func TestUnblockAsksTheRunningWatch(t *testing.T) {
	dir := t.TempDir()
	ln, err := watchstate.Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	w := &askedWatch{}
	go func() { watchstate.Serve(ctx, ln, w); close(done) }()
	defer func() { cancel(); <-done }()

	now := time.Date(2026, 12, 5, 6, 0, 0, 0, time.UTC)
	addrs := []netip.Addr{netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("2001:db8::7")}
	said := func(m string) { t.Errorf("said %q: the running watch does it", m) }
	out, err := Unblock(context.Background(), dir, addrs, 36*time.Hour, now, crowdsec.Agent{}, said)
	if err != nil || len(out) != 2 || out[1].CrowdSec[0] != "2001:db8::7" {
		t.Fatalf("unblock: %+v, %v", out, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.addrs) != 2 || w.addrs[0] != addrs[0] || w.ttl != 36*time.Hour {
		t.Errorf("the watch was asked %v for %v", w.addrs, w.ttl)
	}
	if _, err := watchstate.Read(dir, now); err == nil {
		t.Error("a state was written beside the running watch")
	}
}

// With no watch running, Unblock writes the holds into the state itself;
// a directory locked by a watch that does not answer, and CrowdSec
// credentials of the last watch that cannot be read, are errors with a
// hint.
func TestUnblockWithoutWatch(t *testing.T) {
	now := time.Date(2026, 12, 5, 6, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	// The last watch blocked nowhere that can be undone here: no table, no
	// Local API to reach (the nftables of this host are left alone).
	s := &watchstate.State{Written: now, PID: 1, Targets: watchstate.Targets{Exec: "/bin/true"}, Status: &watchstate.Status{PID: 1, At: now}}
	if err := watchstate.Write(context.Background(), dir, s); err != nil {
		t.Fatal(err)
	}
	var said []string
	say := func(m string) { said = append(said, m) }
	a := netip.MustParseAddr("198.51.100.7")
	out, err := Unblock(context.Background(), dir, []netip.Addr{a}, time.Hour, now, crowdsec.Agent{}, say)
	if err != nil || len(out) != 1 || out[0].Addr != a || !out[0].Until.Equal(now.Add(time.Hour)) {
		t.Fatalf("unblock: %+v, %v; said %q", out, err, said)
	}
	l, err := watchstate.Read(dir, now)
	if err != nil || len(l.Holds) != 1 {
		t.Fatalf("the state after unblock: %+v, %v", l, err)
	}

	lock, err := watchstate.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Unblock(context.Background(), dir, []netip.Addr{a}, time.Hour, now, crowdsec.Agent{}, say)
	lock.Release()
	if fail.KindOf(err) != fail.Incomplete || !errors.Is(err, watchstate.ErrLocked) ||
		!strings.HasSuffix(err.Error(), ", but it does not answer on its socket") || !strings.HasPrefix(fail.HintOf(err), "try again in a moment") {
		t.Errorf("a locked directory without a socket: %v (hint %q)", err, fail.HintOf(err))
	}

	s.Targets = watchstate.Targets{CrowdSec: "http://127.0.0.1:1/", CrowdSecCredentials: filepath.Join(dir, "gone.yaml")}
	if err := watchstate.Write(context.Background(), dir, s); err != nil {
		t.Fatal(err)
	}
	_, err = Unblock(context.Background(), dir, []netip.Addr{a}, time.Hour, now, crowdsec.Agent{}, say)
	var ce *CredentialsError
	if fail.KindOf(err) != fail.Incomplete || !errors.As(err, &ce) || !strings.Contains(fail.HintOf(err), "cscli decisions delete") {
		t.Errorf("credentials gone: %v (hint %q)", err, fail.HintOf(err))
	}
}
