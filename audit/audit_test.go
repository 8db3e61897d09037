package audit

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/internal/hitstore"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/verify"
)

// auditHitAt is a claimed hit of the genuine crawler on site s.example.
func auditHitAt(file string, line int64, t time.Time, path string) *parse.Record {
	return &parse.Record{
		File: file, Line: line, Client: netip.MustParseAddr("79.139.58.98"), ClientRaw: "79.139.58.98",
		Time: t, Start: t, End: t, Resolution: time.Second, Target: path, Status: 200,
		UserAgent: "LohiSoftBot/1.0", Host: "s.example", Claimed: true,
	}
}

var genuineResults = map[netip.Addr]verify.Result{
	netip.MustParseAddr("79.139.58.98"): {Verdict: verify.Genuine, Method: verify.MethodFCrDNS},
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
			want:   []string{conduct.KindRobotsNotFetched},
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
			cfg := conduct.Config{Budget: 20, BudgetWindow: 24 * time.Hour, MinPause: time.Second, MinBackoff: 30 * time.Second}
			snap := a.Snapshot(genuineResults)
			r := a.Report(genuineResults, cfg)
			got := kindsOf(r)
			if !slices.Equal(got, tt.want) {
				t.Errorf("violations %v, want %v", got, tt.want)
			}
			skipped := len(r.Sites) == 1 && slices.Contains(r.Sites[0].ChecksSkipped, conduct.KindRobotsNotFetched)
			if skipped != tt.skipped {
				t.Errorf("robots-not-fetched skipped = %v, want %v (sites %+v)", skipped, tt.skipped, r.Sites)
			}
			checkSnapshot(t, snap, cfg, r)
		})
	}
}

// checkSnapshot checks that snap, written as JSON and read back, gives
// the violations and site reports of r.
func checkSnapshot(t *testing.T, snap conduct.Snapshot, cfg conduct.Config, r *Report) {
	t.Helper()
	data, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	var back conduct.Snapshot
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	vs, sites := back.Check(cfg)
	if !reflect.DeepEqual(vs, r.Violations) {
		t.Errorf("snapshot violations %+v\nreport's %+v", vs, r.Violations)
	}
	want := slices.Clone(r.Sites)
	for i := range want {
		want[i].ClaimedHits = 0
	}
	if !reflect.DeepEqual(sites, want) {
		t.Errorf("snapshot sites %+v\nreport's %+v", sites, want)
	}
}

// TestAuditSettledSpoofersKeepNoHits: the hits of an address known to be
// spoofed without DNS are counted, not kept.
func TestAuditSettledSpoofersKeepNoHits(t *testing.T) {
	v := &verify.Verifier{Offline: true, Profile: builtinProfiles(t, "lohisoftbot")[0]}
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
	if int(a.hits.Len()) != 1 || a.addrs.len() != 3 || len(a.settled) != 3 {
		t.Errorf("%d hits kept (want 1), %d addresses (want 3), %d distinct settled verdicts (want 3)", int(a.hits.Len()), a.addrs.len(), len(a.settled))
	}
	if n := len(a.Addresses()); n != 0 {
		t.Errorf("%d addresses left for DNS, want 0", n)
	}
	r := a.Report(nil, conduct.Config{})
	if r.Summary.SpoofedHits != 2000 || r.Summary.GenuineHits != 1 || r.Summary.ClaimedHits != 2001 {
		t.Errorf("summary %+v", r.Summary)
	}
	reasons := map[string]string{}
	for ip := range r.AllIPs() {
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
// conduct checks what the record said, for a start logged with a duration
// (Apache %t with %D), an end logged with one (nginx $time_local with
// $request_time), and no duration; times in year 1 and at the Unix epoch
// are times like any other.
func TestAuditRecordRoundTrip(t *testing.T) {
	zone := time.FixedZone("", 3600)
	tests := []struct {
		name       string
		time       time.Time
		start, end time.Time
		dur        time.Duration
	}{
		{"start logged", time.Date(2026, 12, 2, 10, 0, 0, 250_000_000, zone), time.Date(2026, 12, 2, 10, 0, 0, 250_000_000, zone), time.Date(2026, 12, 2, 10, 0, 1, 250_000_000, zone), time.Second},
		{"end logged", time.Date(2026, 12, 2, 10, 0, 1, 0, zone), time.Date(2026, 12, 2, 10, 0, 0, 500_000_000, zone), time.Date(2026, 12, 2, 10, 0, 1, 0, zone), 500 * time.Millisecond},
		{"no duration", time.Date(2026, 12, 2, 10, 0, 1, 0, zone), time.Date(2026, 12, 2, 10, 0, 1, 0, zone), time.Date(2026, 12, 2, 10, 0, 1, 0, zone), -1},
		{"year 1", time.Time{}, time.Time{}, time.Time{}, -1},
		{"unix epoch", time.Unix(0, 0), time.Unix(0, 0), time.Unix(0, 0), -1},
		{"year 9999", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &parse.Record{
				File: "x.log", Line: 42, Client: netip.MustParseAddr("79.139.58.98"), ClientRaw: "79.139.58.98",
				Time: tt.time, Start: tt.start, End: tt.end, Duration: max(tt.dur, 0), HasDuration: tt.dur >= 0,
				Resolution: time.Millisecond, RemoteUser: "bob", Target: "/a?b", Status: 503, Host: "s.example",
				RetryAfter: "120", UserAgent: "LohiSoftBot", Claimed: true,
			}
			a := &Audit{}
			a.Add(rec)
			if int(a.hits.Len()) != 1 {
				t.Fatalf("%d hits kept, want 1", int(a.hits.Len()))
			}
			var kept hitstore.Hit
			if !a.hits.Reader(0).Next(&kept, false) {
				t.Fatal("the hit does not read back")
			}
			got := a.conductHit(&kept, map[uint32]string{})
			want := conduct.HitOf(rec)
			if !got.Time.Equal(want.Time) {
				t.Errorf("time %v, want %v", got.Time, want.Time)
			}
			got.Time = want.Time
			if a.sites.name(got.SiteID) != rec.Host {
				t.Errorf("site id %d names %q, want %q", got.SiteID, a.sites.name(got.SiteID), rec.Host)
			}
			got.SiteID = 0
			if got != want {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
			if got.Resolution <= 0 {
				t.Error("the hit lost its time")
			}
		})
	}
}

// TestAuditYearOneTime: a hit logged in year 1 (the zero time.Time) is
// timed like any other, so it does not switch off its site's time checks.
func TestAuditYearOneTime(t *testing.T) {
	a := &Audit{}
	a.Add(auditHitAt("a.log", 1, time.Time{}, "/robots.txt"))
	a.Add(auditHitAt("a.log", 2, time.Time{}, "/a"))
	a.Add(auditHitAt("a.log", 3, time.Time{}.Add(10*time.Minute), "/b"))
	r := a.Report(genuineResults, conduct.Config{Budget: 20, BudgetWindow: 24 * time.Hour, MinPause: time.Second})
	if got := kindsOf(r); !slices.Equal(got, []string{conduct.KindPause}) {
		t.Errorf("violations %v, want the pause of line 2: %+v", got, r.Violations)
	}
	if len(r.Sites) != 1 || slices.Contains(r.Sites[0].ChecksSkipped, conduct.KindPause) || slices.Contains(r.Sites[0].ChecksSkipped, conduct.KindBudget) {
		t.Errorf("sites %+v: the time checks must run", r.Sites)
	}
	ips := r.IPList()
	if len(ips) != 1 || !ips[0].FirstSeen.Equal(time.Time{}) || !ips[0].LastSeen.Equal(time.Time{}.Add(10*time.Minute)) {
		t.Errorf("ips %+v", ips)
	}
}

// keptHits returns what the audit kept of its hits, as the conduct
// checks see them.
func keptHits(t *testing.T, a *Audit) []conduct.Hit {
	t.Helper()
	var out []conduct.Hit
	if !a.eachHit(nil, func(h conduct.Hit, _ verify.Verdict) { out = append(out, h) }) {
		t.Fatal("the hits do not read back")
	}
	return out
}

// TestAuditRecordOdd: line numbers, durations and resolutions of any
// size keep their values.
func TestAuditRecordOdd(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		line int64
		dur  time.Duration
		res  time.Duration
	}{
		{"small", 7, 1500 * time.Microsecond, time.Millisecond},
		{"negative duration", 10, -2 * time.Second, time.Second},
		{"line past 2^40", 1<<40 + 3, time.Millisecond, time.Second},
		{"nanosecond duration", 8, 1234567 * time.Nanosecond, time.Nanosecond},
		{"an hour's duration", 9, time.Hour, time.Second},
		{"half-second resolution", 11, time.Second, 500 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := auditHitAt("far.log", tt.line, t0, "/x")
			rec.Duration, rec.HasDuration, rec.End, rec.Resolution = tt.dur, true, t0.Add(tt.dur), tt.res
			rec.RemoteUser, rec.RetryAfter = "u", "60"
			a := &Audit{}
			a.Add(rec)
			got, want := keptHits(t, a), conduct.HitOf(rec)
			if len(got) != 1 {
				t.Fatalf("%d hits kept", len(got))
			}
			if !got[0].Time.Equal(want.Time) {
				t.Errorf("time %v, want %v", got[0].Time, want.Time)
			}
			got[0].Time = want.Time
			if a.sites.name(got[0].SiteID) != rec.Host {
				t.Errorf("site id %d names %q, want %q", got[0].SiteID, a.sites.name(got[0].SiteID), rec.Host)
			}
			got[0].SiteID = 0
			if got[0] != want {
				t.Errorf("got  %+v\nwant %+v", got[0], want)
			}
		})
	}
}

// TestAuditRecordFarTimes: hits centuries apart, and odd statuses, keep
// their values, in memory and once in the temporary file.
func TestAuditRecordFarTimes(t *testing.T) {
	recs := []*parse.Record{
		auditHitAt("a.log", 1, time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC), "/"),
		auditHitAt("a.log", 2, time.Time{}, "/old"),
		auditHitAt("a.log", 3, time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC), "/new"),
		auditHitAt("a.log", 4, time.Date(2026, 12, 2, 10, 0, 1, 0, time.UTC), "/odd"),
	}
	recs[3].Status = 5000
	for _, memory := range []int{0, 1} {
		a := &Audit{}
		a.hits.Dir, a.hits.Memory = t.TempDir(), memory
		for range 3000 { // enough to fill a block
			for _, r := range recs {
				a.Add(r)
			}
		}
		kept := keptHits(t, a)
		if _, file := a.hits.Bytes(); (file > 0) != (memory == 1) {
			t.Errorf("memory %d: %d bytes in the file", memory, file)
		}
		if len(kept) != 3000*len(recs) {
			t.Fatalf("%d hits kept", len(kept))
		}
		for i, got := range kept {
			want := conduct.HitOf(recs[i%len(recs)])
			if !got.Time.Equal(want.Time) {
				t.Fatalf("%d: time %v, want %v", i, got.Time, want.Time)
			}
			got.Time = want.Time
			if host := recs[i%len(recs)].Host; a.sites.name(got.SiteID) != host {
				t.Fatalf("%d: site id %d names %q, want %q", i, got.SiteID, a.sites.name(got.SiteID), host)
			}
			got.SiteID = 0
			if got != want {
				t.Fatalf("%d: got  %+v\nwant %+v", i, got, want)
			}
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAllIPsAhead: a report of many addresses makes them ahead of its
// reader: the same addresses, in the same order, as made one by one,
// and a reader that stops early stops it.
func TestAllIPsAhead(t *testing.T) {
	a := &Audit{}
	defer a.Close()
	for i := range 5*ipBatch + 7 {
		rec := &parse.Record{Client: netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), Claimed: true,
			Host: "a.example", Target: "/", Status: 200, UserAgent: "LohiSoftBot/1.0"}
		if i%3 == 0 {
			rec.Client = netip.MustParseAddr("2001:db8::1").Next()
			for range i {
				rec.Client = rec.Client.Next()
			}
		}
		rec.ClientRaw = rec.Client.String()
		a.Add(rec)
	}
	a.AddInput(InputReport{File: "x.log"}, nil)
	r := a.Report(nil, conduct.Config{})
	var want []IPReport
	for _, i := range r.lazy.order {
		want = append(want, r.lazy.report(i))
	}
	if got := r.IPList(); len(got) != 5*ipBatch+7 || !reflect.DeepEqual(got, want) {
		t.Fatalf("%d addresses, want %d in order (first %+v)", len(got), len(want), got[0])
	}
	for _, stop := range []int{1, ipBatch, 3*ipBatch + 1} {
		n := 0
		for ip := range r.AllIPs() {
			if ip.IP != want[n].IP {
				t.Fatalf("address %d is %s, want %s", n, ip.IP, want[n].IP)
			}
			if n++; n == stop {
				break
			}
		}
		if n != stop {
			t.Fatalf("stopped after %d, want %d", n, stop)
		}
	}
}

// TestIPOrderByKey: the report's addresses are in the same order whether
// the plain IPv4 addresses are sorted by their key and merged with the
// others or every entry is sorted by comparing them: addresses that are
// also proxies, IPv6 addresses, addresses with a zone and clients that
// are no address among many IPv4 addresses, in random order.
func TestIPOrderByKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for round := range 20 {
		a := &Audit{}
		base := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
		for i := range 2000 + rng.IntN(2000) {
			rec := auditHitAt("a.log", int64(i+1), base, "/x")
			v4 := netip.AddrFrom4([4]byte{byte(rng.IntN(3)), byte(rng.IntN(256)), 0, byte(rng.IntN(256))})
			rec.Client, rec.ClientRaw = v4, v4.String()
			switch rng.IntN(20) {
			case 0:
				rec.Proxy = true
			case 1:
				rec.Client = netip.AddrFrom16([16]byte{0x20, 0x01, 15: byte(rng.IntN(256))})
			case 2:
				rec.Client = netip.AddrFrom16([16]byte{0xfe, 0x80, 15: byte(rng.IntN(4))}).WithZone([]string{"eth0", "eth1"}[rng.IntN(2)])
			case 3:
				rec.Client, rec.ClientRaw = netip.Addr{}, fmt.Sprintf("host-%d.example", rng.IntN(100))
			}
			a.Add(rec)
		}
		if round%2 == 1 {
			// Mostly other clients: every entry is compared.
			for i := range a.addrs.len() * 2 {
				rec := auditHitAt("a.log", int64(i+1), base, "/x")
				rec.Client = netip.AddrFrom16([16]byte{0x20, 0x01, 14: byte(i >> 8), 15: byte(i)})
				a.Add(rec)
			}
		}
		byKey := a.ipOrderByKey(func(x, y uint32) int { return cmp.Compare(x, y) }) != nil
		if byKey != (round%2 == 0) {
			t.Fatalf("round %d: sorted by key: %v", round, byKey)
		}
		got, want := a.ipOrderBy(true), a.ipOrderBy(false)
		if !slices.Equal(got, want) {
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("round %d: at %d of %d: entry %s, want %s", round, i, len(got), a.name(a.addrs.at(int(got[i]))), a.name(a.addrs.at(int(want[i]))))
				}
			}
		}
	}
}
