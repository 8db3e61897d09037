package ipfmt

import (
	"net/netip"
	"testing"
)

func TestPrefix(t *testing.T) {
	for in, want := range map[string]string{
		"79.139.58.98/32":    "79.139.58.98",
		"79.139.58.0/24":     "79.139.58.0/24",
		"2001:db8::1/128":    "2001:db8::1",
		"2001:db8::/32":      "2001:db8::/32",
		"::ffff:1.2.3.4/128": "::ffff:1.2.3.4",
	} {
		if got := Prefix(netip.MustParsePrefix(in)); got != want {
			t.Errorf("Prefix(%s) = %s, want %s", in, got, want)
		}
	}
}
