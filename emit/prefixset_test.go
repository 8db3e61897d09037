package emit

import (
	"math/rand/v2"
	"net/netip"
	"testing"
)

// overlapsAny reports whether p overlaps one of set, comparing every pair:
// the reference that prefixSet must agree with.
func overlapsAny(p netip.Prefix, set []netip.Prefix) bool {
	for _, q := range set {
		if q.Overlaps(p) {
			return true
		}
	}
	return false
}

// randomPrefix returns a prefix of any width near one of a few bases, so
// that random prefixes often hold, meet or touch one another: IPv4, IPv6
// and IPv4-mapped IPv6, the address not always masked, now and then the
// invalid zero prefix.
func randomPrefix(rng *rand.Rand) netip.Prefix {
	bases := []netip.Addr{
		netip.MustParseAddr("66.249.64.0"),
		netip.MustParseAddr("0.0.0.0"),
		netip.MustParseAddr("255.255.255.255"),
		netip.MustParseAddr("2001:4860:4801::"),
		netip.MustParseAddr("::"),
		netip.MustParseAddr("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
		netip.MustParseAddr("::ffff:66.249.64.0"),
	}
	if rng.IntN(50) == 0 {
		return netip.Prefix{}
	}
	a := bases[rng.IntN(len(bases))]
	if a.Is4() {
		b := a.As4()
		for range rng.IntN(4) {
			i := rng.IntN(32)
			b[i/8] ^= 0x80 >> (i % 8)
		}
		a = netip.AddrFrom4(b)
	} else {
		b := a.As16()
		for range rng.IntN(4) {
			i := rng.IntN(128)
			if a.Is4In6() {
				i = 96 + rng.IntN(32) // stay mapped
			}
			b[i/8] ^= 0x80 >> (i % 8)
		}
		a = netip.AddrFrom16(b)
	}
	p := netip.PrefixFrom(a, rng.IntN(a.BitLen()+1))
	if rng.IntN(2) == 0 {
		p = p.Masked()
	}
	return p
}

// TestPrefixSetOverlapsAsLinearScan checks the set's binary search against
// netip.Prefix.Overlaps with every prefix of random sets, as given and as
// the plan normalises them.
func TestPrefixSetOverlapsAsLinearScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	counts := map[bool]int{}
	for range 3000 {
		set := make([]netip.Prefix, rng.IntN(12))
		for i := range set {
			set[i] = randomPrefix(rng)
		}
		for _, ps := range [][]netip.Prefix{set, normPrefixes(set)} {
			s := newPrefixSet(ps)
			for range 20 {
				q := randomPrefix(rng)
				want := overlapsAny(q, ps)
				if got := s.overlaps(q); got != want {
					t.Fatalf("overlaps(%s) = %v, the linear scan says %v; set %v", q, got, want, ps)
				}
				counts[want]++
			}
		}
	}
	if counts[true] < 1000 || counts[false] < 1000 {
		t.Fatalf("the random prefixes overlapped %d times and missed %d times: too few of one to test both", counts[true], counts[false])
	}
}

// TestPrefixSetEdges checks the cases a binary search gets wrong first: a
// query that only touches a range's first or last address, one that holds
// a whole range, the whole address space, and the families apart.
func TestPrefixSetEdges(t *testing.T) {
	s := newPrefixSet([]netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/24"),
		netip.MustParsePrefix("10.0.2.0/24"),
		netip.MustParsePrefix("10.0.2.128/25"),
		netip.MustParsePrefix("2001:db8::/64"),
		netip.MustParsePrefix("::ffff:10.0.5.0/120"),
	})
	for q, want := range map[string]bool{
		"10.0.0.0/32":             true,
		"10.0.0.255/32":           true,
		"10.0.1.0/32":             false,
		"10.0.1.0/24":             false,
		"10.0.2.255/32":           true,
		"10.0.3.0/32":             false,
		"10.0.0.0/16":             true,
		"0.0.0.0/0":               true,
		"10.0.5.1/32":             false, // the mapped prefix stays IPv6
		"::ffff:10.0.5.1/128":     true,
		"2001:db8::ffff/128":      true,
		"2001:db8:0:1::/64":       false,
		"2001:db8::/32":           true,
		"::/0":                    true,
		"9.255.255.255/32":        false,
		"255.255.255.255/32":      false,
		"ffff::/16":               false,
		"2001:db7:ffff:ffff::/64": false,
	} {
		if got := s.overlaps(netip.MustParsePrefix(q)); got != want {
			t.Errorf("overlaps(%s) = %v, want %v", q, got, want)
		}
	}
	if (prefixSet{}).overlaps(netip.MustParsePrefix("0.0.0.0/0")) {
		t.Error("the empty set overlaps 0.0.0.0/0")
	}
	if s.overlaps(netip.Prefix{}) {
		t.Error("the set overlaps the invalid prefix")
	}
}
