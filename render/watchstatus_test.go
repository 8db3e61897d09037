package render

import (
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/watchstate"
)

func TestWatchStatusText(t *testing.T) {
	now := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	s := watchstate.Status{Running: true, PID: 42, Started: now.Add(-3 * time.Hour), At: now,
		Files: []watchstate.FileStatus{{Name: "/var/log/evil\x1b[2J.log", Offset: 123456, Line: 1000, Lines: 1000, Malformed: 2, LastLine: now.Add(-5 * time.Second), State: "following"}},
		Crawlers: []watchstate.CrawlerStatus{{Name: "lohisoftbot", Claims: 40, Verdicts: watchstate.VerdictCounts{Genuine: 3, Spoofed: 6},
			Addresses: watchstate.VerdictCounts{Genuine: 2, Spoofed: 5}, Pending: 1}},
		Blocks: []watchstate.TargetStatus{{Target: "nftables", Blocked: 6, Failed: 1, InForce: 5}},
		Held:   1,
		DNS: watchstate.DNSStatus{Resolvers: []watchstate.ResolverStatus{{Server: "127.0.0.1:53", Up: false, Queries: 20, Failures: 2, LastError: "timeout"}},
			Latency: watchstate.Histogram{Bounds: []float64{0.01, 0.1, 1}, Counts: []uint64{10, 19, 20}, Count: 20, Sum: 1}},
		Queue: watchstate.QueueStatus{Judge: 7}}
	var b strings.Builder
	if err := WatchStatus(&b, s, now, now); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"watch: running, pid 42, up 3h (since 2026-12-04 15:00:00Z)",
		`/var/log/evil\x1b[2J.log  following, at line 1,000, byte 123,456; 1,000 lines, 2 malformed; last line 5s ago`,
		"lohisoftbot  40 claims; judged 3 genuine, 6 spoofed, 0 unverified; now 2 genuine, 5 spoofed, 0 unverified, 1 pending",
		"nftables  5 addresses now; 6 blocked, 1 failed since start",
		"held out of blocking (unblocked): 1 address",
		"127.0.0.1:53  not answering; 20 queries, 2 failed; last answer never; timeout",
		"latency: 20 queries, mean 50ms, half within 10ms, 99% within 1s",
		"waiting: 7 addresses to judge",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\x1b") {
		t.Error("a control character reached the terminal")
	}
	s.Running = false
	b.Reset()
	WatchStatus(&b, s, now.Add(-time.Minute), now)
	if !strings.Contains(b.String(), "watch: not running; the state written 1m ago (2026-12-04 17:59:00Z) by pid 42 says") {
		t.Errorf("stopped:\n%s", b.String())
	}
}
