package watch

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/verify"
)

func TestGuardBans(t *testing.T) {
	list := &verify.IPList{Prefixes: []netip.Prefix{netip.MustParsePrefix("79.139.58.0/24"), netip.MustParsePrefix("2001:db8:1:0:8000::/65")}}
	never := []netip.Prefix{netip.MustParsePrefix("2001:db8:2::/120")}
	genuine := []netip.Addr{netip.MustParseAddr("2001:db8:3::9")}
	g := NewGuard(list, never, func() []netip.Addr { return genuine })
	for _, tc := range []struct {
		addr    string
		verdict verify.Verdict
		want    string
	}{
		{"203.0.113.7", verify.Spoofed, "[203.0.113.7/32]"},
		{"::ffff:203.0.113.8", verify.Spoofed, "[203.0.113.8/32]"},
		{"2001:db8:9::7", verify.Spoofed, "[2001:db8:9::/64 2001:db8:9::7/128]"},
		{"2001:db8:1::7", verify.Spoofed, "[2001:db8:1::7/128]"},     // its /64 holds listed addresses
		{"2001:db8:2::1:7", verify.Spoofed, "[2001:db8:2::1:7/128]"}, // its /64 holds never-block ones
		{"2001:db8:3::7", verify.Spoofed, "[2001:db8:3::7/128]"},     // its /64 holds a genuine one
		{"2001:db8:2::7", verify.Spoofed, "never-block"},
		{"79.139.58.9", verify.Spoofed, "listed"},
		{"10.1.2.3", verify.Spoofed, "private"},
		{"203.0.113.7", verify.Unverified, "verdict"},
		{"203.0.113.7", verify.Genuine, "verdict"},
	} {
		a := netip.MustParseAddr(tc.addr)
		bans, why := g.Bans(verify.Result{Addr: a.Unmap(), Verdict: tc.verdict})
		got := why
		if why == "" {
			got = fmt.Sprint(bans)
		}
		if got != tc.want {
			t.Errorf("Bans(%s %s) = %s, want %s", tc.addr, tc.verdict, got, tc.want)
		}
	}
}

// What CrowdSec gets never touches what the guard protects: for random
// addresses, a ban is made only of what Blockable blocks and its /64.
func TestGuardBansProperty(t *testing.T) {
	list := &verify.IPList{Prefixes: []netip.Prefix{netip.MustParsePrefix("79.139.58.0/24"), netip.MustParsePrefix("2001:db8:1::/48")}}
	never := []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("2001:db8:2::/48")}
	rng := rand.New(rand.NewPCG(3, 4))
	near := append(append(append([]netip.Prefix{}, protected...), list.Prefixes...), never...)
	var genuine []netip.Addr
	for range 20 {
		genuine = append(genuine, randomAddr(rng, near))
	}
	g := NewGuard(list, never, func() []netip.Addr { return genuine })
	keep := append(append(append([]netip.Prefix{}, protected...), list.Prefixes...), never...)
	for _, a := range genuine {
		keep = append(keep, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	for range 5000 {
		a := randomAddr(rng, near).Unmap()
		bans, why := g.Bans(verify.Result{Addr: a, Verdict: verify.Spoofed})
		blocked, _ := g.Blockable(verify.Result{Addr: a, Verdict: verify.Spoofed})
		if blocked.IsValid() != (why == "") || (why != "" && len(bans) > 0) {
			t.Fatalf("%s: Bans %v %q, Blockable %v", a, bans, why, blocked)
		}
		for _, b := range bans {
			if !b.Contains(a) || (b.Bits() != a.BitLen() && b.Bits() != 64) {
				t.Errorf("%s: ban %s", a, b)
			}
			for _, k := range keep {
				if b.Overlaps(k) {
					t.Errorf("%s: ban %s overlaps %s", a, b, k)
				}
			}
		}
		if strings.Contains(why, "invalid") {
			t.Errorf("%s: %s", a, why)
		}
	}
}
