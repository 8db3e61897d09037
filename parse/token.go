package parse

import (
	"net/netip"
	"strings"
)

// tokenLower is the product token in lower case. tokenShift is a
// Horspool shift table over pairs of case-folded bytes (a 2-gram variant
// of Boyer-Moore-Horspool): most pairs in a User-Agent do not occur in the
// token, so the search mostly jumps ten bytes at a time.
var (
	tokenLower = strings.ToLower(Token)
	tokenShift = func() *[1 << 16]uint8 {
		var t [1 << 16]uint8
		n := len(tokenLower)
		for i := range t {
			t[i] = uint8(n - 1)
		}
		// the pair ending at pattern position i (1 ≤ i ≤ n-2) shifts n-1-i
		for i := 1; i < n-1; i++ {
			a, b := tokenLower[i-1], tokenLower[i]
			for _, x := range caseVariants(a) {
				for _, y := range caseVariants(b) {
					t[uint16(x)<<8|uint16(y)] = uint8(n - 1 - i)
				}
			}
		}
		return &t
	}()
)

func caseVariants(c byte) []byte {
	if c >= 'a' && c <= 'z' {
		return []byte{c, c - 32}
	}
	return []byte{c}
}

// ContainsToken reports whether b contains the product token LohiSoftBot in
// any mix of upper and lower case. It does not allocate.
func ContainsToken(b []byte) bool {
	n := len(tokenLower)
	shift := tokenShift
	for i := n - 1; i < len(b); {
		if lowerASCII(b[i]) == tokenLower[n-1] && lowerASCII(b[i-1]) == tokenLower[n-2] {
			j, k := n-3, i-2
			for j >= 0 && lowerASCII(b[k]) == tokenLower[j] {
				j--
				k--
			}
			if j < 0 {
				return true
			}
		}
		i += int(shift[uint16(b[i-1])<<8|uint16(b[i])])
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
