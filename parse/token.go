package parse

import (
	"net/netip"
	"strings"
)

// tokenLower is the product token in lower case; tokenShift is its
// Boyer-Moore-Horspool shift table over case-folded bytes.
var (
	tokenLower = strings.ToLower(Token)
	tokenShift = func() (t [256]uint8) {
		n := len(tokenLower)
		for i := range t {
			t[i] = uint8(n)
		}
		for i := 0; i < n-1; i++ {
			c := tokenLower[i]
			t[c] = uint8(n - 1 - i)
			if c >= 'a' && c <= 'z' {
				t[c-32] = uint8(n - 1 - i)
			}
		}
		return t
	}()
)

// ContainsToken reports whether b contains the product token LohiSoftBot in
// any mix of upper and lower case. It does not allocate.
func ContainsToken(b []byte) bool {
	n := len(tokenLower)
	for i := n - 1; i < len(b); {
		c := b[i]
		if c|0x20 == tokenLower[n-1] {
			j := n - 1
			k := i
			for j >= 0 && lowerASCII(b[k]) == tokenLower[j] {
				j--
				k--
			}
			if j < 0 {
				return true
			}
		}
		i += int(tokenShift[c])
	}
	return false
}

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
	if a, ok := parseIPv4(b); ok {
		return s.Contains(a)
	}
	if len(s.v6) == 0 && len(s.v4) == 0 {
		return false
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
