// Package ipfmt prints addresses and prefixes the one way the program
// shows them.
package ipfmt

import "net/netip"

// Prefix prints a single-address prefix as the bare address
// (79.139.58.98, not 79.139.58.98/32), any other prefix in CIDR form.
func Prefix(p netip.Prefix) string {
	if p.IsSingleIP() {
		return p.Addr().String()
	}
	return p.String()
}
