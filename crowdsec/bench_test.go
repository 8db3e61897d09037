package crowdsec

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"slices"
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

var benchHeld = flag.Int("held", 1000, "BenchmarkQueueLatency: decisions the Local API holds already")

// BenchmarkQueueLatency measures, as watch --crowdsec pushes, the time from
// a new spoofer's ban queued to its decision in force in a real Local API
// that holds -held decisions of ours: the lookup (has a fleet member pushed
// it?) and the push. Run it with -benchtime 1x:
//
//	go test -run '^$' -bench QueueLatency -benchtime 1x ./crowdsec/ -held 10000
func BenchmarkQueueLatency(b *testing.B) {
	l := crowdsectest.Start(b)
	c, err := ReadCredentials(l.Credentials)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	held := make([]Ban, *benchHeld)
	for i := range held {
		a := netip.AddrFrom4([4]byte{100, 64 + byte(i>>16), byte(i >> 8), byte(i)})
		held[i] = Ban{Prefix: netip.PrefixFrom(a, 32), Crawler: "lohisoftbot"}
	}
	if _, err := (&Pusher{Client: &Client{Credentials: c}, TTL: time.Hour}).Push(ctx, held); err != nil {
		b.Fatal(err)
	}
	pushed := make(chan Result, 1)
	q := &Queue{Pusher: &Pusher{Client: &Client{Credentials: c}, TTL: time.Hour, LookupEach: -1}, OnPush: func(r Result) { pushed <- r }}
	go q.Run(ctx)
	for range b.N {
		var ds []time.Duration
		for i := range 200 {
			a := netip.AddrFrom4([4]byte{100, 127, byte(i >> 8), byte(i)})
			start := time.Now()
			if err := q.Add(Ban{Prefix: netip.PrefixFrom(a, 32), Crawler: "lohisoftbot", Evidence: []Evidence{spoofer(a.String(), "x")}}); err != nil {
				b.Fatal(err)
			}
			if r := <-pushed; r.Added+r.Kept != 1 {
				b.Fatalf("push %+v", r)
			}
			ds = append(ds, time.Since(start))
		}
		slices.Sort(ds)
		fmt.Printf("ban queued -> decision in force, %d held: median %s, p99 %s, max %s\n", *benchHeld,
			ds[len(ds)/2].Round(10*time.Microsecond), ds[len(ds)*99/100].Round(10*time.Microsecond), ds[len(ds)-1].Round(10*time.Microsecond))
		b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "median-ms")
	}
}
