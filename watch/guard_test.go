package watch

import (
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/lohisoft/lohibot-audit/proxy"
	"github.com/lohisoft/lohibot-audit/verify"
)

// protected are ranges the test itself knows may never be blocked,
// written out here rather than taken from emit.
var protected = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("169.254.0.0/16"), netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.0.0.0/24"), netip.MustParsePrefix("192.168.0.0/16"), netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("224.0.0.0/4"), netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("::/128"), netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("fc00::/7"),
	netip.MustParsePrefix("fe80::/10"), netip.MustParsePrefix("ff00::/8"),
}

// randomAddr draws addresses, often from the ranges that matter.
func randomAddr(rng *rand.Rand, near []netip.Prefix) netip.Addr {
	if rng.IntN(3) == 0 {
		p := near[rng.IntN(len(near))]
		b := p.Addr().AsSlice()
		for i := p.Bits() / 8; i < len(b); i++ {
			b[i] = byte(rng.IntN(256))
		}
		a, _ := netip.AddrFromSlice(b)
		if q, err := a.Prefix(p.Bits()); err == nil && q == p {
			return a
		}
		return p.Addr()
	}
	if rng.IntN(4) == 0 {
		var b [16]byte
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return netip.AddrFrom16(b)
	}
	return netip.AddrFrom4([4]byte{byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256))})
}

// Nothing genuine, listed, private, reserved, never-block or unverified is
// ever acted on; a spoofed public address is.
func TestGuardProperty(t *testing.T) {
	list := &verify.IPList{Prefixes: []netip.Prefix{netip.MustParsePrefix("79.139.58.0/24"), netip.MustParsePrefix("2001:db8:1::/48")}}
	never := []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("2001:db8:2::/48")}
	rng := rand.New(rand.NewPCG(1, 2))
	// IPv4-mapped addresses stand for the IPv4 ones: they are judged and
	// blocked as those.
	near := append(append(append([]netip.Prefix{netip.MustParsePrefix("::ffff:0:0/96")}, protected...), list.Prefixes...), never...)
	var genuine []netip.Addr
	for range 20 {
		genuine = append(genuine, randomAddr(rng, near))
	}
	g := NewGuard(list, never, func() []netip.Addr { return genuine })
	verdicts := []verify.Verdict{verify.Genuine, verify.Spoofed, verify.Unverified}
	blocked := 0
	for i := range 20000 {
		a := randomAddr(rng, near)
		if i%50 == 0 {
			a = genuine[rng.IntN(len(genuine))]
		}
		r := verify.Result{Addr: a, Verdict: verdicts[rng.IntN(3)]}
		got, why := g.Blockable(r)
		bad := r.Verdict != verify.Spoofed || list.Contains(a)
		for _, p := range append(append([]netip.Prefix(nil), protected...), never...) {
			bad = bad || p.Contains(a.Unmap())
		}
		for _, x := range genuine {
			bad = bad || x.Unmap() == a.Unmap()
		}
		if got.IsValid() {
			blocked++
			if bad {
				t.Fatalf("%s (%s) would be blocked", a, r.Verdict)
			}
			if got != a.Unmap() {
				t.Fatalf("%s: blocks %s instead", a, got)
			}
		} else if why == "" {
			t.Fatalf("%s: not blocked, with no reason", a)
		}
	}
	if blocked < 1000 {
		t.Fatalf("only %d of 20000 blocked: the property says little", blocked)
	}
	// A public spoofer is blocked; the same address listed later is not.
	a := netip.MustParseAddr("203.0.113.50")
	if got, _ := g.Blockable(verify.Result{Addr: a, Verdict: verify.Spoofed}); got != a {
		t.Fatalf("public spoofer not blocked")
	}
	g.SetList(&verify.IPList{Prefixes: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}}, nil)
	if got, why := g.Blockable(verify.Result{Addr: a, Verdict: verify.Spoofed}); got.IsValid() || why != "listed" {
		t.Fatalf("after the list changed: %v %q, want not blocked, listed", got, why)
	}
}

// TestGuardNeverBlocksProxies: no CDN edge and no trusted proxy is acted
// on (watch --nftables, --exec and CrowdSec all ask the guard), even
// judged spoofed, and with no proxies given the built-in CDN edges are
// still spared.
func TestGuardNeverBlocksProxies(t *testing.T) {
	trust, err := proxy.NewSet(nil, []string{"203.0.113.0/24", "private"}, false)
	if err != nil {
		t.Fatal(err)
	}
	var edges []netip.Prefix
	for _, l := range proxy.BuiltinEdges().Lists {
		edges = append(edges, l.Prefixes...)
	}
	near := append([]netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}, edges...)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, set := range []*proxy.Set{nil, trust} {
		g := NewGuard(&verify.IPList{}, nil, nil)
		g.SetProxies(set)
		blocked := 0
		for range 5000 {
			a := randomAddr(rng, near)
			got, why := g.Blockable(verify.Result{Addr: a, Verdict: verify.Spoofed})
			_, isProxy := set.Proxy(a)
			if got.IsValid() {
				blocked++
				if isProxy {
					t.Fatalf("%s, a proxy, would be blocked", a)
				}
			} else if isProxy && why != "proxy" && why != "private" {
				t.Errorf("%s: not blocked for %q, want proxy (or private)", a, why)
			}
		}
		if blocked == 0 {
			t.Error("nothing was blocked at all")
		}
	}
	g := NewGuard(&verify.IPList{}, nil, nil)
	if a, why := g.Blockable(verify.Result{Addr: netip.MustParseAddr("162.158.106.126"), Verdict: verify.Spoofed}); a.IsValid() || why != "proxy" {
		t.Errorf("the Cloudflare edge of a real bingbot request: %v %q", a, why)
	}
}

// TestVerifierFactoryKeepsProxies: the fresh verifiers watch judges with
// know the run's trusted proxies, not the built-in edges only.
func TestVerifierFactoryKeepsProxies(t *testing.T) {
	trust, err := proxy.NewSet(nil, []string{"203.0.113.0/24"}, false)
	if err != nil {
		t.Fatal(err)
	}
	v := verifierFactory(&verify.Verifier{Proxies: trust, Offline: true}, nil)()
	r, ok := v.Settled(netip.MustParseAddr("203.0.113.9"))
	if !ok || r.Verdict != verify.Unverified || r.Reason != verify.ReasonProxy || r.Proxy != "203.0.113.0/24" {
		t.Errorf("a trusted proxy: %v %+v", ok, r)
	}
}

// A batch is decided as each of its addresses alone, duplicates and
// mapped forms included.
func TestGuardBatchAgreesWithSingle(t *testing.T) {
	list := &verify.IPList{Prefixes: []netip.Prefix{netip.MustParsePrefix("79.139.58.0/24"), netip.MustParsePrefix("2001:db8:1::/48")}}
	never := []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("2001:db8:2::/48")}
	rng := rand.New(rand.NewPCG(3, 4))
	near := append(append(append([]netip.Prefix{netip.MustParsePrefix("::ffff:0:0/96")}, protected...), list.Prefixes...), never...)
	var genuine []netip.Addr
	for range 20 {
		genuine = append(genuine, randomAddr(rng, near))
	}
	g := NewGuard(list, never, func() []netip.Addr { return genuine })
	verdicts := []verify.Verdict{verify.Genuine, verify.Spoofed, verify.Spoofed, verify.Unverified}
	blocked, skipped := 0, 0
	for range 200 {
		rs := make([]verify.Result, 1+rng.IntN(300))
		for i := range rs {
			a := randomAddr(rng, near)
			switch rng.IntN(20) {
			case 0:
				a = genuine[rng.IntN(len(genuine))]
			case 1:
				if i > 0 {
					a = rs[rng.IntN(i)].Addr
				}
			}
			rs[i] = verify.Result{Addr: a, Verdict: verdicts[rng.IntN(len(verdicts))]}
		}
		got, whys := g.BlockableAll(rs)
		if len(got) != len(rs) || len(whys) != len(rs) {
			t.Fatalf("%d results gave %d addresses and %d reasons", len(rs), len(got), len(whys))
		}
		for i, r := range rs {
			a, why := g.Blockable(r)
			if got[i] != a || whys[i] != why {
				t.Fatalf("%s (%s) in a batch of %d: %v %q, alone: %v %q", r.Addr, r.Verdict, len(rs), got[i], whys[i], a, why)
			}
			if a.IsValid() {
				blocked++
			} else if why != "verdict" {
				skipped++
			}
		}
	}
	if blocked < 1000 || skipped < 1000 {
		t.Fatalf("%d blocked, %d skipped by the rules: the comparison says little", blocked, skipped)
	}
}
