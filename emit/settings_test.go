package emit

import (
	"errors"
	"net/netip"
	"slices"
	"testing"
	"time"
)

// TestTargetOptions: each target reads its own settings, refuses a bad
// one with a SettingError that names it as the command line does, and
// passes the rest to Check.
func TestTargetOptions(t *testing.T) {
	ok := Settings{TTL: "1d12h", NFTHook: DefaultNFTHook, NFTPriority: DefaultNFTPriority, NFTTable: DefaultNFTTable,
		CloudflareOutput: string(CloudflareRuleset), ModSecIDBase: DefaultModSecIDBase}
	for _, name := range TargetNames() {
		tg, _ := Lookup(name)
		if _, err := tg.Options(ok); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	nft, _ := Lookup("nftables")
	if o, _ := nft.Options(ok); o.NFTables.TTL != 36*time.Hour {
		t.Errorf("nftables ttl %s", o.NFTables.TTL)
	}
	for _, tc := range []struct {
		target, want string
		change       func(*Settings)
	}{
		{"nftables", `ttl "forever": give a duration from 1s to 365d, such as 7d, 36h or 1d12h`, func(s *Settings) { s.TTL = "forever" }},
		{"crowdsec", `ttl "400d": give a duration from 1s to 365d, such as 7d, 36h or 1d12h`, func(s *Settings) { s.TTL = "400d" }},
		{"cloudflare", `cloudflare-output "xml": use ruleset, list or expression`, func(s *Settings) { s.CloudflareOutput = "xml" }},
		{"modsecurity", "modsec-id-base 0: give a rule ID from 1 to", func(s *Settings) { s.ModSecIDBase = 0 }},
	} {
		s := ok
		tc.change(&s)
		tg, _ := Lookup(tc.target)
		_, err := tg.Options(s)
		var bad *SettingError
		if !errors.As(err, &bad) || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want {
			t.Errorf("%s: %v, want %q", tc.target, err, tc.want)
		}
	}
	s := ok
	s.NFTHook = "output"
	if _, err := nft.Options(s); !errors.Is(err, ErrBadOption) {
		t.Errorf("a hook Check refuses: %v", err)
	}
}

// TestSkippedBy: reasons in name order, prefixes in the order skipped.
func TestSkippedBy(t *testing.T) {
	a, b, c := netip.MustParsePrefix("10.0.0.1/32"), netip.MustParsePrefix("192.0.2.1/32"), netip.MustParsePrefix("127.0.0.1/32")
	p := &Plan{Skipped: []Skipped{{Prefix: b, Reason: SkipNeverBlock}, {Prefix: a, Reason: SkipGenuine}, {Prefix: c, Reason: SkipNeverBlock}}}
	reasons, by := p.SkippedBy()
	if !slices.Equal(reasons, []SkipReason{SkipGenuine, SkipNeverBlock}) || !slices.Equal(by[SkipNeverBlock], []netip.Prefix{b, c}) {
		t.Errorf("reasons %q, by %v", reasons, by)
	}
}
