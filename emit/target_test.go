package emit

import (
	"bytes"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTargets(t *testing.T) {
	if got, want := TargetNames(), []string{"nftables", "cloudflare", "modsecurity", "crowdsec"}; !slices.Equal(got, want) {
		t.Fatalf("TargetNames() = %q, want %q", got, want)
	}
	if _, ok := Lookup("iptables"); ok {
		t.Error("Lookup(iptables) found a target")
	}
	in := Input{
		Crawlers: []CrawlerInput{{Tokens: lohiTokens, Spoofed: []netip.Addr{netip.MustParseAddr("203.0.113.7")}, Listed: []netip.Prefix{netip.MustParsePrefix("79.139.58.98/32")}}},
	}
	tests := []struct {
		target string
		opts   Options
		// bad is a substring of the Check error; "" means the options are
		// good and Write must give what the target's own function gives.
		bad string
	}{
		{target: "nftables"},
		{target: "nftables", opts: Options{NFTables: NFTOptions{TTL: 36 * time.Hour, SetOnly: true}}},
		{target: "nftables", opts: Options{NFTables: NFTOptions{Hook: "output"}}, bad: `nftables hook "output"`},
		{target: "nftables", opts: Options{NFTables: NFTOptions{TTL: time.Millisecond}}, bad: "ttl"},
		{target: "cloudflare"},
		{target: "cloudflare", opts: Options{Cloudflare: CloudflareOptions{Output: CloudflareList}}},
		{target: "cloudflare", opts: Options{Cloudflare: CloudflareOptions{ListName: "Bad Name"}}, bad: `cloudflare list name "Bad Name"`},
		{target: "modsecurity", opts: Options{ModSec: ModSecOptions{IDBase: 5000}}},
		{target: "modsecurity", opts: Options{ModSec: ModSecOptions{IDBase: -1}}, bad: "modsecurity rule id base -1"},
		{target: "crowdsec"},
		{target: "crowdsec", opts: Options{CrowdSec: CrowdSecOptions{TTL: 400 * 24 * time.Hour}}, bad: "ttl"},
		// Options of another target are not this one's business.
		{target: "modsecurity", opts: Options{NFTables: NFTOptions{Hook: "output"}}},
	}
	for _, tc := range tests {
		t.Run(tc.target+"/"+tc.bad, func(t *testing.T) {
			tg, ok := Lookup(tc.target)
			if !ok || tg.Name != tc.target {
				t.Fatalf("Lookup(%q) = %+v, %v", tc.target, tg, ok)
			}
			err := tg.Check(tc.opts)
			if tc.bad != "" {
				if !errors.Is(err, ErrBadOption) || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("Check = %v, want ErrBadOption about %q", err, tc.bad)
				}
				return
			}
			if err != nil {
				t.Fatalf("Check = %v, want nil", err)
			}
			var got, want bytes.Buffer
			if _, err := tg.Write(&got, in, tc.opts); err != nil {
				t.Fatal(err)
			}
			switch tc.target {
			case "nftables":
				_, err = NFTables(&want, in, tc.opts.NFTables)
			case "cloudflare":
				_, err = Cloudflare(&want, in, tc.opts.Cloudflare)
			case "modsecurity":
				_, err = ModSecurity(&want, in, tc.opts.ModSec)
			case "crowdsec":
				_, err = CrowdSec(&want, in, tc.opts.CrowdSec)
			}
			if err != nil || got.String() != want.String() || got.Len() == 0 {
				t.Errorf("Write wrote %d bytes, the target's own function %d (%v): not the same rules", got.Len(), want.Len(), err)
			}
		})
	}
}
