package emit

import (
	"net/netip"
	"slices"
)

// prefixSet answers whether a prefix overlaps any prefix of a set, as
// netip.Prefix.Overlaps does with each in turn, in a binary search: the
// set is kept as sorted, disjoint address ranges, IPv4 and IPv6 apart. A
// million spoofing addresses are checked against a crawler's hundreds of
// listed prefixes without comparing every pair.
type prefixSet struct {
	v4, v6 []addrRange
}

// addrRange is the addresses from lo to hi, both included.
type addrRange struct {
	lo, hi netip.Addr
}

// rangeOf returns the first and last address of a valid prefix.
func rangeOf(p netip.Prefix) addrRange {
	lo := p.Masked().Addr()
	var hi netip.Addr
	if lo.Is4() {
		b := lo.As4()
		setHostBits(b[:], p.Bits())
		hi = netip.AddrFrom4(b)
	} else {
		b := lo.As16()
		setHostBits(b[:], p.Bits())
		hi = netip.AddrFrom16(b)
	}
	return addrRange{lo, hi}
}

// setHostBits sets every bit of b after the first bits.
func setHostBits(b []byte, bits int) {
	for i := range b {
		switch n := bits - 8*i; {
		case n <= 0:
			b[i] = 0xff
		case n < 8:
			b[i] |= 0xff >> n
		}
	}
}

// newPrefixSet returns the set of the valid prefixes of ps. An
// IPv4-mapped IPv6 prefix stays IPv6, as Overlaps takes it.
func newPrefixSet(ps []netip.Prefix) prefixSet {
	var s prefixSet
	for _, p := range ps {
		if !p.IsValid() {
			continue
		}
		if r := rangeOf(p); r.lo.Is4() {
			s.v4 = append(s.v4, r)
		} else {
			s.v6 = append(s.v6, r)
		}
	}
	s.v4, s.v6 = mergeAddrRanges(s.v4), mergeAddrRanges(s.v6)
	return s
}

// mergeAddrRanges sorts rs and merges the ranges that overlap, in place.
func mergeAddrRanges(rs []addrRange) []addrRange {
	slices.SortFunc(rs, func(x, y addrRange) int { return x.lo.Compare(y.lo) })
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && r.lo.Compare(out[n-1].hi) <= 0 {
			if r.hi.Compare(out[n-1].hi) > 0 {
				out[n-1].hi = r.hi
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

// overlaps reports whether q overlaps a prefix of the set: whether the
// first range that ends at or after q's first address starts at or before
// q's last one.
func (s prefixSet) overlaps(q netip.Prefix) bool {
	if !q.IsValid() {
		return false
	}
	rs := s.v6
	if q.Addr().Is4() {
		rs = s.v4
	}
	r := rangeOf(q)
	i, _ := slices.BinarySearchFunc(rs, r.lo, func(x addrRange, lo netip.Addr) int {
		if x.hi.Compare(lo) < 0 {
			return -1
		}
		return 1
	})
	return i < len(rs) && rs[i].lo.Compare(r.hi) <= 0
}
