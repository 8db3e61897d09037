package parse

import (
	"cmp"
	"encoding/binary"
	"net/netip"
	"slices"
)

// Constants of the SWAR searches, eight bytes at a time: a byte b is a
// letter c in either case exactly when b|0x20 is c.
const (
	swarOnes   = 0x0101010101010101
	swarHighs  = 0x8080808080808080
	swarSpaces = 0x2020202020202020
)

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 32
	}
	return c
}

// AddrSet is a set of address prefixes that can be matched against the
// text of a log field without allocating (for IPv4). The nil *AddrSet is
// empty. Its prefixes are kept as sorted, merged ranges, so that a lookup
// costs a binary search however many prefixes several crawlers' lists
// hold.
type AddrSet struct {
	v4 []range4
	v6 []range6
	// exact4 holds the single IPv4 addresses (/32) as text when they are
	// all the set holds: the usual list of a few addresses is then
	// matched by comparing bytes.
	exact4 []string
}

// range4 and range6 are address ranges, first and last included.
type range4 struct{ lo, hi uint32 }
type range6 struct{ lo, hi [2]uint64 }

// maxExact4 is the most /32 addresses matched as text.
const maxExact4 = 8

// NewAddrSet returns a set of the valid prefixes given.
func NewAddrSet(prefixes []netip.Prefix) *AddrSet {
	s := &AddrSet{}
	netted := false
	var exact []string
	for _, p := range prefixes {
		if !p.IsValid() {
			continue
		}
		p = p.Masked()
		if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
		}
		a := p.Addr()
		if a.Is4() {
			b := a.As4()
			lo := binary.BigEndian.Uint32(b[:])
			hi := lo | uint32(uint64(1)<<(32-p.Bits())-1)
			s.v4 = append(s.v4, range4{lo, hi})
			if p.Bits() == 32 {
				exact = append(exact, a.String())
			} else {
				netted = true
			}
			continue
		}
		b := a.As16()
		lo := [2]uint64{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
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
		s.v6 = append(s.v6, range6{lo, hi})
	}
	slices.SortFunc(s.v4, func(x, y range4) int { return cmp.Compare(x.lo, y.lo) })
	s.v4 = mergeRanges(s.v4, func(r range4) (uint32, uint32) { return r.lo, r.hi },
		func(hi, lo uint32) bool { return lo <= hi || lo-1 == hi }, func(r *range4, hi uint32) { r.hi = max(r.hi, hi) })
	slices.SortFunc(s.v6, func(x, y range6) int { return cmp6(x.lo, y.lo) })
	s.v6 = mergeRanges(s.v6, func(r range6) ([2]uint64, [2]uint64) { return r.lo, r.hi },
		func(hi, lo [2]uint64) bool { return cmp6(lo, hi) <= 0 }, func(r *range6, hi [2]uint64) {
			if cmp6(hi, r.hi) > 0 {
				r.hi = hi
			}
		})
	if !netted && len(s.v6) == 0 && len(exact) <= maxExact4 {
		s.exact4 = exact
	}
	return s
}

// mergeRanges merges sorted ranges that overlap (or touch, as joins says).
func mergeRanges[R any, A any](rs []R, bounds func(R) (A, A), joins func(hi, lo A) bool, extend func(*R, A)) []R {
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

func cmp6(x, y [2]uint64) int {
	if c := cmp.Compare(x[0], y[0]); c != 0 {
		return c
	}
	return cmp.Compare(x[1], y[1])
}

// Contains reports whether a is in the set.
func (s *AddrSet) Contains(a netip.Addr) bool {
	if s == nil || !a.IsValid() {
		return false
	}
	a = a.Unmap()
	if a.Is4() {
		b := a.As4()
		return s.contains4(binary.BigEndian.Uint32(b[:]))
	}
	b := a.As16()
	x := [2]uint64{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
	// The last range that starts at or before x.
	i, _ := slices.BinarySearchFunc(s.v6, x, func(r range6, x [2]uint64) int {
		if cmp6(r.lo, x) <= 0 {
			return -1
		}
		return 1
	})
	return i > 0 && cmp6(x, s.v6[i-1].hi) <= 0
}

func (s *AddrSet) contains4(x uint32) bool {
	i, _ := slices.BinarySearchFunc(s.v4, x, func(r range4, x uint32) int {
		if r.lo <= x {
			return -1
		}
		return 1
	})
	return i > 0 && x <= s.v4[i-1].hi
}

// containsText reports whether the address written in b is in the set.
func (s *AddrSet) containsText(b []byte) bool {
	if s == nil {
		return false
	}
	if s.exact4 != nil {
		// A dotted quad written another way (leading zeros) is no
		// address: parseIPv4 rejects those too.
		for _, e := range s.exact4 {
			if string(b) == e {
				return true
			}
		}
		return false
	}
	if a, ok := parseIPv4(b); ok {
		b4 := a.As4()
		return s.contains4(binary.BigEndian.Uint32(b4[:]))
	}
	if len(s.v6) == 0 {
		return false // an IPv6 client cannot be in an IPv4-only set
	}
	for _, c := range b {
		if c == ':' {
			a, err := netip.ParseAddr(string(b))
			return err == nil && s.Contains(a)
		}
	}
	return false
}

// parseIPv4 parses a dotted-quad IPv4 address without allocating.
func parseIPv4(b []byte) (netip.Addr, bool) {
	var out [4]byte
	part, digits, val := 0, 0, 0
	for i := 0; i <= len(b); i++ {
		if i == len(b) || b[i] == '.' {
			if digits == 0 || part > 3 {
				return netip.Addr{}, false
			}
			out[part] = byte(val)
			part++
			digits, val = 0, 0
			continue
		}
		c := b[i]
		if c < '0' || c > '9' {
			return netip.Addr{}, false
		}
		if digits > 0 && val == 0 {
			return netip.Addr{}, false // leading zero: ambiguous (octal to some)
		}
		val = val*10 + int(c-'0')
		digits++
		if val > 255 {
			return netip.Addr{}, false
		}
	}
	if part != 4 {
		return netip.Addr{}, false
	}
	return netip.AddrFrom4(out), true
}
