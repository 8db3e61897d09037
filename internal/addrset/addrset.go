// Package addrset is the one set of address ranges of the program: a
// crawler's IP list as the log reader, the verifier and the rule planner
// look addresses and prefixes up in it. Its prefixes are kept as sorted,
// merged ranges, IPv4 and IPv6 apart, so that a lookup costs a binary
// search however many prefixes several crawlers' lists hold (Googlebot
// alone publishes hundreds), where a scan would compare every one.
//
// Addresses and prefixes are taken as net/netip takes them: an
// IPv4-mapped IPv6 address is an IPv6 address, in IPv6 ranges; callers
// that mean the IPv4 address unmap it first.
package addrset

import (
	"cmp"
	"encoding/binary"
	"net/netip"
	"slices"
)

// Set is a set of addresses given as prefixes. Build it with New; the nil
// *Set is empty. A Set is safe for concurrent use.
type Set struct {
	v4 []range4
	v6 []range6
	// singles4 are the set's addresses as text when it holds a few
	// single IPv4 addresses (/32) and nothing else: the usual built-in
	// list, which a log reader can then match by comparing bytes.
	singles4 []string
}

// range4 and range6 are address ranges, first and last included.
type range4 struct{ lo, hi uint32 }
type range6 struct{ lo, hi [2]uint64 }

// maxSingles4 is the most single IPv4 addresses kept as text.
const maxSingles4 = 8

// scanMax4 is the most IPv4 ranges Contains4 scans rather than searches.
const scanMax4 = 16

// New returns the set of the valid prefixes of ps (masked; a prefix that
// holds others is kept beside them, and ranges that touch are merged).
func New(ps []netip.Prefix) *Set {
	s := &Set{}
	wide := false
	var singles []string
	for _, p := range ps {
		if !p.IsValid() {
			continue
		}
		if p.Addr().Is4() {
			s.v4 = append(s.v4, range4Of(p))
			switch {
			case p.Bits() < 32:
				wide = true
			case len(singles) <= maxSingles4:
				singles = append(singles, p.Addr().String())
			}
			continue
		}
		s.v6 = append(s.v6, range6Of(p))
	}
	slices.SortFunc(s.v4, func(x, y range4) int { return cmp.Compare(x.lo, y.lo) })
	s.v4 = merge(s.v4, func(r range4) (uint32, uint32) { return r.lo, r.hi },
		func(hi, lo uint32) bool { return lo <= hi || lo-1 == hi }, func(r *range4, hi uint32) { r.hi = max(r.hi, hi) })
	slices.SortFunc(s.v6, func(x, y range6) int { return cmp6(x.lo, y.lo) })
	s.v6 = merge(s.v6, func(r range6) ([2]uint64, [2]uint64) { return r.lo, r.hi },
		func(hi, lo [2]uint64) bool {
			return cmp6(lo, hi) <= 0 || next6(hi) == lo && hi != [2]uint64{^uint64(0), ^uint64(0)}
		},
		func(r *range6, hi [2]uint64) {
			if cmp6(hi, r.hi) > 0 {
				r.hi = hi
			}
		})
	if !wide && len(s.v6) == 0 && len(singles) <= maxSingles4 {
		s.singles4 = slices.Compact(slices.Sorted(slices.Values(singles)))
	}
	return s
}

// range4Of is the range of a valid IPv4 prefix.
func range4Of(p netip.Prefix) range4 {
	b := p.Masked().Addr().As4()
	lo := binary.BigEndian.Uint32(b[:])
	return range4{lo, lo | uint32(uint64(1)<<(32-p.Bits())-1)}
}

// range6Of is the range of a valid IPv6 prefix.
func range6Of(p netip.Prefix) range6 {
	lo := split16(p.Masked().Addr().As16())
	hi := lo
	if n := 128 - p.Bits(); n >= 64 {
		hi[1] = ^uint64(0)
		hi[0] |= uint64(1)<<(n-64) - 1
		if n == 128 {
			hi[0] = ^uint64(0)
		}
	} else if n > 0 {
		hi[1] |= uint64(1)<<n - 1
	}
	return range6{lo, hi}
}

// merge merges sorted ranges that overlap (or touch, as joins says), in
// place.
func merge[R any, A any](rs []R, bounds func(R) (A, A), joins func(hi, lo A) bool, extend func(*R, A)) []R {
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 {
			_, lastHi := bounds(out[n-1])
			lo, hi := bounds(r)
			if joins(lastHi, lo) {
				extend(&out[n-1], hi)
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

func split16(b [16]byte) [2]uint64 {
	return [2]uint64{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
}

func cmp6(x, y [2]uint64) int {
	if c := cmp.Compare(x[0], y[0]); c != 0 {
		return c
	}
	return cmp.Compare(x[1], y[1])
}

// next6 is x+1 (wrapping).
func next6(x [2]uint64) [2]uint64 {
	x[1]++
	if x[1] == 0 {
		x[0]++
	}
	return x
}

// Empty reports whether the set holds no address.
func (s *Set) Empty() bool { return s == nil || len(s.v4) == 0 && len(s.v6) == 0 }

// Contains reports whether a is in the set.
func (s *Set) Contains(a netip.Addr) bool {
	if s == nil || !a.IsValid() {
		return false
	}
	if a.Is4() {
		return s.Contains4(a.As4())
	}
	return s.contains6(split16(a.As16()))
}

// Contains4 reports whether the IPv4 address a is in the set, for a
// caller that has its four bytes.
func (s *Set) Contains4(a [4]byte) bool {
	if s == nil {
		return false
	}
	return s.contains4(binary.BigEndian.Uint32(a[:]))
}

func (s *Set) contains4(x uint32) bool {
	if len(s.v4) <= scanMax4 {
		// A few ranges (a CDN's edges, a --trusted-proxy): a scan beats
		// the search's setup.
		for _, r := range s.v4 {
			if r.lo <= x && x <= r.hi {
				return true
			}
		}
		return false
	}
	// The last range that starts at or before x.
	i, _ := slices.BinarySearchFunc(s.v4, x, func(r range4, x uint32) int {
		if r.lo <= x {
			return -1
		}
		return 1
	})
	return i > 0 && x <= s.v4[i-1].hi
}

func (s *Set) contains6(x [2]uint64) bool {
	i, _ := slices.BinarySearchFunc(s.v6, x, func(r range6, x [2]uint64) int {
		if cmp6(r.lo, x) <= 0 {
			return -1
		}
		return 1
	})
	return i > 0 && cmp6(x, s.v6[i-1].hi) <= 0
}

// HasIPv6 reports whether the set holds IPv6 addresses: a lookup of an
// IPv6 client can be skipped when it does not.
func (s *Set) HasIPv6() bool { return s != nil && len(s.v6) > 0 }

// Singles4 returns the set's addresses as text (sorted, each once) when
// it holds a few single IPv4 addresses and nothing else, and nil
// otherwise: a caller can then match text by comparing bytes. The slice
// is the set's: do not change it.
func (s *Set) Singles4() []string {
	if s == nil {
		return nil
	}
	return s.singles4
}

// Overlaps reports whether p overlaps a prefix of the set, as
// netip.Prefix.Overlaps does with each in turn: whether the first range
// that ends at or after p's first address starts at or before its last.
func (s *Set) Overlaps(p netip.Prefix) bool {
	if s == nil || !p.IsValid() {
		return false
	}
	if p.Addr().Is4() {
		r := range4Of(p)
		i, _ := slices.BinarySearchFunc(s.v4, r.lo, func(x range4, lo uint32) int {
			if x.hi < lo {
				return -1
			}
			return 1
		})
		return i < len(s.v4) && s.v4[i].lo <= r.hi
	}
	r := range6Of(p)
	i, _ := slices.BinarySearchFunc(s.v6, r.lo, func(x range6, lo [2]uint64) int {
		if cmp6(x.hi, lo) < 0 {
			return -1
		}
		return 1
	})
	return i < len(s.v6) && cmp6(s.v6[i].lo, r.hi) <= 0
}

// ContainsText reports whether the address written in b (a log field) is
// in the set, without allocating for an IPv4 address: a few single
// addresses (Singles4) are matched by comparing bytes, any other IPv4
// address by its bytes' range. Text is read as logs write it: an
// IPv4-mapped IPv6 address stands for the IPv4 address it maps, and a
// dotted quad with a leading zero is no address.
func (s *Set) ContainsText(b []byte) bool {
	if s == nil {
		return false
	}
	if s.singles4 != nil {
		for _, e := range s.singles4 {
			if string(b) == e {
				return true
			}
		}
		return false
	}
	if x, ok := parse4(b); ok {
		return s.contains4(x)
	}
	if len(s.v6) == 0 {
		return false // an IPv6 address cannot be in an IPv4-only set
	}
	for _, c := range b {
		if c == ':' {
			a, err := netip.ParseAddr(string(b))
			return err == nil && s.Contains(a.Unmap())
		}
	}
	return false
}

// ParseIPv4 parses a dotted-quad IPv4 address as netip.ParseAddr reads
// it (no leading zeros: ambiguous, octal to some), without allocating.
func ParseIPv4(b []byte) ([4]byte, bool) {
	x, ok := parse4(b)
	var out [4]byte
	binary.BigEndian.PutUint32(out[:], x)
	return out, ok
}

// parse4 is ParseIPv4 giving the address as a number: the lookups take
// it so, and building it as the digits come is faster than an array.
func parse4(b []byte) (uint32, bool) {
	var x uint32
	part, digits, val := 0, 0, uint32(0)
	for i := 0; i <= len(b); i++ {
		if i == len(b) || b[i] == '.' {
			if digits == 0 || part > 3 {
				return 0, false
			}
			x = x<<8 | val
			part++
			digits, val = 0, 0
			continue
		}
		c := b[i]
		if c < '0' || c > '9' || digits > 0 && val == 0 {
			return 0, false
		}
		val = val*10 + uint32(c-'0')
		digits++
		if val > 255 {
			return 0, false
		}
	}
	return x, part == 4
}
