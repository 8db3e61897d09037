package watch

import (
	"context"
	"io"
	"net/netip"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/lohisoft/lohibot-audit/watchstate"
)

// BenchmarkSaveState writes the state of a botnet's minute at 10,000 new
// spoofers a second, a million verdicts and a million blocks, while a
// goroutine sees their addresses again and blocks them again as fast as
// it can (allocating nothing): what one write allocates (B/op), the
// longest one of those calls took meanwhile (max-wait-ms: the lock, but
// also the machine's scheduler and the collector), and the most heap in
// use (peak-heap-MB, sampled).
//
//	go test -run '^$' -bench SaveState -benchtime 3x ./watch
func BenchmarkSaveState(b *testing.B) {
	const n = 1_000_000
	now := time.Now()
	j := NewJudge(JudgeOptions{TTL: time.Hour})
	w := New(Options{Subjects: []Subject{{Name: lohiName, Tokens: lohiTokens, Judge: j}}, StateDir: b.TempDir(),
		Events: &Events{W: io.Discard}})
	for i := range n {
		a := netip.AddrFrom4([4]byte{11, byte(i >> 16), byte(i >> 8), byte(i)})
		j.Restore(verify.Result{Addr: a, Verdict: verify.Spoofed, Method: verify.MethodFCrDNS, Reason: verify.ReasonNoPTR}, now)
		w.noteBlock(a, lohiName, watchstate.TargetNFTables, netip.Prefix{}, now, now.Add(7*24*time.Hour))
	}
	runtime.GC()
	var maxWait, peak atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			// Addresses the judge and the book hold: nothing allocated.
			k := i % n
			a := netip.AddrFrom4([4]byte{11, byte(k >> 16), byte(k >> 8), byte(k)})
			t0 := time.Now()
			j.Seen(a, Hit{Time: now})
			w.noteBlock(a, lohiName, watchstate.TargetNFTables, netip.Prefix{}, now, now.Add(7*24*time.Hour))
			if d := time.Since(t0); d.Nanoseconds() > maxWait.Load() {
				maxWait.Store(d.Nanoseconds())
			}
			if i%4096 == 0 {
				runtime.ReadMemStats(&ms)
				if h := int64(ms.HeapInuse); h > peak.Load() {
					peak.Store(h)
				}
			}
		}
	}()
	b.ReportAllocs()
	for b.Loop() {
		w.saveState(context.Background())
	}
	close(stop)
	<-done
	b.ReportMetric(float64(maxWait.Load())/1e6, "max-wait-ms")
	b.ReportMetric(float64(peak.Load())/1e6, "peak-heap-MB")
}
