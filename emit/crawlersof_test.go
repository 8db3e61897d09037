package emit

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/verify"
)

// CrawlersOf takes each crawler's tokens from its profile and its
// addresses from its list; one known by name alone, or without a list,
// has none.
func TestCrawlersOf(t *testing.T) {
	g, ok := crawler.Builtin("googlebot")
	if !ok {
		t.Fatal("no built-in googlebot")
	}
	lohi, ok := crawler.Builtin("lohisoftbot")
	if !ok {
		t.Fatal("no built-in lohisoftbot")
	}
	listed := []netip.Prefix{netip.MustParsePrefix("66.249.64.0/27")}
	cs := CrawlersOf([]string{"googlebot", "acme-bot", "lohisoftbot"},
		[]*crawler.Profile{g, nil, lohi},
		[]*verify.IPList{{Prefixes: listed}, nil, nil})
	if len(cs) != 3 {
		t.Fatalf("got %d crawlers, want 3", len(cs))
	}
	if cs[0].Name != "googlebot" || !slices.Equal(cs[0].Tokens, g.Tokens) || !slices.Equal(cs[0].Listed, listed) {
		t.Errorf("googlebot: got %+v", cs[0])
	}
	if cs[1].Name != "acme-bot" || cs[1].Tokens != nil || cs[1].Listed != nil {
		t.Errorf("acme-bot, by name alone: got %+v, want no tokens or list", cs[1])
	}
	if cs[2].Name != "lohisoftbot" || !slices.Equal(cs[2].Tokens, []string{"LohiSoftBot"}) || cs[2].Listed != nil {
		t.Errorf("lohisoftbot without a list: got %+v", cs[2])
	}
}
