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

// parseIPv4 parses a dotted-quad IPv4 address without allocating
// (addrset.ParseIPv4).
func parseIPv4(b []byte) (netip.Addr, bool) {
	a, ok := addrset.ParseIPv4(b)
	return netip.AddrFrom4(a), ok
}
