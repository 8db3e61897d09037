package emit

import (
	"errors"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
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

// TestTTLFlag: a --ttl from 1s to 365d is read, with days; any other is a
// usage error worded as the targets' own setting errors are.
func TestTTLFlag(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  time.Duration
	}{
		{"7d", 7 * 24 * time.Hour},
		{"1d12h", 36 * time.Hour},
		{" 1s ", time.Second},
		{"365d", MaxTTL},
	} {
		if got, err := TTLFlag(tc.value); err != nil || got != tc.want {
			t.Errorf("%q: %s, %v; want %s", tc.value, got, err, tc.want)
		}
	}
	for _, v := range []string{"0s", "500ms", "366d", "364d48h", "forever", "-1h", "", "7\x1bd"} {
		_, err := TTLFlag(v)
		want := "--ttl " + strconv.Quote(v) + ": give a duration from 1s to 365d, such as 7d, 36h or 1d12h"
		if err == nil || err.Error() != want || fail.KindOf(err) != fail.Usage {
			t.Errorf("%q: %v (kind %d), want the usage error %q", v, err, fail.KindOf(err), want)
		}
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

// TestTargetFlags: the target named on the command line is found or
// refused with the list of targets; a flag of other targets only is
// refused, named with the first target it is for; a mode a target does
// not take is refused.
func TestTargetFlags(t *testing.T) {
	if _, err := TargetArg("iptables"); err == nil || err.Error() != `unknown emit target "iptables"` ||
		fail.KindOf(err) != fail.Usage || !strings.Contains(fail.HintOf(err), "nftables, cloudflare, modsecurity or crowdsec") {
		t.Errorf("unknown target: %v (hint %q)", err, fail.HintOf(err))
	}
	given := func(flags ...string) func(string) bool {
		return func(n string) bool { return slices.Contains(flags, n) }
	}
	for _, tc := range []struct {
		target string
		flags  []string
		want   string
	}{
		{"nftables", []string{"ttl", "set-only", "nft-hook", "mode", "output"}, ""},
		{"crowdsec", []string{"ttl", "dry-run", "crowdsec-credentials"}, ""},
		{"cloudflare", []string{"set-only"}, "--set-only is for the nftables target, not cloudflare"},
		{"modsecurity", []string{"cloudflare-matches"}, "--cloudflare-matches is for the cloudflare target, not modsecurity"},
		// --ttl is for nftables and crowdsec: the first target names it,
		// every time.
		{"cloudflare", []string{"ttl"}, "--ttl is for the nftables target, not cloudflare"},
		{"modsecurity", []string{"dry-run", "set-only"}, "--set-only is for the nftables target, not modsecurity"},
		{"nftables", []string{"modsec-id-base", "dry-run"}, "--modsec-id-base is for the modsecurity target, not nftables"},
	} {
		tg, err := TargetArg(tc.target)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 { // the same answer whatever a map's order
			err = tg.CheckFlags(given(tc.flags...))
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want || fail.KindOf(err) != fail.Usage) {
				t.Fatalf("%s %v: %v, want %q", tc.target, tc.flags, err, tc.want)
			}
		}
	}
	for _, name := range TargetNames() {
		tg, _ := TargetArg(name)
		for _, m := range Modes {
			err := tg.CheckMode(m)
			if refused := name == "crowdsec" && m != BlockSpoofed; refused != (err != nil) {
				t.Errorf("%s %s: %v", name, m, err)
			}
		}
	}
	cs, _ := TargetArg("crowdsec")
	if err := cs.CheckMode(AllowBot); err == nil || err.Error() != "--mode allow-bot: the crowdsec target bans spoofers only (block-spoofed)" || fail.KindOf(err) != fail.Usage {
		t.Errorf("crowdsec allow-bot: %v", err)
	}
	if m, err := ModeFlag(""); m != BlockSpoofed || err != nil {
		t.Errorf("empty mode: %q, %v", m, err)
	}
	if m, err := ModeFlag("block-bot"); m != BlockBot || err != nil {
		t.Errorf("block-bot: %q, %v", m, err)
	}
	if _, err := ModeFlag("block-all"); err == nil || err.Error() != `--mode "block-all": use block-spoofed, block-bot or allow-bot` || fail.KindOf(err) != fail.Usage {
		t.Errorf("block-all: %v", err)
	}
}

// TestParseTTLFlag: a --ttl is read whatever it lasts, past 365d and 0s
// included; one that is no duration is TTLFlag's usage error.
func TestParseTTLFlag(t *testing.T) {
	for v, want := range map[string]time.Duration{"400d": 400 * 24 * time.Hour, "0s": 0, " 36h ": 36 * time.Hour} {
		if got, err := ParseTTLFlag(v); err != nil || got != want {
			t.Errorf("%q: %s, %v; want %s", v, got, err, want)
		}
	}
	for _, v := range []string{"soon", "-1h", "", "7\x1bd"} {
		_, err := ParseTTLFlag(v)
		_, flagErr := TTLFlag(v)
		if err == nil || flagErr == nil || err.Error() != flagErr.Error() || fail.KindOf(err) != fail.Usage {
			t.Errorf("%q: %v, want TTLFlag's usage error %v", v, err, flagErr)
		}
	}
}
