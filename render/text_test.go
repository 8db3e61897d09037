package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lohisoft/lohibot-audit/audit"
)

func TestVisible(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain <b> & \"text\"", "plain <b> & \"text\""},
		{"a\x1b]0;owned\x07b", `a\x1b]0;owned\x07b`},
		{"\x00\r\n\t\x7f", `\x00\x0d\x0a\x09\x7f`},
		{"\u202eexe.txt\u202c", `\u202eexe.txt\u202c`},
		{"x\u2066y\u2069z\u200bw\ufeff", `x\u2066y\u2069z\u200bw\ufeff`},
		{"\u0085\u2028\u00ad", `\u0085\u2028\u00ad`},
		{"bad \xff\xfe utf8 \xc3", `bad \xff\xfe utf8 \xc3`},
		{"héllo wörld ✓ 日本", "héllo wörld ✓ 日本"},
		{`back\slash`, `back\slash`},
	} {
		if got := visible(tc.in); got != tc.want {
			t.Errorf("visible(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCut(t *testing.T) {
	if got := cut("short", 10); got != "short" {
		t.Errorf("cut(short) = %q", got)
	}
	if got := cut(strings.Repeat("é", 30), 10); got != strings.Repeat("é", 10)+"… (20 more)" {
		t.Errorf("cut(30 é, 10) = %q", got)
	}
	huge := strings.Repeat("\x1b", 1<<20)
	got := cut(huge, 20)
	if !strings.HasPrefix(got, strings.Repeat(`\x1b`, 5)) || !strings.Contains(got, "more bytes)") || len(got) > 200 {
		t.Errorf("cut(1 MiB of ESC, 20) = %q", got)
	}
	if !utf8.ValidString(cut("ab\xffcd"+strings.Repeat("x", 500), 3)) {
		t.Error("cut returned invalid UTF-8")
	}
}

func TestNumAndDur(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := num(n); got != want {
			t.Errorf("num(%d) = %q, want %q", n, got, want)
		}
	}
	for d, want := range map[time.Duration]string{
		0: "0s", 450 * time.Millisecond: "450ms", 7 * time.Second: "7s", 1500 * time.Millisecond: "1.5s",
		215 * time.Second: "3m 35s", time.Hour: "1h", 24 * time.Hour: "24h", 28*time.Hour + time.Minute: "28h 1m",
		52 * time.Hour: "2d 4h", 7 * 24 * time.Hour: "7d", -3 * time.Second: "-3s",
	} {
		if got := dur(d); got != want {
			t.Errorf("dur(%v) = %q, want %q", d, got, want)
		}
	}
	if got := stamp(time.Date(2026, 12, 1, 7, 0, 17, 250e6, time.FixedZone("CET", 3600))); got != "2026-12-01 06:00:17.250" {
		t.Errorf("stamp = %q", got)
	}
	if stamp(time.Time{}) != "" {
		t.Error("stamp of the zero time is not empty")
	}
}

func TestAxisTicks(t *testing.T) {
	at := func(s string) time.Time { return utc(s) }
	for _, tc := range []struct {
		name     string
		from, to string
		want     []string // "label/context"
	}{
		{"a minute in 10s steps", "2026-12-01T07:00:06Z", "2026-12-01T07:00:55Z",
			[]string{"07:00:10/Dec 1", "07:00:20/", "07:00:30/", "07:00:40/", "07:00:50/"}},
		{"four minutes in 30s steps", "2026-12-01T07:00:00Z", "2026-12-01T07:03:41Z",
			[]string{"07:00:00/Dec 1", "07:00:30/", "07:01:00/", "07:01:30/", "07:02:00/", "07:02:30/", "07:03:00/", "07:03:30/"}},
		{"28 hours in 6h steps across midnight", "2026-11-30T07:00:00Z", "2026-12-01T12:30:00Z",
			[]string{"12:00/Nov 30", "18:00/", "00:00/Dec 1", "06:00/", "12:00/"}},
		{"a month in weeks, on Mondays", "2026-11-03T00:00:00Z", "2026-12-02T00:00:00Z",
			[]string{"Nov 9/2026", "Nov 16/", "Nov 23/", "Nov 30/"}},
		{"two years in quarters", "2025-01-15T00:00:00Z", "2026-12-31T00:00:00Z",
			[]string{"Apr/2025", "Jul/", "Oct/", "Jan/2026", "Apr/", "Jul/", "Oct/"}},
		{"all of time", "0001-01-01T00:00:00Z", "9999-12-31T00:00:00Z",
			[]string{"2000/", "4000/", "6000/", "8000/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ticks := axisTicks(at(tc.from), at(tc.to), 9)
			var got []string
			for _, tk := range ticks {
				got = append(got, tk.Label+"/"+tk.Context)
				if tk.Time.Before(at(tc.from)) || tk.Time.After(at(tc.to)) {
					t.Errorf("tick %v outside the span", tk.Time)
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("ticks\n got %q\nwant %q", got, tc.want)
			}
		})
	}
	if axisTicks(t0, t0, 9) != nil {
		t.Error("ticks for an empty span")
	}
}

// TestSummaryNounsAgree: the summary lines of the table and the Markdown
// say "1 file", "1 claimed LohiSoftBot hit", "1 violation" in the
// singular and every other count in the plural.
func TestSummaryNounsAgree(t *testing.T) {
	report := func(n int64) *audit.Report {
		r := &audit.Report{Summary: audit.Summary{Files: int(n), Lines: n, ClaimedHits: n, GenuineHits: n, Violations: int(n), FilteredOut: n, UnclaimedHit: n, LogFormat: "combined"}}
		for i := range n + 1 {
			r.IPs = append(r.IPs, audit.IPReport{IP: fmt.Sprintf("192.0.2.%d", i+1), Verdict: "genuine", Method: "fcrdns", Hits: 1})
		}
		return r
	}
	for _, tc := range []struct {
		n    int64
		want []string
	}{
		{1, []string{"1 file, 1 line (0 malformed)", "1 claimed LohiSoftBot hit: 1 genuine, 0 spoofed, 0 unverified; 1 violation\n",
			"1 claimed hit outside --since/--until left out", "1 request from the crawler's", "1 more address with fewer hits is left out"}},
		{2, []string{"2 files, 2 lines (0 malformed)", "2 claimed LohiSoftBot hits: 2 genuine, 0 spoofed, 0 unverified; 2 violations\n",
			"2 claimed hits outside --since/--until left out", "2 requests from the crawler's", "1 more address with fewer hits is left out"}},
	} {
		for _, md := range []bool{false, true} {
			var out bytes.Buffer
			if err := writeReportText(NewText(&out, md, 0), report(tc.n), int(tc.n)); err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.want {
				if !strings.Contains(out.String(), s) {
					t.Errorf("count %d, markdown %v: no %q in\n%s", tc.n, md, s, out.String())
				}
			}

		}
	}
}

func TestChecksText(t *testing.T) {
	for _, tc := range []struct {
		skipped, notPromised []string
		want                 string
	}{
		{nil, nil, ""},
		{[]string{"budget", "pause"}, nil, "budget, pause"},
		{nil, []string{"robots", "robots-not-fetched"}, "not promised: robots, robots-not-fetched"},
		{[]string{"pause"}, []string{"robots"}, "pause; not promised: robots"},
	} {
		if got := ChecksText(tc.skipped, tc.notPromised); got != tc.want {
			t.Errorf("ChecksText(%q, %q) = %q, want %q", tc.skipped, tc.notPromised, got, tc.want)
		}
	}
}
