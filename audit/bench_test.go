package audit

import (
	"math"
	"math/rand/v2"
	"net/netip"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/verify"
)

// BenchmarkConductOneSite measures the conduct checks and the report of
// an audit that holds a month of one crawler on one large site
// (BENCH_HITS hits, default 1,000,000, as nginx logs them with durations,
// a line when a request ends), with LohiSoftBot's promises and the
// default --max-violations: the claimed hits per second through the
// checks, reading the kept hits back from the temporary file included.
func BenchmarkConductOneSite(b *testing.B) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("BENCH_HITS")); err == nil && v > 0 {
		n = v
	}
	a := &Audit{}
	defer a.Close()
	addCrawl(a, n)
	results := map[netip.Addr]verify.Result{
		netip.MustParseAddr("79.139.58.98"):  {Verdict: verify.Genuine, Method: verify.MethodIPList},
		netip.MustParseAddr("79.139.58.121"): {Verdict: verify.Genuine, Method: verify.MethodIPList},
	}
	cfg := conduct.Config{Budget: 20, BudgetWindow: 24 * time.Hour, MinPause: time.Second, MinBackoff: 30 * time.Second, MaxViolations: 1000}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	var r *Report
	for range b.N {
		r = a.Report(results, cfg)
	}
	cpu = cpuTime() - cpu
	b.StopTimer()
	if r.Summary.GenuineHits != int64(n) || r.Summary.Violations == 0 {
		b.Fatalf("report: %+v", r.Summary)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "hits/s")
	if cpu > 0 {
		// What a busy machine disturbs least: the CPU time taken (the
		// garbage collector's on other cores included).
		b.ReportMetric(float64(n)*float64(b.N)/cpu.Seconds(), "hits/cpu-s")
	}
}

// addCrawl adds n claimed hits of a crawler to one site over 30 days:
// bursts over a few connections, durations of about 120 ms (some of
// seconds), /robots.txt about daily, a few 304, 404, 429 and 5xx answers;
// in the order nginx writes them (by end), as one input.
func addCrawl(a *Audit, n int) {
	rng := rand.New(rand.NewPCG(1, 2))
	t := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	gap := 30 * 24 * time.Hour * 4 / 5 / time.Duration(n/6+1)
	addrs := []netip.Addr{netip.MustParseAddr("79.139.58.98"), netip.MustParseAddr("79.139.58.121")}
	statuses := []int{200, 200, 200, 200, 200, 200, 200, 200, 304, 404, 301, 429, 503}
	var pending []*parse.Record // by end, a few at a time
	nextRobots := t
	line := int64(0)
	flush := func(before time.Time) {
		k := 0
		for _, r := range pending {
			if r.End.Before(before) {
				line++
				r.Line = line
				a.Add(r)
			} else {
				pending[k] = r
				k++
			}
		}
		pending = pending[:k]
	}
	for i := 0; i < n; {
		t = t.Add(time.Duration(rng.ExpFloat64() * float64(gap)))
		flush(t)
		start := t
		for k := 1 + rng.IntN(11); k > 0 && i < n; k, i = k-1, i+1 {
			d := time.Duration(math.Exp(rng.NormFloat64()*0.8+math.Log(0.12)) * float64(time.Second)).Round(time.Millisecond)
			path := "/product/" + strconv.Itoa(rng.IntN(2_000_000))
			if !start.Before(nextRobots) {
				path, nextRobots = "/robots.txt", start.Add(20*time.Hour+time.Duration(rng.IntN(8*3600))*time.Second)
			}
			end := start.Add(d)
			rec := &parse.Record{
				File: "crawl.log", Client: addrs[rng.IntN(2)], Time: end.Truncate(time.Second), Start: end.Truncate(time.Second).Add(-d),
				End: end.Truncate(time.Second), Duration: d, HasDuration: true, Resolution: time.Second,
				Target: path, Status: statuses[rng.IntN(len(statuses))], Host: "www.example.com", Claimed: true,
				UserAgent: "LohiSoftBot/1.0 (+https://lohisoft.com/bot)",
			}
			rec.ClientRaw = rec.Client.String()
			pending = append(pending, rec)
			start = end.Add(time.Duration(50+rng.IntN(400)) * time.Millisecond)
		}
	}
	flush(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))
	a.AddInput(InputReport{File: "crawl.log"}, nil)
}
