package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
	"github.com/lohisoft/lohibot-audit/watch"
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
	watchSignals = func() (watch.Signals, func()) { return watch.Signals{Reload: w.hup, Summary: w.usr1}, func() {} }
	t.Cleanup(func() { watchSignals = watch.ProcessSignals })
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

// liveLine is a combined log line from addr for path at second sec of
// 10:00 on 1 December 2026.
func liveLine(addr, ua, path string, sec int) string {
	ts := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(sec) * time.Second)
	return addr + ` - - [` + ts.Format("02/Jan/2006:15:04:05 -0700") + `] "GET ` + path + ` HTTP/1.1" 200 12 "-" "` + ua + `"` + "\n"
}

// verdictsOf are the verdicts of ip in the JSON events, in order.
func verdictsOf(t *testing.T, events, ip string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(events), "\n") {
		var e struct{ Event, IP, Verdict, Method string }
		if l == "" {
			continue
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("event %q: %v", l, err)
		}
		if e.Event == "verdict" && e.IP == ip {
			out = append(out, e.Verdict+"/"+e.Method)
		}
	}
	return out
}

// waitVerdict waits until ip has had n verdicts and returns the last.
func (w *liveWatch) waitVerdict(ip string, n int) string {
	w.t.Helper()
	var got []string
	waitFor(w.t, w.done, w.stderr, func() bool {
		got = verdictsOf(w.t, w.stdout.String(), ip)
		return len(got) >= n
	})
	return got[n-1]
}

// actedOn is an --exec command that appends its arguments to a file, and
// that file.
func actedOn(t *testing.T) (cmd, file string) {
	t.Helper()
	dir := t.TempDir()
	file = filepath.Join(dir, "acted")
	cmd = filepath.Join(dir, "act")
	if err := os.WriteFile(cmd, []byte("#!/bin/sh\necho \"$1 $2 $3\" >> "+file+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return cmd, file
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

// SIGHUP reloads the config file, the IP list file and the robots.txt
// file: an address the new list holds is genuine when next seen (one that
// was spoofed before too), a --never-block added to the config protects a
// spoofer from the command, and the new robots.txt decides the next pages.
// The config file may hold other commands' keys, on reload as at start.
func TestWatchReloadOnSIGHUP(t *testing.T) {
	srv, list, log := watchFixture(t)
	dir := filepath.Dir(list)
	cfg := filepath.Join(dir, "config.yaml")
	rob := filepath.Join(dir, "robots.txt")
	testutil.WriteFile(t, cfg, "dns-timeout: 2s\nmodsec-id-base: 5000\n")
	testutil.WriteFile(t, rob, "User-agent: *\nAllow: /\n")
	act, acted := actedOn(t)
	w := startWatch(t, &Env{}, log, "--resolver", srv, "--ip-list", list, "--config", cfg, "--robots", rob, "--exec", act)

	w.write(liveLine("203.0.113.50", claimUA, "/", 0), liveLine("203.0.113.71", claimUA, "/", 1),
		liveLine("192.0.2.10", claimUA, "/page", 2))
	if v := w.waitVerdict("203.0.113.50", 1); v != "spoofed/fcrdns" {
		t.Fatalf("203.0.113.50 before the reload: %s", v)
	}
	w.waitVerdict("203.0.113.71", 1)
	w.waitVerdict("192.0.2.10", 1)
	waitFor(t, w.done, w.stderr, func() bool { return strings.Count(readFile(t, acted), "\n") == 2 })

	testutil.WriteFile(t, list, `{"ips":["79.139.58.98","203.0.113.50","203.0.113.51"]}`)
	testutil.WriteFile(t, cfg, "dns-timeout: 2s\nmodsec-id-base: 5000\nnever-block:\n  - 203.0.113.64/26\n")
	testutil.WriteFile(t, rob, "User-agent: LohiSoftBot\nDisallow: /page\n")
	w.reload()

	w.write(liveLine("203.0.113.51", claimUA, "/", 10), liveLine("203.0.113.50", claimUA, "/", 11),
		liveLine("203.0.113.70", claimUA, "/", 12), liveLine("192.0.2.10", claimUA, "/page", 20))
	if v := w.waitVerdict("203.0.113.51", 1); v != "genuine/ip-list" {
		t.Errorf("203.0.113.51, listed by the reload: %s, want genuine/ip-list", v)
	}
	if v := w.waitVerdict("203.0.113.50", 2); v != "genuine/ip-list" {
		t.Errorf("203.0.113.50, listed by the reload, seen again: %s, want genuine/ip-list", v)
	}
	w.waitErr("203.0.113.70 is spoofed but not blocked")
	w.waitOut(`"kind":"robots"`)
	if code := w.stop(); code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, w.stderr.String())
	}
	got := readFile(t, acted)
	if !strings.Contains(got, "203.0.113.71 lohisoftbot") || !strings.Contains(got, "203.0.113.50 lohisoftbot") {
		t.Errorf("before the reload the spoofers were not acted on:\n%s", got)
	}
	if strings.Contains(got, "203.0.113.70") || strings.Contains(got, "203.0.113.51") {
		t.Errorf("acted on an address the reload protects:\n%s", got)
	}
	if n := strings.Count(w.stdout.String(), `"kind":"robots"`); n != 1 {
		t.Errorf("%d robots violations, want 1 (the page after the reload):\n%s", n, w.stdout.String())
	}
}

// liveEvent is what the tests read of an event.
type liveEvent struct {
	Event, Crawler, IP, Verdict, Reason, Kind, Path string
}

func liveEvents(t *testing.T, out string) []liveEvent {
	t.Helper()
	var evs []liveEvent
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var e liveEvent
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("event %q: %v", l, err)
		}
		evs = append(evs, e)
	}
	return evs
}

// noNetwork is an HTTP client that fails at once: the crawlers' published
// lists cannot be fetched, and their built-in ones stand.
var noNetwork = &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
	return nil, errors.New("no network in this test")
})}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// watch --crawler: each claimant is judged against the profile it claims
// (a Googlebot whose crawl-….googlebot.com name does not resolve back to
// it is a spoofer, acted on as googlebot; one whose name does is genuine,
// as is the LohiSoftBot crawler by its own profile), events name the
// crawler, and each crawler's conduct is held to its own promises.
func TestWatchCrawlers(t *testing.T) {
	z := dnstest.NewZone(t,
		"10.2.0.192.in-addr.arpa. 300 IN PTR crawler-1.bot.lohisoft.com.",
		"crawler-1.bot.lohisoft.com. 300 IN A 192.0.2.10",
		"20.100.51.198.in-addr.arpa. 300 IN PTR crawl-198-51-100-20.googlebot.com.",
		"crawl-198-51-100-20.googlebot.com. 300 IN A 198.51.100.20",
		"66.113.0.203.in-addr.arpa. 300 IN PTR crawl-203-0-113-66.googlebot.com.",
		// a googlebot.com name under the impostor's control elsewhere:
		// its forward lookup does not give 203.0.113.66.
		"crawl-203-0-113-66.googlebot.com. 300 IN A 198.51.100.99",
	)
	srv := dnstest.Serve(t, z)
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	testutil.WriteFile(t, log, "")
	rob := filepath.Join(dir, "robots.txt")
	testutil.WriteFile(t, rob, "User-agent: Googlebot\nDisallow: /private\n")
	act, acted := actedOn(t)
	const gUA = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	w := startWatch(t, &Env{HTTPClient: noNetwork}, log, "--resolver", srv, "--robots", rob, "--exec", act,
		"--crawler", "lohisoftbot", "--crawler", "googlebot")
	w.write(
		liveLine("203.0.113.66", gUA, "/", 0),
		liveLine("198.51.100.20", gUA, "/private", 1),
		liveLine("198.51.100.20", gUA, "/a", 1),
		liveLine("192.0.2.10", claimUA, "/private", 2),
		liveLine("192.0.2.10", claimUA, "/b", 2),
	)
	w.waitOut(`"kind":"pause"`)
	w.waitOut(`"kind":"robots"`)
	waitFor(t, w.done, w.stderr, func() bool { return strings.Contains(readFile(t, acted), "\n") })
	for _, ip := range []string{"203.0.113.66", "198.51.100.20", "192.0.2.10"} {
		w.waitVerdict(ip, 1)
	}
	if code := w.stop(); code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, w.stderr.String())
	}
	want := map[string]liveEvent{
		"203.0.113.66":  {Event: "verdict", Crawler: "googlebot", IP: "203.0.113.66", Verdict: "spoofed", Reason: "forward-mismatch"},
		"198.51.100.20": {Event: "verdict", Crawler: "googlebot", IP: "198.51.100.20", Verdict: "genuine"},
		"192.0.2.10":    {Event: "verdict", Crawler: "lohisoftbot", IP: "192.0.2.10", Verdict: "genuine"},
	}
	var violations []liveEvent
	for _, e := range liveEvents(t, w.stdout.String()) {
		switch e.Event {
		case "verdict":
			if e != want[e.IP] {
				t.Errorf("verdict event %+v, want %+v", e, want[e.IP])
			}
		case "violation":
			violations = append(violations, liveEvent{Event: e.Event, Crawler: e.Crawler, IP: e.IP, Kind: e.Kind, Path: e.Path})
		}
	}
	// Googlebot promises robots.txt only: no pause for it; LohiSoftBot
	// promises a pause, and robots.txt names no group for it.
	wantV := []liveEvent{
		{Event: "violation", Crawler: "googlebot", IP: "198.51.100.20", Kind: "robots", Path: "/private"},
		{Event: "violation", Crawler: "lohisoftbot", IP: "192.0.2.10", Kind: "pause", Path: "/b"},
	}
	slices.SortFunc(violations, func(a, b liveEvent) int { return strings.Compare(a.Crawler, b.Crawler) })
	if !slices.Equal(violations, wantV) {
		t.Errorf("violations %+v, want %+v", violations, wantV)
	}
	if got := readFile(t, acted); got != "203.0.113.66 googlebot forward-mismatch\n" {
		t.Errorf("acted on:\n%s", got)
	}
}

// SIGHUP applies a --trusted-proxy the config file gained to the log
// readers too: before the reload the proxy's address is the client that
// claims; after it, the address its X-Forwarded-For names, and the proxy
// is never judged again.
func TestWatchReloadTrustsProxies(t *testing.T) {
	srv, list, log := watchFixture(t)
	cfg := filepath.Join(filepath.Dir(list), "config.yaml")
	testutil.WriteFile(t, cfg, "dns-timeout: 2s\n")
	w := startWatch(t, &Env{}, log, "--resolver", srv, "--ip-list", list, "--config", cfg, "--log-format", "nginx_main")
	line := func(addr, xff string, sec int) string {
		return strings.TrimSuffix(liveLine(addr, claimUA, "/", sec), "\n") + ` "` + xff + `"` + "\n"
	}
	w.write(line("198.51.100.5", "203.0.113.80", 0))
	if v := w.waitVerdict("198.51.100.5", 1); v != "spoofed/fcrdns" {
		t.Fatalf("the proxy's address before the reload: %s, want spoofed/fcrdns (it is the client)", v)
	}
	testutil.WriteFile(t, cfg, "dns-timeout: 2s\ntrusted-proxy:\n  - 198.51.100.0/24\n")
	w.reload()
	w.write(line("198.51.100.5", "203.0.113.81", 10), line("198.51.100.5", "192.0.2.10", 11))
	if v := w.waitVerdict("203.0.113.81", 1); v != "spoofed/fcrdns" {
		t.Errorf("the client behind the proxy after the reload: %s, want spoofed/fcrdns", v)
	}
	if v := w.waitVerdict("192.0.2.10", 1); v != "genuine/fcrdns" {
		t.Errorf("the crawler behind the proxy after the reload: %s, want genuine/fcrdns", v)
	}
	if code := w.stop(); code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, w.stderr.String())
	}
	if got := verdictsOf(t, w.stdout.String(), "198.51.100.5"); len(got) != 1 {
		t.Errorf("the proxy was judged %d times (%v), want once, before the reload", len(got), got)
	}
	if strings.Contains(w.stdout.String(), "203.0.113.80") {
		t.Errorf("the header was read before the reload:\n%s", w.stdout.String())
	}
}
