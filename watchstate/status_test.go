package watchstate

import (
	"net/netip"
	"testing"
	"time"
)

// TestStopped: a stopped watch's status counts the blocks and holds in
// force at now from the file's records (one address once per target),
// keeps its last status's other figures, and takes the file's PID when
// the status has none.
func TestStopped(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	a, b := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")
	l := &Loaded{State: &State{PID: 42,
		Blocks: []Block{
			{Addr: a, Target: "nftables", Until: now.Add(time.Hour)},
			{Addr: a, Target: "nftables", Until: now.Add(2 * time.Hour)},
			{Addr: b, Target: "nftables", Until: now.Add(-time.Minute)},
			{Addr: b, Target: "crowdsec", Until: now.Add(time.Hour)},
		},
		Holds:  []Hold{{Addr: a, Until: now.Add(time.Hour)}, {Addr: b, Until: now}},
		Status: &Status{Running: true, Held: 7, Blocks: []TargetStatus{{Target: "nftables", Blocked: 5}, {Target: "crowdsec"}, {Target: "exec"}}},
	}}
	s := l.Stopped(now)
	if s.Running || s.PID != 42 || s.Held != 1 {
		t.Errorf("running %v, pid %d, held %d; want false, 42, 1", s.Running, s.PID, s.Held)
	}
	want := map[string]int64{"nftables": 1, "crowdsec": 1, "exec": 0}
	for _, ts := range s.Blocks {
		if ts.InForce != want[ts.Target] {
			t.Errorf("%s: %d in force, want %d", ts.Target, ts.InForce, want[ts.Target])
		}
	}
	if s.Blocks[0].Blocked != 5 {
		t.Errorf("the last status's figures are lost: %+v", s.Blocks[0])
	}
	if s := (&Loaded{State: &State{PID: 9}}).Stopped(now); s.PID != 9 || len(s.Blocks) != 0 {
		t.Errorf("without a status: %+v", s)
	}
}
