package metrics

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/testutil"
	"github.com/lohisoft/lohibot-audit/watchstate"
)

var now = time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)

func status() watchstate.Status {
	return watchstate.Status{
		PID: 1, Started: now.Add(-time.Hour), At: now,
		Files: []watchstate.FileStatus{
			{Name: "/var/log/nginx/access.log", Lines: 1000, Malformed: 3, LastLine: now.Add(-90 * time.Second), Offset: 123456, Line: 1000},
			{Name: `/var/log/odd "name"\.log`, Lines: 0},
		},
		Crawlers: []watchstate.CrawlerStatus{{Name: "lohisoftbot", Claims: 40, Addresses: watchstate.VerdictCounts{Genuine: 2, Spoofed: 5},
			Pending: 1, Verdicts: watchstate.VerdictCounts{Genuine: 3, Spoofed: 6, Unverified: 1}, Violations: 2}},
		Blocks: []watchstate.TargetStatus{{Target: "nftables", Blocked: 6, Failed: 1, InForce: 5}, {Target: "crowdsec", Blocked: 4}},
		Held:   1,
		DNS: watchstate.DNSStatus{Resolvers: []watchstate.ResolverStatus{{Server: "127.0.0.1:53", Up: true, Queries: 20, Failures: 2}},
			Latency: watchstate.Histogram{Bounds: []float64{0.01, 0.1, 1}, Counts: []uint64{10, 18, 19}, Count: 20, Sum: 3.5}},
		Queue:  watchstate.QueueStatus{Judge: 7, NFTables: 2, CrowdSec: 1},
		Events: watchstate.EventCounts{Written: 12, Lost: 1},
	}
}

// scrape serves the metrics of st on a loopback port and returns one
// scrape's body.
func scrape(t *testing.T, st func() watchstate.Status) string {
	t.Helper()
	srv, err := Listen("127.0.0.1:0", Registry(st, func() time.Time { return now }, "1.2.3"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	resp, err := http.Get("http://" + srv.Addr().String() + Path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %s: %s", resp.Status, b)
	}
	return string(b)
}

// promtool returns promtool's path; missing, the test fails in CI and is
// skipped elsewhere.
func promtool(t *testing.T) string {
	t.Helper()
	return testutil.NeedTool(t, ".ci/install-rule-checkers", "promtool")
}

func TestScrapePassesPromtool(t *testing.T) {
	body := scrape(t, status)
	cmd := exec.Command(promtool(t), "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("promtool check metrics: %v\n%s\n--- scrape:\n%s", err, out, body)
	}
}

func TestPromtoolCatchesBadNames(t *testing.T) {
	// The check above could pass by checking nothing: promtool must
	// complain about a counter without _total.
	cmd := exec.Command(promtool(t), "check", "metrics")
	cmd.Stdin = strings.NewReader("# HELP lohibot_audit_lines Lines.\n# TYPE lohibot_audit_lines counter\nlohibot_audit_lines 1\n")
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "_total") {
		t.Fatalf("promtool said nothing of a counter without _total: %q", out)
	}
}

func TestScrapeValues(t *testing.T) {
	body := scrape(t, status)
	for _, want := range []string{
		`lohibot_audit_log_lines_total{file="/var/log/nginx/access.log"} 1000`,
		`lohibot_audit_log_malformed_lines_total{file="/var/log/nginx/access.log"} 3`,
		`lohibot_audit_log_last_line_timestamp_seconds{file="/var/log/nginx/access.log"} 1.79640711e+09`,
		`lohibot_audit_log_last_line_age_seconds{file="/var/log/nginx/access.log"} 90`,
		// No line yet: the age counts from the start, and no timestamp.
		`lohibot_audit_log_last_line_age_seconds{file="/var/log/odd \"name\"\\.log"} 3600`,
		`lohibot_audit_claims_total{crawler="lohisoftbot"} 40`,
		`lohibot_audit_verdicts_total{crawler="lohisoftbot",verdict="spoofed"} 6`,
		`lohibot_audit_addresses{crawler="lohisoftbot",verdict="pending"} 1`,
		`lohibot_audit_violations_total{crawler="lohisoftbot"} 2`,
		`lohibot_audit_blocks_total{target="nftables"} 6`,
		`lohibot_audit_block_failures_total{target="nftables"} 1`,
		`lohibot_audit_blocked_addresses{target="nftables"} 5`,
		`lohibot_audit_block_queue_length{target="crowdsec"} 1`,
		`lohibot_audit_held_addresses 1`,
		`lohibot_audit_dns_queries_total{resolver="127.0.0.1:53"} 20`,
		`lohibot_audit_dns_query_failures_total{resolver="127.0.0.1:53"} 2`,
		`lohibot_audit_dns_resolver_up{resolver="127.0.0.1:53"} 1`,
		`lohibot_audit_dns_query_duration_seconds_bucket{le="0.1"} 18`,
		`lohibot_audit_dns_query_duration_seconds_bucket{le="+Inf"} 20`,
		`lohibot_audit_dns_query_duration_seconds_sum 3.5`,
		`lohibot_audit_judge_queue_length 7`,
		`lohibot_audit_events_lost_total 1`,
		`lohibot_audit_build_info{version="1.2.3"} 1`,
		`go_goroutines `,
	} {
		if !strings.Contains(body, want+"\n") && !strings.Contains(body, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if strings.Contains(body, `lohibot_audit_log_last_line_timestamp_seconds{file="/var/log/odd`) {
		t.Errorf("a timestamp for a file that gave no line yet")
	}
}

func TestNoAddressLabels(t *testing.T) {
	// Whatever the status holds, labels come only from files, crawlers,
	// resolvers, targets and verdicts.
	body := scrape(t, status)
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "lohibot_audit_") && strings.Contains(line, `ip="`) {
			t.Errorf("an address label: %s", line)
		}
	}
}
