package parse

import (
	"net/netip"
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
// empty.
type AddrSet struct {
	v4, v6 []netip.Prefix
	// exact4 holds the single IPv4 addresses (/32) as text, and netted4
	// says whether wider IPv4 prefixes exist: the usual list of a few
	// addresses is then matched by comparing bytes.
	exact4  []string
	netted4 bool
}

// NewAddrSet returns a set of the valid prefixes given.
func NewAddrSet(prefixes []netip.Prefix) *AddrSet {
	s := &AddrSet{}
	for _, p := range prefixes {
		if !p.IsValid() {
			continue
		}
		p = p.Masked()
		if p.Addr().Is4() {
			s.v4 = append(s.v4, p)
			if p.Bits() == 32 {
				s.exact4 = append(s.exact4, p.Addr().String())
			} else {
				s.netted4 = true
			}
		} else {
			s.v6 = append(s.v6, p)
		}
	}
	return s
}

// Contains reports whether a is in the set.
func (s *AddrSet) Contains(a netip.Addr) bool {
	if s == nil || !a.IsValid() {
		return false
	}
	a = a.Unmap()
	list := s.v6
	if a.Is4() {
		list = s.v4
	}
	for _, p := range list {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// containsText reports whether the address written in b is in the set.
func (s *AddrSet) containsText(b []byte) bool {
	if s == nil {
		return false
	}
	for _, e := range s.exact4 {
		if string(b) == e {
			return true
		}
	}
	if !s.netted4 && len(s.v6) == 0 {
		// A dotted quad written another way (leading zeros) is no
		// address: parseIPv4 rejects those too.
		return false
	}
	if a, ok := parseIPv4(b); ok {
		return s.Contains(a)
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
