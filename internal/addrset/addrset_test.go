package addrset

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
)

// masked is ps masked, as New keeps them.
func masked(ps []netip.Prefix) []netip.Prefix {
	out := make([]netip.Prefix, len(ps))
	for i, p := range ps {
		out[i] = p.Masked()
	}
	return out
}

// overlapsAny reports whether p overlaps one of set, comparing every pair:
// the reference that Set.Overlaps must agree with.
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
func TestOverlapsAsLinearScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	counts := map[bool]int{}
	for range 3000 {
		set := make([]netip.Prefix, rng.IntN(12))
		for i := range set {
			set[i] = randomPrefix(rng)
		}
		for _, ps := range [][]netip.Prefix{set, masked(set)} {
			s := New(ps)
			for range 20 {
				q := randomPrefix(rng)
				want := overlapsAny(q, ps)
				if got := s.Overlaps(q); got != want {
					t.Fatalf("Overlaps(%s) = %v, the linear scan says %v; set %v", q, got, want, ps)
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
func TestOverlapsEdges(t *testing.T) {
	s := New([]netip.Prefix{
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
		if got := s.Overlaps(netip.MustParsePrefix(q)); got != want {
			t.Errorf("Overlaps(%s) = %v, want %v", q, got, want)
		}
	}
	if New(nil).Overlaps(netip.MustParsePrefix("0.0.0.0/0")) || (*Set)(nil).Overlaps(netip.MustParsePrefix("::/0")) {
		t.Error("the empty set overlaps 0.0.0.0/0")
	}
	if s.Overlaps(netip.Prefix{}) {
		t.Error("the set overlaps the invalid prefix")
	}
}

// TestAddrSetMatchesPrefixes checks the set's binary search against the
// obvious definition, with prefixes that overlap, touch and nest, and
// many of them, as several crawlers' lists hold.
func TestContainsAsLinearScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := 0; round < 200; round++ {
		var prefixes []netip.Prefix
		for range 1 + rng.IntN([]int{12, 300}[round%2]) {
			if rng.IntN(3) == 0 {
				var b [16]byte
				b[0], b[1], b[2] = 0x20, 0x01, byte(rng.IntN(4))
				b[3] = byte(rng.IntN(256))
				prefixes = append(prefixes, netip.PrefixFrom(netip.AddrFrom16(b), 24+rng.IntN(105)).Masked())
				continue
			}
			a := netip.AddrFrom4([4]byte{66, 249, byte(rng.IntN(8)), byte(rng.IntN(256))})
			prefixes = append(prefixes, netip.PrefixFrom(a, 16+rng.IntN(17)).Masked())
		}
		s := New(prefixes)
		for range 300 {
			var a netip.Addr
			if rng.IntN(3) == 0 {
				var b [16]byte
				b[0], b[1], b[2], b[3] = 0x20, 0x01, byte(rng.IntN(4)), byte(rng.IntN(256))
				for i := 4; i < 16; i++ {
					b[i] = byte(rng.IntN(256))
				}
				a = netip.AddrFrom16(b)
			} else {
				a = netip.AddrFrom4([4]byte{66, 249, byte(rng.IntN(9)), byte(rng.IntN(256))})
			}
			want := false
			for _, p := range prefixes {
				want = want || p.Contains(a)
			}
			if got := s.Contains(a); got != want {
				t.Fatalf("Contains(%s) = %v, want %v (%d prefixes)", a, got, want, len(prefixes))
			}
			if a.Is4() && s.Contains4(a.As4()) != want {
				t.Fatalf("Contains4(%s) = %v, want %v", a, !want, want)
			}
		}
	}
}

// BenchmarkContainsGoogle looks up addresses in a set as large as
// Googlebot's published lists.
func BenchmarkContainsGoogle(b *testing.B) {
	var prefixes []netip.Prefix
	for i := range 250 {
		prefixes = append(prefixes, netip.PrefixFrom(netip.AddrFrom4([4]byte{66, 249, byte(i / 8), byte(i % 8 * 32)}), 27))
	}
	s := New(prefixes)
	a := netip.MustParseAddr("203.0.113.77")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s.Contains(a)
	}
}

// TestSingles4: a few single IPv4 addresses are given as text, anything
// else is not.
func TestSingles4(t *testing.T) {
	p := func(ss ...string) []netip.Prefix {
		var out []netip.Prefix
		for _, s := range ss {
			out = append(out, netip.MustParsePrefix(s))
		}
		return out
	}
	if got := New(p("79.139.58.121/32", "79.139.58.98/32", "79.139.58.98/32")).Singles4(); !slices.Equal(got, []string{"79.139.58.121", "79.139.58.98"}) {
		t.Errorf("Singles4 = %q", got)
	}
	for _, ps := range [][]netip.Prefix{p("79.139.58.0/24"), p("79.139.58.98/32", "2001:db8::1/128"), nil} {
		if got := New(ps).Singles4(); got != nil {
			t.Errorf("%v: Singles4 = %q, want nil", ps, got)
		}
	}
	var none *Set
	if none.Contains(netip.MustParseAddr("79.139.58.98")) || !none.Empty() || none.HasIPv6() || none.Singles4() != nil {
		t.Error("the nil set is not empty")
	}
}

// TestContainsText checks the text path of the listed addresses against
// the set's own lookup, with sets of single addresses (matched as text),
// of ranges and of both families, and texts written other ways.
func TestContainsText(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := 0; round < 200; round++ {
		var prefixes []netip.Prefix
		for range 1 + rng.IntN([]int{3, 300}[round%2]) {
			if round%3 == 0 {
				var b [16]byte
				b[0], b[1], b[2] = 0x20, 0x01, byte(rng.IntN(4))
				b[3] = byte(rng.IntN(256))
				prefixes = append(prefixes, netip.PrefixFrom(netip.AddrFrom16(b), 24+rng.IntN(105)).Masked())
				continue
			}
			a := netip.AddrFrom4([4]byte{66, 249, byte(rng.IntN(8)), byte(rng.IntN(256))})
			bits := 32
			if round%2 == 1 {
				bits = 16 + rng.IntN(17)
			}
			prefixes = append(prefixes, netip.PrefixFrom(a, bits).Masked())
		}
		s := New(prefixes)
		for range 300 {
			var a netip.Addr
			if rng.IntN(3) == 0 {
				var b [16]byte
				b[0], b[1], b[2], b[3] = 0x20, 0x01, byte(rng.IntN(4)), byte(rng.IntN(256))
				for i := 4; i < 16; i++ {
					b[i] = byte(rng.IntN(256))
				}
				a = netip.AddrFrom16(b)
			} else {
				a = netip.AddrFrom4([4]byte{66, 249, byte(rng.IntN(9)), byte(rng.IntN(256))})
			}
			want := s.Contains(a)
			if got := s.ContainsText([]byte(a.String())); got != want {
				t.Fatalf("ContainsText(%s) = %v, want %v (%d prefixes)", a, got, want, len(prefixes))
			}
			if a.Is4() {
				if got := s.ContainsText([]byte("::ffff:" + a.String())); got != want && s.HasIPv6() {
					t.Fatalf("ContainsText(::ffff:%s) = %v, want %v", a, got, want)
				}
				b := a.As4()
				if got := s.ContainsText(fmt.Appendf(nil, "%d.%d.%d.0%d", b[0], b[1], b[2], b[3])); got {
					t.Fatalf("a leading zero is listed: %s", a)
				}
			}
		}
	}
}

// BenchmarkContainsTextGoogle looks up the text of an address in a set as
// large as Googlebot's published lists.
func BenchmarkContainsTextGoogle(b *testing.B) {
	var prefixes []netip.Prefix
	for i := range 250 {
		prefixes = append(prefixes, netip.PrefixFrom(netip.AddrFrom4([4]byte{66, 249, byte(i / 8), byte(i % 8 * 32)}), 27))
	}
	s := New(prefixes)
	text := []byte("203.0.113.77")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s.ContainsText(text)
	}
}

// BenchmarkContainsTextBuiltin looks up the text of an address in a
// built-in list of two addresses (matched as text).
func BenchmarkContainsTextBuiltin(b *testing.B) {
	s := New([]netip.Prefix{netip.MustParsePrefix("79.139.58.98/32"), netip.MustParsePrefix("79.139.58.121/32")})
	text := []byte("203.0.113.77")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s.ContainsText(text)
	}
}
