package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/follow"
	"github.com/lohisoft/lohibot-audit/nftset"
	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/lohisoft/lohibot-audit/watchstate"
)

// memSets is a block set in memory, as the watcher uses the kernel's:
// adds with a timeout, members, removal.
type memSets struct {
	mu      sync.Mutex
	set     map[netip.Addr]time.Duration // the timeout each was added with
	added   chan netip.Addr
	removed []netip.Addr
}

func newMemSets() *memSets {
	return &memSets{set: map[netip.Addr]time.Duration{}, added: make(chan netip.Addr, 1024)}
}

func (m *memSets) Add(ctx context.Context, a netip.Addr) error {
	return m.AddFor(ctx, a, 7*24*time.Hour)
}

func (m *memSets) AddFor(_ context.Context, a netip.Addr, ttl time.Duration) error {
	m.mu.Lock()
	m.set[a] = ttl
	m.mu.Unlock()
	m.added <- a
	return nil
}

func (m *memSets) Members(context.Context) (map[netip.Addr]time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[netip.Addr]time.Duration{}
	for a, d := range m.set {
		out[a] = d
	}
	return out, nil
}

func (m *memSets) Remove(_ context.Context, addrs []netip.Addr) (map[netip.Addr]nftset.Removed, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[netip.Addr]nftset.Removed{}
	for _, a := range addrs {
		m.removed = append(m.removed, a)
		if _, ok := m.set[a]; ok {
			delete(m.set, a)
			out[a] = nftset.Removed{Sets: []string{nftset.LiveV4}}
		}
	}
	return out, nil
}

func (m *memSets) has(a string) (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.set[netip.MustParseAddr(a)]
	return d, ok
}

// stateWatch is a watcher that keeps its state in dir.
type stateWatch struct {
	w      *Watcher
	sets   *memSets
	events *lockedBuffer
	says   *lockedBuffer
	cancel context.CancelFunc
	done   chan error
}

// startStateWatch follows log with a judge asking z, blocking into sets,
// keeping its state in dir; before Run it restores what dir holds. clock
// nil is time.Now.
func startStateWatch(t *testing.T, z *zone, log, dir string, sets *memSets, never []netip.Prefix, clock func() time.Time) *stateWatch {
	t.Helper()
	srv := z.serve(t)
	sw := &stateWatch{sets: sets, events: &lockedBuffer{}, says: &lockedBuffer{}, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	sw.cancel = cancel
	list := &verify.IPList{}
	var w *Watcher
	dns := NewDNSHealth([]string{srv})
	checker := &VerifierChecker{Now: clock, New: func() *verify.Verifier {
		return &verify.Verifier{Profile: lohiProfile, Servers: []string{srv}, Timeout: hang, RetryTimeout: -1, List: list, OnQuery: dns.Observe}
	}}
	j := NewJudge(JudgeOptions{Checker: checker, TTL: time.Hour, Now: clock,
		OnVerdict: func(v Verdict) { w.OnVerdictOf(ctx, lohiName)(v) }})
	w = New(Options{
		Files:    []string{log},
		Follow:   follow.Options{FromStart: true, PollInterval: 50 * time.Millisecond},
		Subjects: []Subject{{Name: lohiName, Tokens: lohiTokens, Judge: j}},
		SiteOf:   func(string) string { return "www.example" },
		Guard:    NewGuard(list, never, j.Genuine),
		Events:   &Events{W: sw.events},
		Adder:    sets, Sets: sets,
		StateDir: dir, StateEvery: time.Hour, BlockTTL: 24 * time.Hour,
		Targets: watchstate.Targets{NFTables: "inet lohibot"},
		DNS:     dns,
		Now:     clock,
		Say:     func(s string) { sw.says.Write([]byte(s + "\n")) },
	})
	sw.w = w
	l, err := watchstate.Read(dir, w.o.Now())
	switch {
	case err == nil:
		w.Restore(l)
	case !errors.Is(err, os.ErrNotExist):
		t.Fatal(err)
	}
	go func() { sw.done <- w.Run(ctx) }()
	t.Cleanup(sw.stop)
	select {
	case <-w.Started():
	case err := <-sw.done:
		t.Fatal(err)
	}
	return sw
}

func (sw *stateWatch) stop() {
	sw.cancel()
	if err := <-sw.done; err != nil {
		panic(err)
	}
	sw.done <- nil
}

// waitUntil polls cond until it holds; a hang fails the test.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hang)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited in vain for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (sw *stateWatch) claims() int64 { return sw.w.Status().Crawlers[0].Claims }

// A restart takes the verdicts that still stand and the blocks from the
// state: the addresses seen again are not judged again (no DNS query),
// and the spoofer the block set lost is added again for the time it had
// left.
func TestRestartKeepsVerdictsAndBlocks(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	spoofer, genuine := "203.0.113.7", "192.0.2.10"
	appendFile(t, log, combined(spoofer, 0, "/", "Mozilla/5.0 (compatible; LohiSoftBot/1.0)")+combined(genuine, 1, "/", "LohiSoftBot/1.0"))

	z1 := newZone()
	z1.crawler(genuine, "crawler-1.bot.lohisoft.com")
	sets1 := newMemSets()
	sw := startStateWatch(t, z1, log, dir, sets1, nil, nil)
	waitUntil(t, "the spoofer blocked", func() bool { _, ok := sets1.has(spoofer); return ok })
	waitUntil(t, "both verdicts", func() bool { return strings.Count(sw.events.String(), `"event":"verdict"`) == 2 })
	sw.stop()

	l, err := watchstate.Read(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Verdicts) != 2 || len(l.Blocks) != 1 || l.Blocks[0].Addr.String() != spoofer || l.Blocks[0].Target != "nftables" {
		t.Fatalf("state: %d verdicts, blocks %+v", len(l.Verdicts), l.Blocks)
	}
	if l.Status == nil || l.Status.Files[0].Lines != 2 || l.Status.Files[0].Offset != fileSize(t, log) {
		t.Errorf("state's status: %+v", l.Status)
	}

	// Again, with a block set that lost everything and a resolver that
	// counts afresh.
	z2 := newZone()
	z2.crawler(genuine, "crawler-1.bot.lohisoft.com")
	sets2 := newMemSets()
	sw2 := startStateWatch(t, z2, log, dir, sets2, nil, nil)
	waitUntil(t, "the spoofer blocked again", func() bool { _, ok := sets2.has(spoofer); return ok })
	ttl, _ := sets2.has(spoofer)
	if ttl <= 0 || ttl > 24*time.Hour {
		t.Errorf("added again for %v, want what it had left of 24h", ttl)
	}
	appendFile(t, log, combined(spoofer, 2, "/", "Mozilla/5.0 (compatible; LohiSoftBot/1.0)")+combined(genuine, 3, "/", "LohiSoftBot/1.0"))
	waitUntil(t, "the lines read", func() bool { return sw2.claims() == 4 })
	sw2.w.Housekeep()
	if n, m := z2.count(spoofer), z2.count(genuine); n+m != 0 {
		t.Errorf("judged again after the restart: %d queries for the spoofer, %d for the crawler", n, m)
	}
	if strings.Contains(sw2.events.String(), `"event":"verdict"`) {
		t.Errorf("verdict events after the restart:\n%s", sw2.events)
	}
	if s := sw2.says.String(); !strings.Contains(s, "2 verdicts that still stand, 1 blocked address") || !strings.Contains(s, "the sets lost 1 address") {
		t.Errorf("said:\n%s", s)
	}
}

func fileSize(t *testing.T, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// A block the state holds that the rules refuse now (a --never-block
// range added since) is not made again and is taken out of the set.
func TestRestoreRefusesWhatRulesForbidNow(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	appendFile(t, log, "")
	now := time.Now()
	st := &watchstate.State{Written: now, Targets: watchstate.Targets{NFTables: "inet lohibot"}, Blocks: []watchstate.Block{
		{Addr: netip.MustParseAddr("203.0.113.7"), Crawler: lohiName, Target: "nftables", At: now.Add(-time.Hour), Until: now.Add(time.Hour)},
		{Addr: netip.MustParseAddr("198.51.100.8"), Crawler: lohiName, Target: "nftables", At: now.Add(-time.Hour), Until: now.Add(time.Hour)},
		{Addr: netip.MustParseAddr("10.1.2.3"), Crawler: lohiName, Target: "nftables", At: now.Add(-time.Hour), Until: now.Add(time.Hour)},
	}}
	if err := watchstate.Write(context.Background(), dir, st); err != nil {
		t.Fatal(err)
	}
	sets := newMemSets()
	sets.set[netip.MustParseAddr("198.51.100.8")] = time.Hour
	sets.set[netip.MustParseAddr("10.1.2.3")] = time.Hour
	sw := startStateWatch(t, newZone(), log, dir, sets, []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24")}, nil)
	waitUntil(t, "203.0.113.7 added again", func() bool { _, ok := sets.has("203.0.113.7"); return ok })
	waitUntil(t, "the refused ones taken out", func() bool {
		_, a := sets.has("198.51.100.8")
		_, b := sets.has("10.1.2.3")
		return !a && !b
	})
	if s := sw.says.String(); !strings.Contains(s, "2 addresses no longer blocked") {
		t.Errorf("said:\n%s", s)
	}
	if got := sw.w.Status().Blocks[0].InForce; got != 1 {
		t.Errorf("%d blocks in force, want 1", got)
	}
}

// An unblocked address leaves the set, is one event, and is not blocked
// again while it is held, though judged spoofed again.
func TestUnblockHoldsOut(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	spoofer := "203.0.113.9"
	appendFile(t, log, combined(spoofer, 0, "/", "LohiSoftBot/1.0"))
	clock := newFakeClock()
	sets := newMemSets()
	z := newZone()
	sw := startStateWatch(t, z, log, dir, sets, nil, clock.Now)
	waitUntil(t, "the spoofer blocked", func() bool { _, ok := sets.has(spoofer); return ok })

	out := sw.w.Unblock(context.Background(), []netip.Addr{netip.MustParseAddr(spoofer)}, 2*time.Hour)
	if len(out) != 1 || len(out[0].NFTables) != 1 || !out[0].Until.Equal(clock.Now().Add(2*time.Hour)) {
		t.Fatalf("unblock: %+v", out)
	}
	if _, ok := sets.has(spoofer); ok {
		t.Fatal("still in the set")
	}
	var ev struct {
		Event, IP string
		Until     time.Time
		NFTables  []string
	}
	lines := strings.Split(strings.TrimSpace(sw.events.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &ev); err != nil || ev.Event != "unblock" || ev.IP != spoofer || len(ev.NFTables) != 1 {
		t.Fatalf("last event %q (%v)", lines[len(lines)-1], err)
	}
	// The verdict's TTL passes: seen again, judged again, spoofed, and
	// held out of blocking.
	clock.Advance(time.Hour + time.Second)
	appendFile(t, log, combined(spoofer, 5, "/", "LohiSoftBot/1.0"))
	waitUntil(t, "the second verdict", func() bool { return strings.Count(sw.events.String(), `"event":"verdict"`) == 2 })
	waitUntil(t, "its actions decided", func() bool { q := sw.w.Status().Queue; return q.Actions == 0 && q.NFTables == 0 })
	if _, ok := sets.has(spoofer); ok {
		t.Fatal("blocked again while held")
	}
	if s := sw.w.Status(); s.Held != 1 || s.Blocks[0].InForce != 0 {
		t.Errorf("status: held %d, in force %d", s.Held, s.Blocks[0].InForce)
	}
	// The hold is in the state, written at once.
	waitUntil(t, "the hold written", func() bool {
		l, err := watchstate.Read(dir, clock.Now())
		return err == nil && len(l.Holds) == 1
	})
	// Past the hold, a new judgement blocks it again.
	clock.Advance(time.Hour)
	sw.w.pruneBook()
	appendFile(t, log, combined(spoofer, 9, "/", "LohiSoftBot/1.0"))
	waitUntil(t, "blocked again after the hold", func() bool { _, ok := sets.has(spoofer); return ok })
}

func TestStatusCounts(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	appendFile(t, log, combined("203.0.113.1", 0, "/", "LohiSoftBot/1.0")+combined("198.51.100.1", 0, "/", "curl/8"))
	sets := newMemSets()
	sw := startStateWatch(t, newZone(), log, dir, sets, nil, nil)
	waitUntil(t, "the spoofer blocked", func() bool { _, ok := sets.has("203.0.113.1"); return ok })
	// Once the format is known from the first claim, a line that claims
	// the crawler but is not in it.
	appendFile(t, log, "not a log line LohiSoftBot\n")
	waitUntil(t, "the malformed line", func() bool { return sw.w.Status().Files[0].Malformed == 1 })
	s := sw.w.Status()
	f := s.Files[0]
	if f.Name != log || f.Line != 3 || f.Offset != fileSize(t, log) || f.Malformed != 1 || f.LastLine.IsZero() || f.State != "following" {
		t.Errorf("file: %+v", f)
	}
	c := s.Crawlers[0]
	if c.Name != lohiName || c.Claims != 1 || c.Verdicts.Spoofed != 1 || c.Addresses.Spoofed != 1 {
		t.Errorf("crawler: %+v", c)
	}
	if len(s.DNS.Resolvers) != 1 || s.DNS.Resolvers[0].Queries == 0 || !s.DNS.Resolvers[0].Up || s.DNS.Latency.Count == 0 {
		t.Errorf("dns: %+v", s.DNS)
	}
	if b := s.Blocks[0]; b.Target != "nftables" || b.Blocked != 1 || b.InForce != 1 {
		t.Errorf("blocks: %+v", s.Blocks)
	}
}

// Without a running watch, unblock takes the address out of the sets and
// writes a hold into the state for the next watch; it refuses a
// directory a watch holds.
func TestUnblockStopped(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	a := netip.MustParseAddr("203.0.113.7")
	st := &watchstate.State{Written: now, Blocks: []watchstate.Block{
		{Addr: a, Crawler: lohiName, Target: "nftables", At: now, Until: now.Add(time.Hour)},
		{Addr: a, Crawler: lohiName, Target: "exec", At: now, Until: now.Add(time.Hour)},
		{Addr: netip.MustParseAddr("203.0.113.8"), Crawler: lohiName, Target: "nftables", At: now, Until: now.Add(time.Hour)},
	}}
	if err := watchstate.Write(context.Background(), dir, st); err != nil {
		t.Fatal(err)
	}
	sets := newMemSets()
	sets.set[a] = time.Hour
	out, err := UnblockStopped(context.Background(), dir, []netip.Addr{a}, time.Hour, now, Unblocker{Sets: sets}, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || len(out[0].NFTables) != 1 || !out[0].Exec.Equal(now.Truncate(time.Second)) {
		t.Errorf("unblocked: %+v", out)
	}
	l, err := watchstate.Read(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Holds) != 1 || l.Holds[0].Addr != a || len(l.Blocks) != 1 || l.Blocks[0].Addr == a {
		t.Errorf("state after: holds %+v, blocks %+v", l.Holds, l.Blocks)
	}

	lock, err := watchstate.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if _, err := UnblockStopped(context.Background(), dir, []netip.Addr{a}, time.Hour, now, Unblocker{}, func(string) {}); !errors.Is(err, watchstate.ErrLocked) {
		t.Errorf("with the lock held: %v, want ErrLocked", err)
	}
}

// A state file that cannot be read is set aside by an unblock, which
// writes a new one.
func TestUnblockStoppedSetsDamagedAside(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(watchstate.Path(dir), []byte("not a state\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var said string
	a := netip.MustParseAddr("192.0.2.1")
	if _, err := UnblockStopped(context.Background(), dir, []netip.Addr{a}, time.Hour, time.Now(), Unblocker{}, func(s string) { said = s }); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(watchstate.Path(dir) + ".bad"); err != nil || string(b) != "not a state\n" {
		t.Errorf("set aside: %q, %v", b, err)
	}
	if !strings.Contains(said, "set aside") {
		t.Errorf("said %q", said)
	}
	if l, err := watchstate.Read(dir, time.Now()); err != nil || len(l.Holds) != 1 {
		t.Errorf("new state: %+v, %v", l, err)
	}
}

// gate is a writer that stops at the first write holding mark until
// release is closed: a state file on a disk that does not answer.
type gate struct {
	mark     []byte
	tail     []byte
	reached  chan struct{}
	release  chan struct{}
	stopped  bool
	received bytes.Buffer
}

func newGate(mark string) *gate {
	return &gate{mark: []byte(mark), reached: make(chan struct{}), release: make(chan struct{})}
}

func (g *gate) Write(b []byte) (int, error) {
	window := append(g.tail, b...)
	if !g.stopped && bytes.Contains(window, g.mark) {
		g.stopped = true
		close(g.reached)
		<-g.release
	}
	g.tail = append([]byte(nil), window[max(0, len(window)-len(g.mark)):]...)
	return g.received.Write(b)
}

// While the state is being written, and its writer waits on the disk in
// the middle of the verdicts or of the blocks, a new spoofer is judged,
// said and blocked, and the status answers: writing a large state holds
// up nothing. The state written then holds every record there was.
func TestStateWriteHoldsUpNothing(t *testing.T) {
	for _, mark := range []string{`{"verdict"`, `{"block"`} {
		t.Run(mark, func(t *testing.T) {
			dir := t.TempDir()
			log := filepath.Join(dir, "access.log")
			appendFile(t, log, "")
			now := time.Now()
			// Each part far larger than the encoder's buffer, so that the
			// writer waits in the middle of it.
			const n = 3000
			st := &watchstate.State{Written: now}
			for i := range n {
				v := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 1, 14: byte(i >> 8), 15: byte(i)})
				st.Verdicts = append(st.Verdicts, watchstate.Verdict{Addr: v, Crawler: lohiName, Verdict: "spoofed", Method: "fcrdns",
					Reason: "no-ptr", Judged: now.Add(-time.Minute), Expires: now.Add(time.Hour)})
				b := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 2, 14: byte(i >> 8), 15: byte(i)})
				st.Blocks = append(st.Blocks, watchstate.Block{Addr: b, Crawler: lohiName, Target: watchstate.TargetExec, At: now.Add(-time.Minute)})
			}
			if err := watchstate.Write(context.Background(), dir, st); err != nil {
				t.Fatal(err)
			}
			sets := newMemSets()
			sw := startStateWatch(t, newZone(), log, dir, sets, nil, nil)
			if s := sw.says.String(); !strings.Contains(s, "3000 verdicts that still stand, 3000 blocked addresses") {
				t.Fatalf("said:\n%s", s)
			}

			g := newGate(mark)
			// Released before the watch stops, even when the test fails.
			release := sync.OnceFunc(func() { close(g.release) })
			t.Cleanup(release)
			done := make(chan error, 1)
			go func() {
				e, err := watchstate.NewEncoder(g, now, 1, watchstate.Targets{})
				if err == nil {
					err = sw.w.encodeState(context.Background(), e)
				}
				if err == nil {
					err = e.Close()
				}
				done <- err
			}()
			select {
			case <-g.reached:
			case err := <-done:
				t.Fatalf("the state was written without reaching %s: %v", mark, err)
			case <-time.After(hang):
				t.Fatal("the writer never reached the gate")
			}
			spoofer := "203.0.113.7"
			appendFile(t, log, combined(spoofer, 0, "/", "LohiSoftBot/1.0"))
			select {
			case a := <-sets.added:
				if a.String() != spoofer {
					t.Fatalf("blocked %s", a)
				}
			case <-time.After(hang):
				t.Fatal("no block while the state was being written")
			}
			if !strings.Contains(sw.events.String(), `"ip":"`+spoofer+`"`) {
				t.Errorf("no verdict event for the spoofer:\n%s", sw.events)
			}
			// The block is noted once the set has it; the status says so.
			waitUntil(t, "the block in force", func() bool { return sw.w.Status().Blocks[0].InForce == 1 })
			if s := sw.w.Status(); s.Crawlers[0].Verdicts.Spoofed != 1 || s.Crawlers[0].Addresses.Spoofed != n+1 || s.Blocks[0].Blocked != 1 {
				t.Errorf("status: %+v, %+v", s.Crawlers[0], s.Blocks)
			}
			release()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			l, err := watchstate.Decode(&g.received, now)
			if err != nil {
				t.Fatal(err)
			}
			// Every record there was before; the new ones may be in or not.
			if len(l.Verdicts) < n || len(l.Verdicts) > n+1 || len(l.Blocks) < n || len(l.Blocks) > n+1 || l.Status == nil {
				t.Errorf("written: %d verdicts, %d blocks, status %v", len(l.Verdicts), len(l.Blocks), l.Status != nil)
			}
		})
	}
}
