package verify

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/parse"
)

// auditHitAt is a claimed hit of the genuine crawler on site s.example.
func auditHitAt(file string, line int64, t time.Time, path string) *parse.Record {
	return &parse.Record{
		File: file, Line: line, Client: netip.MustParseAddr("79.139.58.98"), ClientRaw: "79.139.58.98",
		Time: t, Start: t, End: t, Resolution: time.Second, Target: path, Status: 200,
		UserAgent: "LohiSoftBot/1.0", Host: "s.example", Claimed: true,
	}
}

var genuineResults = map[netip.Addr]Result{
	netip.MustParseAddr("79.139.58.98"): {Verdict: Genuine, Method: MethodFCrDNS},
}

func kindsOf(r *Report) []string {
	var out []string
	for _, v := range r.Violations {
		out = append(out, v.Kind)
	}
	return out
}

// TestAuditRobotsNotFetchedCoverage: a crawl is judged for
// robots-not-fetched only when the logs cover the day before it.
func TestAuditRobotsNotFetchedCoverage(t *testing.T) {
	day := time.Date(2026, 12, 2, 11, 30, 0, 0, time.UTC)
	robots := auditHitAt("access.log.1", 5, day.Add(-90*time.Minute), "/robots.txt")
	page := auditHitAt("access.log", 7, day, "/page")
	input := func(file string, first, last time.Time, errText string) InputReport {
		return InputReport{File: file, FirstTime: first, LastTime: last, Error: errText, HostLogged: true, Lines: 10}
	}
	tests := []struct {
		name    string
		since   time.Time
		inputs  []InputReport
		hits    []*parse.Record
		want    []string
		skipped bool
	}{
		{
			name:   "whole logs, robots.txt fetched 90 minutes before: no violation",
			inputs: []InputReport{input("access.log.1", day.Add(-48*time.Hour), day.Add(-time.Hour), ""), input("access.log", day.Add(-59*time.Minute), day, "")},
			hits:   []*parse.Record{robots, page},
		},
		{
			name:   "whole logs, never fetched: violation",
			inputs: []InputReport{input("access.log.1", day.Add(-48*time.Hour), day.Add(-time.Hour), ""), input("access.log", day.Add(-59*time.Minute), day, "")},
			hits:   []*parse.Record{page},
			want:   []string{KindRobotsNotFetched},
		},
		{
			name:    "--since after the fetch: the fetch is not read, so the crawl cannot be judged",
			since:   day.Add(-30 * time.Minute),
			inputs:  []InputReport{input("access.log.1", day.Add(-48*time.Hour), day.Add(-time.Hour), ""), input("access.log", day.Add(-59*time.Minute), day, "")},
			hits:    []*parse.Record{robots, page},
			skipped: true,
		},
		{
			name:    "the older file was cut short before its end: not judged",
			inputs:  []InputReport{input("access.log.1.gz", day.Add(-48*time.Hour), day.Add(-20*time.Hour), "truncated"), input("access.log", day.Add(-2*time.Hour), day, "")},
			hits:    []*parse.Record{page},
			skipped: true,
		},
		{
			name:    "a rotation is missing (a day between the files): not judged",
			inputs:  []InputReport{input("access.log.7.gz", day.Add(-8*24*time.Hour), day.Add(-7*24*time.Hour), ""), input("access.log", day.Add(-3*time.Hour), day, "")},
			hits:    []*parse.Record{page},
			skipped: true,
		},
		{
			name:    "the logs begin less than 24 h before: not judged",
			inputs:  []InputReport{input("access.log", day.Add(-23*time.Hour), day, "")},
			hits:    []*parse.Record{page},
			skipped: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &Audit{Since: tt.since}
			for _, in := range tt.inputs {
				a.AddInput(in, nil)
			}
			for _, h := range tt.hits {
				a.Add(h)
			}
			r := a.Report(genuineResults, ConductConfig{Budget: 20, BudgetWindow: 24 * time.Hour, MinPause: time.Second, MinBackoff: 30 * time.Second})
			got := kindsOf(r)
			if !slices.Equal(got, tt.want) {
				t.Errorf("violations %v, want %v", got, tt.want)
			}
			skipped := len(r.Sites) == 1 && slices.Contains(r.Sites[0].ChecksSkipped, KindRobotsNotFetched)
			if skipped != tt.skipped {
				t.Errorf("robots-not-fetched skipped = %v, want %v (sites %+v)", skipped, tt.skipped, r.Sites)
			}
		})
	}
}

// TestAuditSettledSpoofersKeepNoHits: the hits of an address known to be
// spoofed without DNS are counted, not kept.
func TestAuditSettledSpoofersKeepNoHits(t *testing.T) {
	v := &Verifier{Offline: true}
	a := &Audit{Settled: v.Settled}
	base := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for i := 0; i < 1000; i++ {
		rec := auditHitAt("a.log", int64(i+1), base.Add(time.Duration(i)*time.Second), "/x")
		rec.Client = netip.MustParseAddr("203.0.113.9")
		a.Add(rec)
		v6 := *rec
		v6.Client = netip.MustParseAddr("2001:db8::9")
		a.Add(&v6)
	}
	a.Add(auditHitAt("a.log", 5000, base, "/robots.txt"))
	for key, g := range a.ips {
		wantKept := 0
		if key == "79.139.58.98" {
			wantKept = 1
		}
		if len(g.kept) != wantKept || g.settled == nil {
			t.Errorf("%s: %d hits kept, settled %v", key, len(g.kept), g.settled)
		}
	}
	if n := len(a.Addresses()); n != 0 {
		t.Errorf("%d addresses left for DNS, want 0", n)
	}
	r := a.Report(nil, ConductConfig{})
	if r.Summary.SpoofedHits != 2000 || r.Summary.GenuineHits != 1 || r.Summary.ClaimedHits != 2001 {
		t.Errorf("summary %+v", r.Summary)
	}
	reasons := map[string]string{}
	for _, ip := range r.IPs {
		reasons[ip.IP] = string(ip.Verdict) + "/" + ip.Method + "/" + ip.Reason
	}
	want := map[string]string{"79.139.58.98": "genuine/ip-list/", "203.0.113.9": "spoofed/ip-list/not-in-ip-list", "2001:db8::9": "spoofed/ip-list/ipv6"}
	for k, w := range want {
		if reasons[k] != w {
			t.Errorf("%s: %q, want %q", k, reasons[k], w)
		}
	}
}

// TestAuditRecordRoundTrip: what the audit keeps of a hit gives the
// conduct checks the same record fields.
func TestAuditRecordRoundTrip(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 0, 0, 250_000_000, time.FixedZone("", 3600))
	rec := &parse.Record{
		File: "x.log", Line: 42, Client: netip.MustParseAddr("79.139.58.98"), ClientRaw: "79.139.58.98",
		Time: start.Add(time.Second), Start: start, End: start.Add(time.Second), Duration: time.Second, HasDuration: true,
		Resolution: time.Millisecond, RemoteUser: "bob", Target: "/a?b", Status: 503, Host: "s.example",
		RetryAfter: "120", UserAgent: "LohiSoftBot", Claimed: true,
	}
	a := &Audit{}
	a.Add(rec)
	g := a.ips["79.139.58.98"]
	got := a.record(g, &g.kept[0])
	if got.Line == 0 {
		t.Fatal("no record")
	}
	if got.File != rec.File || got.Line != rec.Line || got.Client != rec.Client || !got.Time.Equal(rec.Time) ||
		!got.Start.Equal(rec.Start) || !got.End.Equal(rec.End) || got.Duration != rec.Duration || !got.HasDuration ||
		got.Resolution != rec.Resolution || got.RemoteUser != "bob" || got.Path() != "/a?b" || got.Status != 503 ||
		got.Host != "s.example" || got.RetryAfter != "120" {
		t.Errorf("got %+v\nwant %+v", got, rec)
	}
}
