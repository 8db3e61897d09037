package emit

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

func TestPlanCount(t *testing.T) {
	one := []netip.Prefix{netip.MustParsePrefix("192.0.2.1/32")}
	two := append(one, netip.MustParsePrefix("192.0.2.2/32"))
	for _, tc := range []struct {
		p    *Plan
		want string
	}{
		{&Plan{Mode: BlockBot, Block: one}, "1 address blocked"},
		{&Plan{Mode: BlockBot, Block: two}, "2 addresses blocked"},
		{&Plan{Mode: AllowBot, Allow: one}, "1 address allowed"},
		{&Plan{Mode: BlockSpoofed, Block: one, Exempt: two}, "1 address blocked, 2 spared from the token rule"},
	} {
		if got := tc.p.Count(); got != tc.want {
			t.Errorf("Count = %q, want %q", got, tc.want)
		}
	}
}

// TestPlanRemarks: what the safety rules kept out is said by reason, in
// the order of the reasons' names; the addresses --never-block kept out
// are marked as asked for; special ranges are said in one line; a long
// list is cut after five.
func TestPlanRemarks(t *testing.T) {
	var p Plan
	skip := func(s string, r SkipReason) {
		p.Skipped = append(p.Skipped, Skipped{Prefix: netip.MustParsePrefix(s), Reason: r})
	}
	for i := 1; i <= 7; i++ {
		skip(fmt.Sprintf("192.0.2.%d/32", i), SkipGenuine)
	}
	skip("10.0.0.1/32", SkipPrivate)
	skip("127.0.0.1/32", SkipLoopback)
	skip("198.51.100.0/24", SkipNeverBlock)
	skip("203.0.113.9/32", SkipProxy)
	p.Notes = []string{"a note"}
	var got []string
	for _, r := range p.Remarks() {
		got = append(got, fmt.Sprintf("%v %s", r.Asked, r.Text))
	}
	want := []string{
		"false not blocked, though reported as spoofing: 192.0.2.1, 192.0.2.2, 192.0.2.3, 192.0.2.4, 192.0.2.5 and 2 more (genuine: the report contradicts itself or the IP list changed)",
		"true not blocked, as --never-block asks: 198.51.100.0/24",
		"false not blocked, though reported as spoofing: 203.0.113.9 (proxy: a CDN's edge or a trusted proxy forwards every visitor's requests, so the report judged the proxy; see --trusted-proxy)",
		"false left out, as no rule ever matches such addresses: 127.0.0.1 (loopback), 10.0.0.1 (private); if the server is behind a proxy, its log shows the proxy's address (see --trusted-proxy)",
		"false a note",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Remarks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestReadReport(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ctx := context.Background()
	good := write("good.json", `{"tool":"lohibot-audit","summary":{}}`)
	if rep, err := ReadReport(ctx, nil, good); err != nil || rep == nil {
		t.Fatalf("ReadReport(good) = %v, %v", rep, err)
	}
	if rep, err := ReadReport(ctx, strings.NewReader(`{"tool":"lohibot-audit"}`), "-"); err != nil || rep == nil {
		t.Fatalf("ReadReport(stdin) = %v, %v", rep, err)
	}
	notReport := write("other.json", `{"tool":"other"}`)
	for _, tc := range []struct{ name, msg string }{
		{notReport, notReport + " is not a lohibot-audit report"},
		{write("bad.json", "{"), "report " + filepath.Join(dir, "bad.json") + " is "},
		{filepath.Join(dir, "missing.json"), "cannot read report " + filepath.Join(dir, "missing.json") + ": no such file or directory"},
	} {
		_, err := ReadReport(ctx, nil, tc.name)
		if fail.KindOf(err) != fail.Usage || !strings.HasPrefix(err.Error(), tc.msg) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ReadReport(%s) = %v, want a one-line usage error starting %q", tc.name, err, tc.msg)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ReadReport(cancelled, strings.NewReader("{}"), "-"); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadReport after cancel = %v, want context.Canceled", err)
	}
}

func TestExplainAndFlags(t *testing.T) {
	if err := Explain(ErrNoTokens); fail.KindOf(err) != fail.Usage || !strings.Contains(fail.HintOf(err), "--crawler FILE") {
		t.Errorf("Explain(ErrNoTokens) = %v", err)
	}
	if err := Explain(errors.New("disk on fire")); fail.KindOf(err) != fail.Other || err.Error() != "cannot write the rules: disk on fire" {
		t.Errorf("Explain(other) = %v", err)
	}
	if _, err := NeverBlockFlag([]string{"192.0.2.0/24,nope"}); fail.KindOf(err) != fail.Usage || err.Error() != `--never-block "nope" is neither an address nor a CIDR such as 192.0.2.0/24` {
		t.Errorf("NeverBlockFlag = %v", err)
	}
	nft, _ := Lookup("nftables")
	if _, err := nft.CheckOptions(Settings{TTL: "forever", NFTHook: DefaultNFTHook, NFTPriority: DefaultNFTPriority, NFTTable: DefaultNFTTable}); fail.KindOf(err) != fail.Usage || !strings.HasPrefix(err.Error(), `--ttl "forever": give a duration`) {
		t.Errorf("CheckOptions(bad ttl) = %v", err)
	}
}
