package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/follow"
	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/miekg/dns"
)

// lockedBuffer is an io.Writer for events, read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// setAdder is a block set in memory: what the Watcher adds, with a signal
// per address.
type setAdder struct {
	mu  sync.Mutex
	set map[netip.Addr]int
	ch  chan netip.Addr
}

func newSetAdder() *setAdder {
	return &setAdder{set: map[netip.Addr]int{}, ch: make(chan netip.Addr, 1<<16)}
}

func (s *setAdder) Add(_ context.Context, a netip.Addr) error {
	s.mu.Lock()
	s.set[a]++
	s.mu.Unlock()
	s.ch <- a
	return nil
}

func combined(addr string, sec int, path, ua string) string {
	t := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(sec) * time.Second)
	return fmt.Sprintf("%s - - [%s] \"GET %s HTTP/1.1\" 200 12 \"-\" \"%s\"\n", addr, t.Format("02/Jan/2006:15:04:05 -0700"), path, ua)
}

type testWatch struct {
	w      *Watcher
	events *lockedBuffer
	set    *setAdder
	says   chan string
	// rotations hears of each rotation and truncation the follower noticed.
	rotations chan follow.EventKind
	cancel    context.CancelFunc
	done      chan error
}

// startWatch follows files with a judge asking the zone's server.
func startWatch(t *testing.T, z *zone, files []string, tracker Tracker) *testWatch {
	t.Helper()
	srv := z.serve(t)
	tw := &testWatch{events: &lockedBuffer{}, set: newSetAdder(), says: make(chan string, 1024), done: make(chan error, 1),
		rotations: make(chan follow.EventKind, 64)}
	ctx, cancel := context.WithCancel(context.Background())
	tw.cancel = cancel
	list := &verify.IPList{}
	var w *Watcher
	j := NewJudge(JudgeOptions{Checker: checkerFor(srv, list, nil), OnVerdict: func(v Verdict) { w.OnVerdictOf(ctx, lohiName)(v) }})
	w = New(Options{
		Files:    files,
		Subjects: []Subject{{Name: lohiName, Tokens: lohiTokens, Judge: j, Tracker: tracker}},
		Follow: follow.Options{PollInterval: 50 * time.Millisecond, OnEvent: func(e follow.Event) {
			if e.Kind == follow.Rotated || e.Kind == follow.Truncated {
				tw.rotations <- e.Kind
			}
		}},
		SiteOf: func(string) string { return "www.example" },
		Guard:  NewGuard(list, nil, j.Genuine),
		Events: &Events{W: tw.events},
		Adder:  tw.set,
		Say: func(s string) {
			select {
			case tw.says <- s:
			default:
			}
		},
	})
	tw.w = w
	go func() { tw.done <- w.Run(ctx) }()
	t.Cleanup(tw.stop)
	select {
	case <-w.Started():
	case err := <-tw.done:
		t.Fatal(err)
	}
	return tw
}

func (tw *testWatch) stop() {
	tw.cancel()
	<-tw.done
	tw.done <- nil
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// Spoofers written to a log that is rotated both ways (rename and create,
// copytruncate) while lines are written all end in the block set; the
// genuine crawler never does, and every verdict is one JSON line.
func TestWatcherBlocksSpoofersAcrossRotation(t *testing.T) {
	z := newZone()
	z.crawler("192.0.2.10", "crawler-1.bot.lohisoft.com")
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	appendFile(t, log, combined("192.0.2.99", 0, "/", "curl/8"))
	tw := startWatch(t, z, []string{log}, nil)

	const spoofers = 120
	want := map[netip.Addr]bool{}
	for i := range spoofers {
		a := netip.AddrFrom4([4]byte{203, 0, 113, byte(i)})
		want[a] = true
		appendFile(t, log, combined(a.String(), i, "/page", "Mozilla/5.0 (compatible; LohiSoftBot/1.0)")+
			combined("192.0.2.10", i, "/", "LohiSoftBot/1.0")+
			combined("198.51.100.1", i, "/", "Mozilla/5.0"))
		if k := i % 40; k == 13 || k == 27 {
			// Rotate once the follower has read what was written: a
			// rename loses nothing even so, but what is written after a
			// copytruncate and before the follower notices the file got
			// shorter would be taken for the rest of the old file
			// (logrotate's documentation warns of that window).
			waitBlocked(t, tw, want, a)
		}
		switch i % 40 {
		case 13: // logrotate's default: rename, then the server opens a new file
			if err := os.Rename(log, log+".1"); err != nil {
				t.Fatal(err)
			}
			appendFile(t, log, "")
		case 27: // copytruncate
			data, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(log+".2", data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(log, 0); err != nil {
				t.Fatal(err)
			}
			for k := follow.EventKind(0); k != follow.Truncated; {
				select {
				case k = <-tw.rotations:
				case <-time.After(hang):
					t.Fatalf("copytruncate after line %d not noticed", i)
				}
			}
		}
	}
	timeout := time.After(hang)
	for len(want) > 0 {
		select {
		case a := <-tw.set.ch:
			if !want[a] {
				t.Fatalf("%s was blocked", a)
			}
			delete(want, a)
		case <-timeout:
			t.Fatalf("%d spoofers never blocked, e.g. %v", len(want), want)
		}
	}
	tw.stop()
	tw.set.mu.Lock()
	defer tw.set.mu.Unlock()
	if n := tw.set.set[netip.MustParseAddr("192.0.2.10")]; n != 0 {
		t.Fatalf("the genuine crawler was blocked %d times", n)
	}
	verdicts := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(tw.events.String()), "\n") {
		var e struct {
			Event, IP, Verdict, Crawler string
			Hits                        int64
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Event != EventVerdict || e.Crawler != lohiName {
			t.Fatalf("event %q: %v", l, err)
		}
		if prev, ok := verdicts[e.IP]; ok {
			t.Fatalf("%s judged twice (%s, then %s)", e.IP, prev, e.Verdict)
		}
		verdicts[e.IP] = e.Verdict
	}
	if len(verdicts) != spoofers+1 || verdicts["192.0.2.10"] != "genuine" || verdicts["198.51.100.1"] != "" {
		t.Fatalf("%d verdicts (want %d); genuine %q; unclaimed %q", len(verdicts), spoofers+1, verdicts["192.0.2.10"], verdicts["198.51.100.1"])
	}
}

// waitBlocked waits until a is blocked, taking the other spoofers
// blocked meanwhile off want.
func waitBlocked(t *testing.T, tw *testWatch, want map[netip.Addr]bool, a netip.Addr) {
	t.Helper()
	for want[a] {
		select {
		case b := <-tw.set.ch:
			if !want[b] {
				t.Fatalf("%s was blocked", b)
			}
			delete(want, b)
		case <-time.After(hang):
			t.Fatalf("%s never blocked", a)
		}
	}
}

// A line whose address DNS is slow to answer does not hold up the next
// line: the next spoofer is blocked while the first one's answer waits.
func TestWatcherSlowDNSDoesNotDelayTheNextLine(t *testing.T) {
	z := newZone()
	release := z.holdAddr("203.0.113.1")
	defer release()
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	appendFile(t, log, "")
	tw := startWatch(t, z, []string{log}, nil)
	appendFile(t, log, combined("203.0.113.1", 0, "/", "LohiSoftBot/1.0"))
	appendFile(t, log, combined("203.0.113.2", 1, "/", "LohiSoftBot/1.0"))
	select {
	case a := <-tw.set.ch:
		if a.String() != "203.0.113.2" {
			t.Fatalf("%s blocked first", a)
		}
	case <-time.After(hang):
		t.Fatal("the second spoofer was held up by the first one's DNS answer")
	}
	release()
	select {
	case a := <-tw.set.ch:
		if a.String() != "203.0.113.1" {
			t.Fatalf("%s blocked", a)
		}
	case <-time.After(hang):
		t.Fatal("the first spoofer was never blocked")
	}
}

// Conduct violations of the genuine crawler become events as the log
// proves them; a spoofer's requests are never held to the crawler's
// promises.
func TestWatcherConductEvents(t *testing.T) {
	z := newZone()
	z.crawler("192.0.2.10", "crawler-1.bot.lohisoft.com")
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	appendFile(t, log, "")
	tw := startWatch(t, z, []string{log}, conduct.NewTracker(conduct.Config{Budget: 20, BudgetWindow: 24 * time.Hour, MinPause: time.Second}))
	var b strings.Builder
	for i := range 21 {
		b.WriteString(combined("192.0.2.10", i*10, fmt.Sprintf("/p%d", i), "LohiSoftBot/1.0"))
		b.WriteString(combined("203.0.113.9", i*10, "/", "LohiSoftBot/1.0"))
		b.WriteString(combined("203.0.113.9", i*10, "/", "LohiSoftBot/1.0"))
	}
	appendFile(t, log, b.String())
	deadline := time.After(hang)
	for !strings.Contains(tw.events.String(), `"kind":"budget"`) {
		select {
		case <-deadline:
			t.Fatalf("no budget violation; events:\n%s", tw.events.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	tw.stop()
	var violations []conduct.Violation
	for _, l := range strings.Split(strings.TrimSpace(tw.events.String()), "\n") {
		var e ViolationEvent
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		if e.Event == EventViolation {
			violations = append(violations, e.Violation)
		}
	}
	if len(violations) != 1 || violations[0].IP != "192.0.2.10" || violations[0].Line != 61 || violations[0].Site != "www.example" {
		t.Fatalf("violations %+v, want one budget violation on line 61 (the 21st page)", violations)
	}
}

// With MaxViolations the tracker gives the first violations of each site
// and kind as events, and the summary counts the others.
func TestWatcherMaxViolations(t *testing.T) {
	z := newZone()
	z.crawler("192.0.2.10", "crawler-1.bot.lohisoft.com")
	log := filepath.Join(t.TempDir(), "access.log")
	appendFile(t, log, "")
	tw := startWatch(t, z, []string{log}, conduct.NewTracker(conduct.Config{MinPause: time.Second, MaxViolations: 2}))
	var b strings.Builder
	for i := range 6 { // in one second: 5 pause violations
		b.WriteString(combined("192.0.2.10", 0, fmt.Sprintf("/p%d", i), "LohiSoftBot/1.0"))
	}
	appendFile(t, log, b.String())
	deadline := time.After(hang)
	for !strings.Contains(tw.w.Summary(), "2 violations (3 more not shown, past --max-violations per site and kind)") {
		select {
		case <-deadline:
			t.Fatalf("summary %q; events:\n%s", tw.w.Summary(), tw.events.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	tw.stop()
	if n := strings.Count(tw.events.String(), `"kind":"pause"`); n != 2 {
		t.Fatalf("%d pause events, want 2:\n%s", n, tw.events.String())
	}
}

// Standard input is read until it ends; Run then returns once the judge
// is done.
func TestWatcherStdin(t *testing.T) {
	z := newZone()
	srv := z.serve(t)
	pr, pw := io.Pipe()
	events := &lockedBuffer{}
	list := &verify.IPList{}
	set := newSetAdder()
	var w *Watcher
	ctx := context.Background()
	j := NewJudge(JudgeOptions{Checker: checkerFor(srv, list, nil), OnVerdict: func(v Verdict) { w.OnVerdictOf(ctx, lohiName)(v) }})
	w = New(Options{Files: []string{"-"}, Follow: follow.Options{Stdin: pr}, Subjects: []Subject{{Name: lohiName, Tokens: lohiTokens, Judge: j}},
		Guard:  NewGuard(list, nil, j.Genuine),
		Events: &Events{W: events, Terminal: true}, Adder: set})
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	fmt.Fprint(pw, combined("203.0.113.77", 0, "/\x1b[31m", "LohiSoftBot/1.0 \x1b]0;x\x07"))
	pw.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hang):
		t.Fatal("Run did not return after standard input ended")
	}
	out := events.String()
	if !strings.Contains(out, "spoofed") || !strings.Contains(out, "203.0.113.77") || strings.ContainsAny(out, "\x1b\x07") {
		t.Fatalf("terminal output %q", out)
	}
	if len(set.set) != 1 {
		t.Fatalf("block set %v", set.set)
	}
}

// Lines that arrive while the parser is busy with earlier ones are all
// read: every one of thousands of spoofers written in quick bursts ends
// in the block set.
func TestWatcherLosesNoLineUnderLoad(t *testing.T) {
	z := newZone()
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	appendFile(t, log, "")
	tw := startWatch(t, z, []string{log}, nil)
	want := map[netip.Addr]bool{}
	for burst := range 40 {
		var b strings.Builder
		for i := range 100 {
			a := netip.AddrFrom4([4]byte{203, 0, byte(burst), byte(i)})
			want[a] = true
			b.WriteString(combined(a.String(), burst, "/", "LohiSoftBot/1.0"))
			b.WriteString(combined("198.51.100.1", burst, "/", "Mozilla/5.0"))
		}
		appendFile(t, log, b.String())
	}
	timeout := time.After(hang)
	for len(want) > 0 {
		select {
		case a := <-tw.set.ch:
			delete(want, a)
		case <-timeout:
			t.Fatalf("%d of 4000 spoofers never blocked; %s", len(want), tw.w.Summary())
		}
	}
}

// iisHeader is the header IIS writes at the start of a log and after each
// restart, with the #Fields: directive that says how the lines read.
func iisHeader(fields string) string {
	return "#Software: Microsoft Internet Information Services 10.0\n#Version: 1.0\n#Date: 2026-12-01 10:00:00\n#Fields: " + fields + "\n"
}

// waitLines waits until the watcher has read n lines.
func waitLines(t *testing.T, tw *testWatch, n int64) {
	t.Helper()
	for deadline := time.Now().Add(hang); tw.w.Stats().Lines < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d lines read, want %d", tw.w.Stats().Lines, n)
		}
	}
}

// A growing IIS log is followed: its #Fields: directive, written before
// following began, says how the new lines read; a directive written later
// (IIS restarted with other fields), alone or with lines after it, changes
// that from where it stands. Spoofers are blocked, the genuine crawler is
// not, and no line is malformed.
func TestWatcherFollowsW3C(t *testing.T) {
	z := newZone()
	z.crawler("192.0.2.10", "crawler-1.bot.lohisoft.com")
	log := filepath.Join(t.TempDir(), "u_ex261201.log")
	const ua = "Mozilla/5.0+(compatible;+LohiSoftBot/1.0;++https://lohisoft.com/bot)"
	first := "date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-username c-ip cs(User-Agent) cs(Referer) sc-status sc-substatus sc-win32-status time-taken"
	line1 := func(addr string) string {
		return "2026-12-01 10:00:01 10.0.0.2 GET /a - 443 - " + addr + " " + ua + " - 200 0 0 15\n"
	}
	// Written before following begins: read by nobody.
	appendFile(t, log, iisHeader(first)+line1("198.51.100.1")+strings.Repeat("2026-12-01 10:00:01 10.0.0.2 GET /b - 443 - 198.51.100.2 curl/8 - 200 0 0 15\n", 3000))
	tw := startWatch(t, z, []string{log}, nil)
	want := map[netip.Addr]bool{}
	for _, a := range []string{"203.0.113.1", "203.0.113.2", "203.0.113.3", "203.0.113.4"} {
		want[netip.MustParseAddr(a)] = true
	}

	appendFile(t, log, line1("192.0.2.10")+line1("203.0.113.1"))
	waitBlocked(t, tw, want, netip.MustParseAddr("203.0.113.1"))

	// IIS restarted with other fields: the directive comes alone, then
	// its lines.
	second := "date time c-ip cs-username s-ip cs-method cs-uri-stem sc-status cs(User-Agent) cs-host time-taken"
	line2 := func(addr string) string {
		return "2026-12-01 11:00:01 " + addr + " - 10.0.0.2 GET /c 404 " + ua + " shop.example.org 31\n"
	}
	appendFile(t, log, iisHeader(second))
	waitLines(t, tw, 2+4)
	appendFile(t, log, line2("203.0.113.2")+line2("192.0.2.10"))
	waitBlocked(t, tw, want, netip.MustParseAddr("203.0.113.2"))

	// And once more, the directive with lines after it in one write.
	appendFile(t, log, iisHeader(first)+line1("203.0.113.3")+iisHeader(second)+line2("203.0.113.4"))
	waitBlocked(t, tw, want, netip.MustParseAddr("203.0.113.3"))
	waitBlocked(t, tw, want, netip.MustParseAddr("203.0.113.4"))
	// The crawler's verdict comes on its own time: wait for it.
	for deadline := time.After(hang); !strings.Contains(tw.events.String(), `"ip":"192.0.2.10","verdict":"genuine"`); {
		select {
		case <-deadline:
			t.Fatalf("the genuine crawler was not judged; events:\n%s", tw.events.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	tw.stop()

	st := tw.w.Stats()
	if st.Malformed != 0 || st.Records != 6 || st.Claimed != 6 {
		t.Errorf("stats %+v, want 6 claimed records, none malformed", st)
	}
	tw.set.mu.Lock()
	defer tw.set.mu.Unlock()
	if len(tw.set.set) != 4 {
		t.Errorf("block set %v, want the 4 spoofers", tw.set.set)
	}
}

// downZone answers as its zone does, or SERVFAIL to every query while
// down is set: a resolver in an outage.
type downZone struct {
	*zone
	down atomic.Bool
}

func (z *downZone) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	if !z.down.Load() {
		z.zone.ServeDNS(w, r)
		return
	}
	m := new(dns.Msg)
	m.SetReply(r)
	m.Rcode = dns.RcodeServerFailure
	w.WriteMsg(m)
}

// waitSaid waits until says holds the line msg.
func waitSaid(t *testing.T, says *lockedBuffer, msg string) {
	t.Helper()
	deadline := time.Now().Add(hang)
	for !strings.Contains(says.String(), msg+"\n") {
		if time.Now().After(deadline) {
			t.Fatalf("never said %q; said:\n%s", msg, says.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// verdictsOf waits until events hold n verdicts of ip, and returns them.
func verdictsOf(t *testing.T, events *lockedBuffer, ip string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(hang)
	for {
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(events.String()), "\n") {
			var e struct{ Event, IP, Verdict string }
			if json.Unmarshal([]byte(l), &e) == nil && e.Event == EventVerdict && e.IP == ip {
				got = append(got, e.Verdict)
			}
		}
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d verdicts, want %d; events:\n%s", ip, len(got), n, events.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A resolver outage, through a watch made as the command makes it
// (NewFor): claims are unverified and nothing is blocked; the outage is
// said once, however many addresses meet it; once the resolver answers
// again that is said, the addresses are judged again when their backoff
// ends on the watch's clock, and the spoofers are blocked, the genuine
// crawler not.
func TestWatchResolverOutage(t *testing.T) {
	z := &downZone{zone: newZone()}
	z.crawler("192.0.2.10", "crawler-1.bot.lohisoft.com")
	z.down.Store(true)
	srv := dnstest.Serve(t, z)
	log := filepath.Join(t.TempDir(), "access.log")
	appendFile(t, log, "")
	clock := newFakeClock()
	events, says, set := &lockedBuffer{}, &lockedBuffer{}, newSetAdder()
	id := verify.NewIdentity(&verify.Verifier{Servers: []string{srv}, Timeout: hang, RetryTimeout: -1},
		[]*crawler.Profile{lohiProfile}, []*verify.IPList{{}})
	ctx, cancel := context.WithCancel(context.Background())
	w := NewFor(ctx, Config{Identity: id, Options: Options{
		Files:  []string{log},
		Follow: follow.Options{FromStart: true, PollInterval: 50 * time.Millisecond},
		SiteOf: func(string) string { return "www.example" },
		Events: &Events{W: events},
		Adder:  set,
		Say:    func(s string) { says.Write([]byte(s + "\n")) },
		Now:    clock.Now,
		Tick:   5 * time.Millisecond,
	}})
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); <-done }()

	claim := "Mozilla/5.0 (compatible; LohiSoftBot/1.0)"
	appendFile(t, log, combined("203.0.113.7", 0, "/", claim)+combined("192.0.2.10", 1, "/", claim))
	appendFile(t, log, combined("203.0.113.8", 2, "/", claim))
	for _, ip := range []string{"203.0.113.7", "192.0.2.10", "203.0.113.8"} {
		if v := verdictsOf(t, events, ip, 1); v[0] != "unverified" {
			t.Fatalf("%s while the resolver fails: %s, want unverified", ip, v[0])
		}
	}
	// Said once the first failure's verdict is out (verdicts of several
	// addresses may be out at once).
	waitSaid(t, says, "dns: cannot verify addresses (servfail): they are judged again as DNS comes back; nothing unverified is blocked")

	z.down.Store(false)
	clock.Advance(DefaultRetryMin)
	for ip, want := range map[string]string{"203.0.113.7": "spoofed", "203.0.113.8": "spoofed", "192.0.2.10": "genuine"} {
		if v := verdictsOf(t, events, ip, 2); v[1] != want {
			t.Errorf("%s once the resolver answers: %s, want %s", ip, v[1], want)
		}
	}
	blocked := map[netip.Addr]bool{}
	for len(blocked) < 2 {
		select {
		case a := <-set.ch:
			blocked[a] = true
		case <-time.After(hang):
			t.Fatalf("blocked %v, want both spoofers", blocked)
		}
	}
	if !blocked[netip.MustParseAddr("203.0.113.7")] || !blocked[netip.MustParseAddr("203.0.113.8")] {
		t.Errorf("blocked %v, want the two spoofers", blocked)
	}
	// Said before the first spoofer after the outage was queued for
	// blocking.
	if n := strings.Count(says.String(), "dns: answers again"); n != 1 {
		t.Errorf("the end of the outage was said %d times, want once:\n%s", n, says.String())
	}
	if n := strings.Count(says.String(), "dns: cannot verify"); n != 1 {
		t.Errorf("the outage was said %d times in all, want once:\n%s", n, says.String())
	}
}
