package render

import (
	"net/netip"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/verify"
)

// TestListDescriptionCountsInAgreement: a list's description takes the
// singular for one prefix and the plural otherwise.
func TestListDescriptionCountsInAgreement(t *testing.T) {
	one := []netip.Prefix{netip.MustParsePrefix("192.0.2.1/32")}
	two := append(one, netip.MustParsePrefix("192.0.2.2/32"))
	now := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ got, want string }{
		{ListDescription(&verify.IPList{Source: "built-in", Prefixes: one}, now), "built-in, 1 prefix"},
		{ListDescription(&verify.IPList{Source: "built-in", Prefixes: two}, now), "built-in, 2 prefixes"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
