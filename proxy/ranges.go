package proxy

import (
	"cmp"
	"encoding/binary"
	"net/netip"
	"slices"
)

// ranges is a set of named prefixes: membership by binary search over
// sorted, merged address ranges (a lookup costs the same for 20 prefixes
// or 20,000), and the name of the most specific prefix holding an address
// by one map lookup per prefix length in use. The zero value is empty.
type ranges struct {
	v4 []range4
	v6 []range6
	// lens4 and lens6 are the prefix lengths in use, longest first;
	// names maps each masked prefix to its name.
	lens4, lens6 []int
	names        map[netip.Prefix]string
	prefixes     []netip.Prefix // sorted, as given (masked, unmapped)
}

type range4 struct{ lo, hi uint32 }
type range6 struct{ lo, hi [2]uint64 }

// named is a prefix and whom it belongs to.
type named struct {
	p    netip.Prefix
	name string
}

// normPrefix masks p and turns an IPv4-mapped IPv6 prefix of /96 or longer
// into the IPv4 prefix it stands for; ok is false for an invalid prefix.
func normPrefix(p netip.Prefix) (netip.Prefix, bool) {
	if !p.IsValid() {
		return netip.Prefix{}, false
	}
	a, bits := p.Addr().WithZone(""), p.Bits()
	if a.Is4In6() {
		if bits < 96 {
			return netip.Prefix{}, false
		}
		a, bits = a.Unmap(), bits-96
	}
	q, err := a.Prefix(bits)
	return q, err == nil
}

// newRanges builds a set; the first name given to a prefix stays.
func newRanges(ps []named) *ranges {
	r := &ranges{names: map[netip.Prefix]string{}}
	for _, n := range ps {
		p, ok := normPrefix(n.p)
		if !ok {
			continue
		}
		if _, dup := r.names[p]; dup {
			continue
		}
		r.names[p] = n.name
		r.prefixes = append(r.prefixes, p)
		if p.Addr().Is4() {
			b := p.Addr().As4()
			lo := binary.BigEndian.Uint32(b[:])
			r.v4 = append(r.v4, range4{lo, lo | uint32(uint64(1)<<(32-p.Bits())-1)})
			if !slices.Contains(r.lens4, p.Bits()) {
				r.lens4 = append(r.lens4, p.Bits())
			}
			continue
		}
		lo := split6(p.Addr())
		r.v6 = append(r.v6, range6{lo, last6(lo, p.Bits())})
		if !slices.Contains(r.lens6, p.Bits()) {
			r.lens6 = append(r.lens6, p.Bits())
		}
	}
	slices.SortFunc(r.prefixes, comparePrefix)
	slices.Sort(r.lens4)
	slices.Reverse(r.lens4)
	slices.Sort(r.lens6)
	slices.Reverse(r.lens6)
	slices.SortFunc(r.v4, func(x, y range4) int { return cmp.Compare(x.lo, y.lo) })
	out4 := r.v4[:0]
	for _, x := range r.v4 {
		if n := len(out4); n > 0 && (x.lo <= out4[n-1].hi || x.lo-1 == out4[n-1].hi) {
			out4[n-1].hi = max(out4[n-1].hi, x.hi)
			continue
		}
		out4 = append(out4, x)
	}
	r.v4 = out4
	slices.SortFunc(r.v6, func(x, y range6) int { return cmp6(x.lo, y.lo) })
	out6 := r.v6[:0]
	for _, x := range r.v6 {
		if n := len(out6); n > 0 && cmp6(x.lo, out6[n-1].hi) <= 0 {
			if cmp6(x.hi, out6[n-1].hi) > 0 {
				out6[n-1].hi = x.hi
			}
			continue
		}
		out6 = append(out6, x)
	}
	r.v6 = out6
	return r
}

func split6(a netip.Addr) [2]uint64 {
	b := a.As16()
	return [2]uint64{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
}

// last6 is the last address of the IPv6 prefix of bits that starts at lo.
func last6(lo [2]uint64, bits int) [2]uint64 {
	hi := lo
	if n := 128 - bits; n >= 64 {
		hi[1] = ^uint64(0)
		if n == 128 {
			hi[0] = ^uint64(0)
		} else {
			hi[0] |= uint64(1)<<(n-64) - 1
		}
	} else if n > 0 {
		hi[1] |= uint64(1)<<n - 1
	}
	return hi
}

func cmp6(x, y [2]uint64) int {
	if c := cmp.Compare(x[0], y[0]); c != 0 {
		return c
	}
	return cmp.Compare(x[1], y[1])
}

// comparePrefix orders prefixes by address (IPv4 first), then length.
func comparePrefix(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return cmp.Compare(a.Bits(), b.Bits())
}

// empty reports whether the set holds nothing.
func (r *ranges) empty() bool { return r == nil || len(r.v4) == 0 && len(r.v6) == 0 }

// contains reports whether a (unmapped, any zone ignored) is in the set.
func (r *ranges) contains(a netip.Addr) bool {
	if r == nil || !a.IsValid() {
		return false
	}
	a = a.Unmap()
	if a.Is4() {
		b := a.As4()
		return r.contains4(binary.BigEndian.Uint32(b[:]))
	}
	x := split6(a)
	i, _ := slices.BinarySearchFunc(r.v6, x, func(g range6, x [2]uint64) int {
		if cmp6(g.lo, x) <= 0 {
			return -1
		}
		return 1
	})
	return i > 0 && cmp6(x, r.v6[i-1].hi) <= 0
}

func (r *ranges) contains4(x uint32) bool {
	if len(r.v4) <= 16 {
		// A CDN's few ranges: a scan beats the search's setup.
		for _, g := range r.v4 {
			if g.lo <= x && x <= g.hi {
				return true
			}
		}
		return false
	}
	i, _ := slices.BinarySearchFunc(r.v4, x, func(g range4, x uint32) int {
		if g.lo <= x {
			return -1
		}
		return 1
	})
	return i > 0 && x <= r.v4[i-1].hi
}

// name returns the name of the most specific prefix holding a.
func (r *ranges) name(a netip.Addr) (string, bool) {
	if !r.contains(a) {
		return "", false
	}
	a = a.Unmap().WithZone("")
	lens := r.lens6
	if a.Is4() {
		lens = r.lens4
	}
	for _, l := range lens {
		p, _ := a.Prefix(l)
		if n, ok := r.names[p]; ok {
			return n, true
		}
	}
	return "", false // not reached: contains found a prefix
}

// overlaps reports whether any address of p is in the set.
func (r *ranges) overlaps(p netip.Prefix) bool {
	p, ok := normPrefix(p)
	if r == nil || !ok {
		return false
	}
	if r.contains(p.Addr()) {
		return true
	}
	// A prefix of the set inside p starts within p: after p's first
	// address, the first range that starts there tells.
	if p.Addr().Is4() {
		b := p.Addr().As4()
		lo := binary.BigEndian.Uint32(b[:])
		hi := lo | uint32(uint64(1)<<(32-p.Bits())-1)
		i, _ := slices.BinarySearchFunc(r.v4, lo, func(g range4, x uint32) int { return cmp.Compare(g.lo, x) })
		return i < len(r.v4) && r.v4[i].lo <= hi
	}
	lo := split6(p.Addr())
	hi := last6(lo, p.Bits())
	i, _ := slices.BinarySearchFunc(r.v6, lo, func(g range6, x [2]uint64) int { return cmp6(g.lo, x) })
	return i < len(r.v6) && cmp6(r.v6[i].lo, hi) <= 0
}
