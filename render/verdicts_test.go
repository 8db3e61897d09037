package render

import (
	"net/netip"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/verify"
)

// TestVerdictRows: address by address, each as every crawler in turn,
// the crawlers named only when names are given; Spoofed counts rows.
func TestVerdictRows(t *testing.T) {
	a, b := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")
	results := []map[netip.Addr]verify.Result{
		{a: {Verdict: verify.Genuine}, b: {Verdict: verify.Spoofed}},
		{a: {Verdict: verify.Spoofed}, b: {Verdict: verify.Spoofed}},
	}
	rows := VerdictRows([]netip.Addr{a, b}, results, []string{"one", "two"})
	want := []struct {
		crawler string
		list    int
		verdict verify.Verdict
	}{{"one", 0, verify.Genuine}, {"two", 1, verify.Spoofed}, {"one", 0, verify.Spoofed}, {"two", 1, verify.Spoofed}}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i, w := range want {
		if r := rows[i]; r.Crawler != w.crawler || r.List != w.list || r.Result.Verdict != w.verdict {
			t.Errorf("row %d = %s/%d/%s, want %s/%d/%s", i, r.Crawler, r.List, r.Result.Verdict, w.crawler, w.list, w.verdict)
		}
	}
	if n := (&Verdicts{Rows: rows}).Spoofed(); n != 3 {
		t.Errorf("Spoofed() = %d, want 3", n)
	}
	if rows := VerdictRows([]netip.Addr{a}, results[:1], nil); len(rows) != 1 || rows[0].Crawler != "" {
		t.Errorf("unnamed rows = %+v", rows)
	}
}

// TestListDescriptionCountsInAgreement: a list's description takes the
// singular for one prefix and the plural otherwise.
func TestListDescriptionCountsInAgreement(t *testing.T) {
	one := []netip.Prefix{netip.MustParsePrefix("192.0.2.1/32")}
	two := append(one, netip.MustParsePrefix("192.0.2.2/32"))
	now := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ got, want string }{
		{ListDescription(&verify.IPList{Source: "built-in", Prefixes: one}, now), "built-in, 1 prefix"},
		{ListDescription(&verify.IPList{Source: "built-in", Prefixes: two}, now), "built-in, 2 prefixes"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
