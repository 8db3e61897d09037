package parse

import (
	"net/netip"

	"github.com/lohisoft/lohibot-audit/internal/addrset"
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

// listedText reports whether the address written in b is in s, without
// allocating for an IPv4 address: the few single addresses of a built-in
// list are matched by comparing bytes, any other IPv4 address by its
// bytes' range. An IPv4-mapped IPv6 address is looked up as the IPv4
// address it maps.
func listedText(s *addrset.Set, b []byte) bool {
	if s == nil {
		return false
	}
	if singles := s.Singles4(); singles != nil {
		// A dotted quad written another way (leading zeros) is no
		// address: parseIPv4 rejects those too.
		for _, e := range singles {
			if string(b) == e {
				return true
			}
		}
		return false
	}
	if a, ok := parseIPv4(b); ok {
		return s.Contains4(a.As4())
	}
	if !s.HasIPv6() {
		return false // an IPv6 client cannot be in an IPv4-only set
	}
	for _, c := range b {
		if c == ':' {
			a, err := netip.ParseAddr(string(b))
			return err == nil && s.Contains(a.Unmap())
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
