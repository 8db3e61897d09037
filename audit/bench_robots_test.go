package audit

import (
	"net/netip"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/robots"
	"github.com/lohisoft/lohibot-audit/verify"
)

// BenchmarkConductRobots measures the conduct checks of
// BenchmarkConductOneSite's month of one large site (BENCH_HITS hits,
// default 1,000,000) with its robots.txt: one file for the whole month,
// and three dated versions (the crawler's daily /robots.txt requests
// deciding which one it held).
func BenchmarkConductRobots(b *testing.B) {
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
	texts := []string{
		"User-agent: *\nDisallow: /private/\nDisallow: /search\n",
		"User-agent: *\nDisallow: /private/\nDisallow: /search\nDisallow: /product/1\n",
		"User-agent: LohiSoftBot\nDisallow: /product/2\nAllow: /product/2$\n\nUser-agent: *\nDisallow: /\n",
	}
	month := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var versions []robots.Version
	for i, t := range texts {
		versions = append(versions, robots.Version{From: month.Add(time.Duration(i) * 10 * 24 * time.Hour), Name: "v" + strconv.Itoa(i), Robots: robots.Parse([]byte(t))})
	}
	hist := &robots.History{Versions: versions}
	for _, tc := range []struct {
		name string
		set  func(*conduct.Config)
	}{
		{"one-file", func(c *conduct.Config) {
			rb := versions[1].Robots
			c.Robots = func(string) *robots.Robots { return rb }
		}},
		{"three-versions", func(c *conduct.Config) {
			c.Robots = func(string) *robots.Robots { return hist.Latest().Robots }
			c.RobotsHistory = func(string) *robots.History { return hist }
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cfg := conduct.Config{Token: "LohiSoftBot", Budget: 20, BudgetWindow: 24 * time.Hour, MinPause: time.Second, MinBackoff: 30 * time.Second, MaxViolations: 1000}
			tc.set(&cfg)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuTime()
			var r *Report
			for range b.N {
				r = a.Report(results, cfg)
			}
			cpu = cpuTime() - cpu
			b.StopTimer()
			if r.Summary.GenuineHits != int64(n) {
				b.Fatalf("report: %+v", r.Summary)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "hits/s")
			if cpu > 0 {
				b.ReportMetric(float64(n)*float64(b.N)/cpu.Seconds(), "hits/cpu-s")
			}
		})
	}
}
