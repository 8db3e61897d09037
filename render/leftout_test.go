package render

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
)

// leftOutReport is a report of one site with 200 pause violations listed
// (of 900,000 counted), 3 budget ones and 1 robots one, as --max-violations
// 200 leaves it.
func leftOutReport() *audit.Report {
	t0 := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	r := &audit.Report{
		Tool: "lohibot-audit",
		Summary: audit.Summary{Files: 1, Lines: 900_204, ClaimedHits: 900_204, GenuineHits: 900_204,
			Violations: 900_004, ViolationsLeftOut: 899_800, LogFormat: "combined", IPListSource: "built-in"},
		Sites: []audit.SiteReport{{Site: "www.example.com", Pages: 900_200, RobotsFetches: 4, ClaimedHits: 900_204,
			ChecksSkipped: []string{}, Violations: 900_004, ViolationsLeftOut: map[string]int{"pause": 899_800}}},
	}
	add := func(kind string, i int) {
		r.Violations = append(r.Violations, audit.Violation{Kind: kind, Site: "www.example.com", IP: "79.139.58.98",
			Time: t0.Add(time.Duration(i) * time.Second), File: "access.log", Line: int64(i + 1), Path: fmt.Sprintf("/p%d", i),
			Detail: "logged in the same second as the request on line 1; the least pause is 1s"})
	}
	for i := range 200 {
		add("pause", i)
	}
	for _, i := range []int{50, 120, 180} {
		add("budget", i)
	}
	add("robots", 199)
	return r
}

// On a terminal, --top bounds the violations shown as it bounds the
// addresses, taking each kind in turn, and says by kind how many more
// there are; the summary and each site's kinds say how many the report
// counted but did not list.
func TestTextViolationsBounded(t *testing.T) {
	table, _ := Lookup("table")
	r := leftOutReport()
	slices.SortStableFunc(r.Violations, func(a, b audit.Violation) int { return a.Time.Compare(b.Time) })
	var b bytes.Buffer
	if err := table.WriteReport(&b, r, Options{Terminal: true, Width: 200, Top: 6}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"900004 violations (899800 not listed, past --max-violations per site and kind)",
		"www.example.com: budget 3, pause 900000 (899800 not listed), robots 1",
		// Shown: pause, budget and robots, then pause and budget, then pause.
		"198 more violations not shown (budget 1, pause 197); --top 0 shows every one listed",
		"access.log:200", // the one robots violation is not hidden by the pause ones
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "access.log:"); n != 6 {
		t.Errorf("%d violations shown, want 6:\n%s", n, out)
	}

	// --top 0: every one listed, nothing said not shown.
	b.Reset()
	if err := table.WriteReport(&b, r, Options{Terminal: true, Width: 200}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "access.log:"); n != 204 || strings.Contains(b.String(), "not shown") {
		t.Errorf("without --top: %d violations shown, want 204", n)
	}
}

// The HTML page says what was counted but not listed: on the violations
// card, in the site's section and in the page's note.
func TestHTMLViolationsLeftOut(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, PageOf(leftOutReport(), nil)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"899,800 counted but not listed",
		"Listed: the first violations of each kind; 899,800 more were counted but not listed (pause 899,800), past --max-violations.",
		"899,800 violations were counted but listed nowhere, past --max-violations per site and kind",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
}
