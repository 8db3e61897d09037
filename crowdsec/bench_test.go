package crowdsec

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/crowdsectest"
)

var benchBans = flag.Int("bans", 10000, "BenchmarkPush: how many spoofers to push")

// BenchmarkPush pushes -bans IPv4 spoofers to a real Local API (SQLite, as
// Debian configures it) and reports decisions per second for the first
// push (every one added), a second run that knows nothing (every one found
// in force, by one listing of the scenario), and a run with a longer TTL
// (every one extended: a new decision, the old one ended). Run it with
// -benchtime 1x:
//
//	go test -run '^$' -bench Push -benchtime 1x ./crowdsec/ -bans 10000
func BenchmarkPush(b *testing.B) {
	l := crowdsectest.Start(b)
	n := *benchBans
	bans := make([]Ban, n)
	for i := range bans {
		a := netip.AddrFrom4([4]byte{100, 128 + byte(i>>16), byte(i >> 8), byte(i)})
		bans[i] = Ban{Prefix: netip.PrefixFrom(a, 32), Crawler: "lohisoftbot", Evidence: []Evidence{spoofer(a.String(), "LohiSoftBot/1.0")}}
	}
	c, err := ReadCredentials(l.Credentials)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	phase := func(name string, ttl time.Duration, check func(Result) bool) {
		p := &Pusher{Client: &Client{Credentials: c}, TTL: ttl, Version: "bench"}
		start := time.Now()
		res, err := p.Push(ctx, bans)
		d := time.Since(start)
		if err != nil || !check(res) {
			b.Fatalf("%s: %+v, %v", name, res, err)
		}
		b.ReportMetric(float64(n)/d.Seconds(), name+"/s")
		fmt.Printf("%s: %d decisions in %s (%.0f/s)\n", name, n, d.Round(time.Millisecond), float64(n)/d.Seconds())
	}
	for range b.N {
		phase("added", time.Hour, func(r Result) bool { return r.Added == n })
		phase("kept", time.Hour, func(r Result) bool { return r.Kept == n })
		phase("extended", 2*time.Hour, func(r Result) bool { return r.Extended == n })
	}
}
