package crawler

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

func TestBuiltins(t *testing.T) {
	want := []string{"amazonbot", "applebot", "bingbot", "chatgpt-user", "claude-searchbot", "claude-user", "claudebot",
		"duckduckbot", "google-common", "google-special", "google-user-triggered", "googlebot", "gptbot", "lohisoftbot",
		"oai-searchbot", "perplexity-user", "perplexitybot"}
	if got := BuiltinNames(); !slices.Equal(got, want) {
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
		if len(p.FCrDNS) == 0 && len(p.IPLists) == 0 {
			t.Errorf("%s: no FCrDNS suffix and no IP list: %+v", name, p)
		}
		if p.Category == "" || p.Category == CategoryOther {
			t.Errorf("%s: category %q", name, p.Category)
		}
		if p.Conduct.Robots == p.Conduct.RobotsNotPromised && name != "google-common" {
			t.Errorf("%s: robots promised %v, not promised %v: each built-in crawler's operator says one or the other", name, p.Conduct.Robots, p.Conduct.RobotsNotPromised)
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

// TestGoogleProfiles pins Google's three groups to "Verifying Googlebot
// and other Google crawlers": Googlebot trusts only its own suffix and
// list (not the user-triggered fetchers', which Google Cloud customers'
// fetches use), and every list is at the 2026 location.
func TestGoogleProfiles(t *testing.T) {
	for _, tc := range []struct {
		name     string
		suffixes []string
		lists    []string
		robots   bool
	}{
		{"googlebot", []string{"googlebot.com"}, []string{"common-crawlers.json"}, true},
		{"google-common", []string{"googlebot.com"}, []string{"common-crawlers.json"}, false},
		{"google-special", []string{"google.com"}, []string{"special-crawlers.json"}, false},
		{"google-user-triggered", []string{"gae.googleusercontent.com", "google.com"},
			[]string{"user-triggered-fetchers.json", "user-triggered-fetchers-google.json", "user-triggered-agents.json"}, false},
	} {
		p, _ := Builtin(tc.name)
		if !slices.Equal(p.FCrDNS, tc.suffixes) {
			t.Errorf("%s suffixes = %v, want %v", tc.name, p.FCrDNS, tc.suffixes)
		}
		var lists []string
		for _, u := range p.IPLists {
			name, ok := strings.CutPrefix(u, "https://developers.google.com/static/crawling/ipranges/")
			if !ok {
				t.Errorf("%s: list %s is not at the 2026 location", tc.name, u)
			}
			lists = append(lists, name)
		}
		if !slices.Equal(lists, tc.lists) {
			t.Errorf("%s lists = %v, want %v", tc.name, lists, tc.lists)
		}
		notPromised := !tc.robots && tc.name != "google-common" // google-common: promised, not checkable by one token
		if p.Conduct.Robots != tc.robots || p.Conduct.RobotsNotPromised != notPromised {
			t.Errorf("%s robots %v, not promised %v", tc.name, p.Conduct.Robots, p.Conduct.RobotsNotPromised)
		}
	}
	// Each of Google's crawler tokens belongs to one profile.
	seen := map[string]string{}
	for _, name := range []string{"googlebot", "google-common", "google-special", "google-user-triggered"} {
		p, _ := Builtin(name)
		for _, tok := range p.Tokens {
			if other, ok := seen[strings.ToLower(tok)]; ok {
				t.Errorf("token %s in %s and %s", tok, other, name)
			}
			seen[strings.ToLower(tok)] = name
		}
	}
	for _, tok := range []string{"googlebot-image", "googleother", "storebot-google", "google-inspectiontool", "adsbot-google", "feedfetcher-google"} {
		if seen[tok] == "" {
			t.Errorf("no Google profile claims %s", tok)
		}
	}
}

// TestAICrawlers pins the AI companies' crawlers to their operators'
// pages: the list each publishes, whether it obeys robots.txt, and what
// it is for.
func TestAICrawlers(t *testing.T) {
	for _, tc := range []struct {
		name, token, category, list, suffix string
		robots                              bool
	}{
		{"gptbot", "GPTBot", CategoryAITraining, "https://openai.com/gptbot.json", "", true},
		{"oai-searchbot", "OAI-SearchBot", CategoryAISearch, "https://openai.com/searchbot.json", "", true},
		{"chatgpt-user", "ChatGPT-User", CategoryUserTriggered, "https://openai.com/chatgpt-user.json", "", false},
		{"claudebot", "ClaudeBot", CategoryAITraining, "https://claude.com/crawling/bots.json", "", true},
		{"claude-searchbot", "Claude-SearchBot", CategoryAISearch, "https://claude.com/crawling/bots.json", "", true},
		{"claude-user", "Claude-User", CategoryUserTriggered, "https://claude.com/crawling/bots.json", "", true},
		{"perplexitybot", "PerplexityBot", CategoryAISearch, "https://www.perplexity.ai/perplexitybot.json", "", true},
		{"perplexity-user", "Perplexity-User", CategoryUserTriggered, "https://www.perplexity.ai/perplexity-user.json", "", false},
		{"amazonbot", "Amazonbot", CategoryAITraining, "", "crawl.amazonbot.amazon", true},
		{"applebot", "Applebot", CategorySearch, "https://search.developer.apple.com/applebot.json", "applebot.apple.com", true},
		{"duckduckbot", "DuckDuckBot", CategorySearch, "https://duckduckgo.com/duckduckbot.json", "", true},
	} {
		p, _ := Builtin(tc.name)
		if !slices.Equal(p.Tokens, []string{tc.token}) || p.RobotsToken != tc.token || p.Category != tc.category {
			t.Errorf("%s: tokens %v robots token %q category %q", tc.name, p.Tokens, p.RobotsToken, p.Category)
		}
		var lists, suffixes []string
		if tc.list != "" {
			lists = []string{tc.list}
		}
		if tc.suffix != "" {
			suffixes = []string{tc.suffix}
		}
		if !slices.Equal(p.IPLists, lists) || !slices.Equal(p.FCrDNS, suffixes) {
			t.Errorf("%s: lists %v suffixes %v, want %v %v", tc.name, p.IPLists, p.FCrDNS, lists, suffixes)
		}
		if p.Conduct.Robots != tc.robots || p.Conduct.RobotsNotPromised == tc.robots || !p.IPv6 {
			t.Errorf("%s: robots %v not promised %v ipv6 %v", tc.name, p.Conduct.Robots, p.Conduct.RobotsNotPromised, p.IPv6)
		}
	}
}

// TestResolveCategories checks --crawler CATEGORY: every built-in
// profile of the category, by name, after and between others, a crawler
// that a category and a name both bring once, and a name twice an error.
func TestResolveCategories(t *testing.T) {
	names := func(ps []*Profile) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	for _, tc := range []struct {
		values []string
		want   []string
	}{
		{[]string{"ai-training"}, []string{"amazonbot", "claudebot", "gptbot"}},
		{[]string{"AI-Search"}, []string{"claude-searchbot", "oai-searchbot", "perplexitybot"}},
		{[]string{"user-triggered"}, []string{"chatgpt-user", "claude-user", "google-user-triggered", "perplexity-user"}},
		{[]string{"special-case"}, []string{"google-special"}},
		{[]string{"lohisoftbot", "search"}, []string{"lohisoftbot", "applebot", "bingbot", "duckduckbot", "google-common", "googlebot"}},
		{[]string{"gptbot", "ai-training", "ai-training"}, []string{"gptbot", "amazonbot", "claudebot"}},
	} {
		ps, err := Resolve(tc.values)
		if err != nil {
			t.Errorf("Resolve(%q): %v", tc.values, err)
			continue
		}
		if got := names(ps); !slices.Equal(got, tc.want) {
			t.Errorf("Resolve(%q) = %v, want %v", tc.values, got, tc.want)
		}
	}
	if _, err := Resolve([]string{"gptbot", "gptbot"}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a name twice: %v", err)
	}
	_, err := Resolve([]string{"ai-crawlers"})
	if err == nil || !strings.Contains(err.Error(), "ai-search, ai-training, search, special-case, user-triggered") {
		t.Errorf("an unknown value: %v, want the categories listed", err)
	}
	if got := BuiltinCategories(); !slices.Equal(got, []string{"ai-search", "ai-training", "search", "special-case", "user-triggered"}) {
		t.Errorf("BuiltinCategories() = %v", got)
	}
}

// TestSnapshots checks that the snapshots are of built-in profiles'
// lists, each list has one but those said to have none, and each is
// dated and sourced.
func TestSnapshots(t *testing.T) {
	lists := map[string]bool{}
	for _, name := range BuiltinNames() {
		p, _ := Builtin(name)
		for _, u := range p.IPLists {
			lists[u] = true
		}
	}
	none := map[string]bool{
		"https://lohisoft.com/bot/ips.json":                  true, // its page's addresses are built in
		googleRanges + "user-triggered-fetchers-google.json": true,
		googleRanges + "user-triggered-agents.json":          true,
	}
	for u := range lists {
		_, ok := SnapshotOf(u)
		if ok == none[u] {
			t.Errorf("%s: snapshot %v, want %v", u, ok, !none[u])
		}
	}
	all := Snapshots()
	if len(all) != len(lists)-len(none) {
		t.Errorf("%d snapshots for %d lists", len(all), len(lists)-len(none))
	}
	for _, s := range all {
		if !lists[s.URL] {
			t.Errorf("snapshot of %s, a list no built-in profile names", s.URL)
		}
		if s.AsOf.Before(day(2025, 1, 1)) || s.AsOf.After(day(2027, 1, 1)) || s.From == "" || len(s.Data) < 20 {
			t.Errorf("snapshot of %s: as of %v, from %q, %d bytes", s.URL, s.AsOf, s.From, len(s.Data))
		}
	}
	if _, ok := SnapshotOf("https://example.net/ips.json"); ok {
		t.Error("a snapshot of a list never published")
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
		{"too many tokens", func(p *Profile) {
			p.Tokens = strings.Fields("aaa bbb ccc ddd eee fff ggg hhh iii jjj kkk lll mmm nnn ooo ppp qqq")
		}, "tokens"},
		{"category of a built-in's name", func(p *Profile) { p.Category = "gptbot" }, "category"},
		{"upper-case category", func(p *Profile) { p.Category = "AI" }, "category"},
		{"contact not an address", func(p *Profile) { p.Contact = "call us" }, "contact"},
		{"contact with a name", func(p *Profile) { p.Contact = "Bot <bot@example.net>" }, "contact"},
		{"two contacts", func(p *Profile) { p.Contact = "a@example.net, b@example.net" }, "contact"},
		{"robots both ways", func(p *Profile) { p.Conduct.Robots, p.Conduct.RobotsNotPromised = true, true }, "conduct.robots"},
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

// TestResolveErrorsAreUsage checks that every way --crawler values can be
// wrong is a usage error (fail.Usage), worded by Resolve, with the
// profile file's own error still reachable.
func TestResolveErrorsAreUsage(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nnot a key: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	many := make([]string, 0, MaxProfiles+1)
	for i := 0; i <= MaxProfiles; i++ {
		p := filepath.Join(dir, fmt.Sprintf("bot%d.yaml", i))
		data, err := os.ReadFile(filepath.Join("testdata", "examplebot.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		data = bytes.Replace(data, []byte("name: examplebot"), []byte(fmt.Sprintf("name: examplebot%d", i)), 1)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		many = append(many, p)
	}
	for _, tc := range []struct {
		name    string
		values  []string
		want    string
		invalid bool
	}{
		{"unknown name", []string{"nosuchbot"}, `unknown crawler "nosuchbot": built in are `, false},
		{"missing file", []string{filepath.Join(dir, "missing.yaml")}, "cannot read crawler profile " + filepath.Join(dir, "missing.yaml") + ": no such file or directory", false},
		{"invalid file", []string{bad}, "crawler profile " + bad, true},
		{"given twice", []string{"gptbot", "gptbot"}, "crawler gptbot is given twice (built-in and built-in)", false},
		{"too many", many, fmt.Sprintf("%d crawlers; at most %d", MaxProfiles+1, MaxProfiles), false},
	} {
		_, err := Resolve(tc.values)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
			continue
		}
		if fail.KindOf(err) != fail.Usage {
			t.Errorf("%s: kind %d, want a usage error", tc.name, fail.KindOf(err))
		}
		if errors.Is(err, ErrInvalid) != tc.invalid {
			t.Errorf("%s: errors.Is(ErrInvalid) = %v, want %v", tc.name, !tc.invalid, tc.invalid)
		}
	}
}
