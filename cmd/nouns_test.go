package cmd

import (
	"net/netip"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/render"
	"github.com/lohisoft/lohibot-audit/verify"
)

// TestMessagesCountInAgreement: the counts that commands print take the
// singular for 1 and the plural otherwise.
func TestMessagesCountInAgreement(t *testing.T) {
	one := []netip.Prefix{netip.MustParsePrefix("192.0.2.1/32")}
	two := append(one, netip.MustParsePrefix("192.0.2.2/32"))
	now := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ got, want string }{
		{render.ListDescription(&verify.IPList{Source: "built-in", Prefixes: one}, now), "built-in, 1 prefix"},
		{render.ListDescription(&verify.IPList{Source: "built-in", Prefixes: two}, now), "built-in, 2 prefixes"},
		{plural(1, "conduct violation", "conduct violations"), "1 conduct violation"},
		{plural(0, "conduct violation", "conduct violations"), "0 conduct violations"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
