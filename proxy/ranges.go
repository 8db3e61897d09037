package proxy

import (
	"cmp"
	"net/netip"
	"slices"

	"github.com/lohisoft/lohibot-audit/internal/addrset"
)

// ranges is a set of named prefixes: membership is an addrset.Set's (a
// lookup costs the same for 20 prefixes or 20,000), and the name of the
// most specific prefix holding an address is found by one map lookup per
// prefix length in use. IPv4-mapped IPv6 addresses and prefixes stand for
// the IPv4 ones. The nil *ranges is empty.
type ranges struct {
	set *addrset.Set
	// lens4 and lens6 are the prefix lengths in use, longest first;
	// names maps each masked prefix to its name.
	lens4, lens6 []int
	names        map[netip.Prefix]string
	prefixes     []netip.Prefix // sorted, as given (masked, unmapped)
}

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
		lens := &r.lens6
		if p.Addr().Is4() {
			lens = &r.lens4
		}
		if !slices.Contains(*lens, p.Bits()) {
			*lens = append(*lens, p.Bits())
		}
	}
	r.set = addrset.New(r.prefixes)
	slices.SortFunc(r.prefixes, comparePrefix)
	for _, lens := range [][]int{r.lens4, r.lens6} {
		slices.Sort(lens)
		slices.Reverse(lens)
	}
	return r
}

// comparePrefix orders prefixes by address (IPv4 first), then length.
func comparePrefix(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return cmp.Compare(a.Bits(), b.Bits())
}

// empty reports whether the set holds nothing.
func (r *ranges) empty() bool { return r == nil || r.set.Empty() }

// contains reports whether a (unmapped, any zone ignored) is in the set.
func (r *ranges) contains(a netip.Addr) bool { return r != nil && r.set.Contains(a.Unmap()) }

// containsText is contains for the address written in b (a log field),
// without allocating for IPv4 (addrset.Set.ContainsText).
func (r *ranges) containsText(b []byte) bool { return r != nil && r.set.ContainsText(b) }

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
	return r != nil && ok && r.set.Overlaps(p)
}
