package crawler

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestBuiltins(t *testing.T) {
	if got, want := BuiltinNames(), []string{"bingbot", "googlebot", "lohisoftbot"}; !slices.Equal(got, want) {
		t.Fatalf("BuiltinNames() = %v, want %v", got, want)
	}
	for _, name := range BuiltinNames() {
		p, ok := Builtin(name)
		if !ok {
			t.Fatalf("Builtin(%q) not found", name)
		}
		if p.Name != name || p.Source != SourceBuiltin {
			t.Errorf("Builtin(%q): name %q source %q", name, p.Name, p.Source)
		}
		if len(p.FCrDNS) == 0 || len(p.IPLists) == 0 {
			t.Errorf("%s: no FCrDNS suffix or IP list: %+v", name, p)
		}
		for _, u := range p.IPLists {
			if !strings.HasPrefix(u, "https://") {
				t.Errorf("%s: list %q is not https", name, u)
			}
		}
	}
	// Each call is a copy: changing one must not change the next.
	a, _ := Builtin(Default)
	a.Tokens[0] = "changed"
	a.Conduct.Budget.Pages = 1
	b, _ := Builtin(Default)
	if b.Tokens[0] != "LohiSoftBot" || b.Conduct.Budget.Pages != 20 {
		t.Errorf("Builtin returned shared state: %+v", b)
	}
	if _, ok := Builtin("LohiSoftBot"); ok {
		t.Error("Builtin matched a name in another case")
	}
}

// TestLohiSoftBotFromItsPage pins the default profile to the crawler's
// documentation page.
func TestLohiSoftBotFromItsPage(t *testing.T) {
	p, _ := Builtin(Default)
	want := []netip.Prefix{netip.MustParsePrefix("79.139.58.98/32"), netip.MustParsePrefix("79.139.58.121/32")}
	slices.SortFunc(want, comparePrefix)
	if !slices.Equal(p.BuiltinIPs, want) {
		t.Errorf("BuiltinIPs = %v, want %v", p.BuiltinIPs, want)
	}
	c := p.Conduct
	if !c.Robots || !c.NoAuthBypass || c.Budget == nil || c.Budget.Pages != 20 || c.Budget.Window != 24*time.Hour ||
		c.MinPause != time.Second || c.Backoff == nil || c.Backoff.Min != 30*time.Second {
		t.Errorf("conduct = %+v (budget %+v, backoff %+v)", c, c.Budget, c.Backoff)
	}
	if p.IPv6 || p.RobotsToken != "LohiSoftBot" || !slices.Equal(p.FCrDNS, []string{"bot.lohisoft.com"}) {
		t.Errorf("profile = %+v", p)
	}
}

func TestGoogleSuffixIsNotAllOfGoogleCloud(t *testing.T) {
	p, _ := Builtin("googlebot")
	if slices.Contains(p.FCrDNS, "googleusercontent.com") {
		t.Error("googlebot trusts every googleusercontent.com name: any Google Cloud VM would pass FCrDNS")
	}
	if !slices.Contains(p.FCrDNS, "googlebot.com") || !slices.Contains(p.FCrDNS, "google.com") {
		t.Errorf("googlebot suffixes = %v", p.FCrDNS)
	}
	for _, u := range p.IPLists {
		if !strings.Contains(u, "/static/crawling/ipranges/") {
			t.Errorf("list %s is not at the 2026 location", u)
		}
	}
}

func TestValidate(t *testing.T) {
	base := func() *Profile {
		return &Profile{Name: "examplebot", Tokens: []string{"ExampleBot/2"}, FCrDNS: []string{"Crawl.Example.NET."}}
	}
	t.Run("normalises", func(t *testing.T) {
		p := base()
		p.BuiltinIPs = []netip.Prefix{netip.MustParsePrefix("192.0.2.77/28"), netip.MustParsePrefix("::ffff:192.0.2.10/128"), netip.MustParsePrefix("192.0.2.64/28")}
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		if p.RobotsToken != "ExampleBot" {
			t.Errorf("RobotsToken = %q, want the letters of the first token", p.RobotsToken)
		}
		if !slices.Equal(p.FCrDNS, []string{"crawl.example.net"}) {
			t.Errorf("FCrDNS = %v", p.FCrDNS)
		}
		want := []netip.Prefix{netip.MustParsePrefix("192.0.2.10/32"), netip.MustParsePrefix("192.0.2.64/28")}
		if !slices.Equal(p.BuiltinIPs, want) {
			t.Errorf("BuiltinIPs = %v, want %v", p.BuiltinIPs, want)
		}
	})
	for _, tc := range []struct {
		name  string
		edit  func(p *Profile)
		field string
	}{
		{"no name", func(p *Profile) { p.Name = "" }, "name"},
		{"upper-case name", func(p *Profile) { p.Name = "ExampleBot" }, "name"},
		{"name with a space", func(p *Profile) { p.Name = "example bot" }, "name"},
		{"name ending in a dash", func(p *Profile) { p.Name = "example-" }, "name"},
		{"no tokens", func(p *Profile) { p.Tokens = nil }, "tokens"},
		{"short token", func(p *Profile) { p.Tokens = []string{"ab"} }, "tokens"},
		{"token with a space", func(p *Profile) { p.Tokens = []string{"Example Bot"} }, "tokens"},
		{"token with a control byte", func(p *Profile) { p.Tokens = []string{"Exa\x1bmple"} }, "tokens"},
		{"too many tokens", func(p *Profile) { p.Tokens = strings.Fields("aaa bbb ccc ddd eee fff ggg hhh iii") }, "tokens"},
		{"token starting with a digit", func(p *Profile) { p.Tokens = []string{"42bot"} }, "robots_token"},
		{"robots token with a slash", func(p *Profile) { p.RobotsToken = "Example/1" }, "robots_token"},
		{"bare tld suffix", func(p *Profile) { p.FCrDNS = []string{"com"} }, "fcrdns"},
		{"empty suffix", func(p *Profile) { p.FCrDNS = []string{"."} }, "fcrdns"},
		{"suffix with a space", func(p *Profile) { p.FCrDNS = []string{"crawl example.net"} }, "fcrdns"},
		{"http list", func(p *Profile) { p.IPLists = []string{"http://example.net/ips.json"} }, "ip_lists"},
		{"list without host", func(p *Profile) { p.IPLists = []string{"https:///ips.json"} }, "ip_lists"},
		{"list with credentials", func(p *Profile) { p.IPLists = []string{"https://u:p@example.net/ips.json"} }, "ip_lists"},
		{"wide v4 prefix", func(p *Profile) { p.BuiltinIPs = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")} }, "builtin_ips"},
		{"wide v6 prefix", func(p *Profile) { p.BuiltinIPs = []netip.Prefix{netip.MustParsePrefix("2001::/16")} }, "builtin_ips"},
		{"no way to verify", func(p *Profile) { p.FCrDNS = nil }, "name"},
		{"zero budget", func(p *Profile) { p.Conduct.Budget = &Budget{Pages: 0, Window: time.Hour} }, "conduct.budget.pages"},
		{"no budget window", func(p *Profile) { p.Conduct.Budget = &Budget{Pages: 3} }, "conduct.budget.window"},
		{"negative pause", func(p *Profile) { p.Conduct.MinPause = -time.Second }, "conduct.min_pause"},
		{"negative backoff", func(p *Profile) { p.Conduct.Backoff = &Backoff{Min: -1} }, "conduct.backoff.min"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := base()
			tc.edit(p)
			err := p.Validate()
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Validate() = %v, want ErrInvalid", err)
			}
			var fe *fieldError
			if !errors.As(err, &fe) || fe.name() != tc.field {
				t.Errorf("Validate() = %v, want an error about %s", err, tc.field)
			}
		})
	}
}

// TestSuffixOwners checks that a PTR suffix must belong to one owner:
// not a public suffix nor above one, no public suffixes right below it,
// and no cloud zone of customers' machines (SPEC §3: anyone with a name
// under the suffix passes FCrDNS).
func TestSuffixOwners(t *testing.T) {
	for _, tc := range []struct {
		suffix string
		ok     bool
	}{
		// Public suffixes, ICANN and private.
		{"co.uk", false},
		{"com", false},
		{"uk", false},
		{"github.io", false},
		{"appspot.com", false},
		{"blogspot.com", false},
		{"cloudapp.net", false},
		{"in-addr.arpa", false},
		{"amazon", false},
		// Every child a public suffix (*.compute-1.amazonaws.com).
		{"compute-1.amazonaws.com", false},
		// Cloud zones of customers' machines, and names above and below.
		{"googleusercontent.com", false},
		{"bc.googleusercontent.com", false},
		{"10.0.0.1.bc.googleusercontent.com", false},
		{"amazonaws.com", false},
		{"eu-west-1.compute.amazonaws.com", false},
		{"azure.com", false},
		{"westeurope.cloudapp.azure.com", false},
		// One owner each: the built-in crawlers' zones and the like.
		{"gae.googleusercontent.com", true},
		{"googlebot.com", true},
		{"geo.googlebot.com", true},
		{"google.com", true},
		{"search.msn.com", true},
		{"applebot.apple.com", true},
		{"crawl.amazonbot.amazon", true},
		{"bot.lohisoft.com", true},
		{"example.co.uk", true},
		{"crawl.example.net", true},
		{"someone.github.io", true},
	} {
		p := &Profile{Name: "examplebot", Tokens: []string{"ExampleBot"}, FCrDNS: []string{tc.suffix}}
		err := p.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("fcrdns %q: Validate() = %v, want ok %v", tc.suffix, err, tc.ok)
		}
		var fe *fieldError
		if err != nil && (!errors.As(err, &fe) || fe.name() != "fcrdns") {
			t.Errorf("fcrdns %q: %v is not about fcrdns", tc.suffix, err)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1s", time.Second, true},
		{"24h", 24 * time.Hour, true},
		{"7d", 7 * 24 * time.Hour, true},
		{"1d12h", 36 * time.Hour, true},
		{"0s", 0, true},
		{"", 0, false},
		{"d", 0, false},
		{"0d", 0, false},
		{"-1d", 0, false},
		{"1d-1h", 0, false},
		{"99999d", 0, false},
		{"soon", 0, false},
	} {
		got, err := ParseDuration(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
