package watch

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/verify"
)

// TestEventsTerminalTime: on a terminal, verdict and violation lines
// begin with one clock, the time of the log line they are about, with its
// date, in UTC; the wall clock of the verdict shows only when no log line
// gave a time. The JSON verdict keeps the wall clock in "time".
func TestEventsTerminalTime(t *testing.T) {
	logged := time.Date(2015, 5, 17, 12, 5, 40, 0, time.FixedZone("CEST", 2*3600))
	wall := time.Date(2026, 12, 3, 7, 41, 46, 0, time.UTC)
	verdict := Verdict{Result: verify.Result{Addr: netip.MustParseAddr("79.139.58.98"), Verdict: verify.Genuine, Method: verify.MethodIPList},
		Hits: 2, FirstSeen: logged.Add(-time.Minute), LastSeen: logged}
	violation := conduct.Violation{Kind: "pause", Site: "mixed.log", IP: "79.139.58.98", Time: logged, File: "mixed.log", Line: 142, Path: "/b", Detail: "too soon"}

	var out bytes.Buffer
	e := &Events{W: &out, Terminal: true}
	e.Verdict("lohisoftbot", verdict, wall)
	e.Violation("lohisoftbot", violation)
	unlogged := verdict
	unlogged.FirstSeen, unlogged.LastSeen = time.Time{}, time.Time{}
	e.Verdict("lohisoftbot", unlogged, wall)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	want := []string{
		"2015-05-17 10:05:40Z genuine    79.139.58.98 lohisoftbot (ip-list)",
		"2015-05-17 10:05:40Z violation  pause mixed.log 79.139.58.98 lohisoftbot mixed.log:142 /b: too soon",
		"2026-12-03 07:41:46Z genuine    79.139.58.98 lohisoftbot (ip-list)",
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d:\n got %q\nwant %q", i+1, lines[i], want[i])
		}
	}

	out.Reset()
	e.Terminal = false
	e.Verdict("lohisoftbot", verdict, wall)
	var ev VerdictEvent
	if err := json.Unmarshal(out.Bytes(), &ev); err != nil {
		t.Fatal(err)
	}
	if !ev.Time.Equal(wall) || !ev.LastSeen.Equal(logged) || ev.Event != EventVerdict {
		t.Errorf("JSON verdict %s: want time %s and last_seen %s", out.String(), wall, logged)
	}
}

// TestSummaryCountsInAgreement: the SIGUSR1 summary says "1 line", "1
// violation" in the singular and other counts in the plural.
func TestSummaryCountsInAgreement(t *testing.T) {
	now := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	w := New(Options{Subjects: []Subject{{Name: lohiName, Tokens: lohiTokens, Judge: NewJudge(JudgeOptions{})}}, Events: &Events{W: &bytes.Buffer{}}, Now: func() time.Time { return now }})
	w.started.Store(&now)
	for n, want := range map[int64]string{
		1: "1 line, 1 claimed, 1 malformed claim;",
		2: "2 lines, 2 claimed, 2 malformed claims;",
	} {
		w.lines.Store(n)
		w.claimed.Store(n)
		w.malformed.Store(n)
		w.violations.Store(n)
		s := w.Summary()
		wantViolations := map[int64]string{1: "; 1 violation;", 2: "; 2 violations;"}[n]
		if !strings.Contains(s, want) || !strings.Contains(s, wantViolations) || !strings.Contains(s, "(0 judgements,") {
			t.Errorf("summary with counts %d: %q", n, s)
		}
	}
}
