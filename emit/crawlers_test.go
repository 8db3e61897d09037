package emit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// crawlersInput covers three crawlers: LohiSoftBot, Googlebot with a few
// listed ranges, and a crawler with two tokens and a '-' in its name.
// Addresses cross between them: a Googlebot address claiming to be
// LohiSoftBot, a LohiSoftBot address claiming to be the third one.
func crawlersInput(mode Mode) Input {
	in := fixtureInput(mode)
	in.IPListSource = "lohisoftbot: https://lohisoft.com/bot/ips.json; googlebot: https://developers.google.com/static/crawling/ipranges/common-crawlers.json"
	in.Crawlers = []CrawlerInput{
		{Name: "lohisoftbot", Tokens: []string{"LohiSoftBot"},
			Spoofed: addrs("203.0.113.7", "203.0.113.8", "10.0.0.5", "66.249.66.1", "192.0.2.10"),
			Genuine: addrs("79.139.58.98"),
			Listed:  prefixes("79.139.58.98/32", "79.139.58.121/32")},
		{Name: "googlebot", Tokens: []string{"Googlebot"},
			Spoofed: addrs("203.0.113.50", "2001:db8:bad::1", "127.0.0.1", "203.0.113.7"),
			Genuine: addrs("66.249.66.1"),
			Listed:  prefixes("66.249.64.0/27", "66.249.66.0/27", "2001:4860:4801:10::/64")},
		{Name: "example-bot", Tokens: []string{"ExampleBot", "ExampleBot-Image", "examplebot", "ExampleSearch"},
			Spoofed: addrs("203.0.113.66", "79.139.58.121", "198.51.100.23"),
			Genuine: addrs("198.51.100.77"),
			Listed:  prefixes("192.0.2.0/28")},
	}
	return in
}

// crawlersGoogleInput has a Googlebot whose lists hold hundreds of
// ranges, as Google publishes them, and spoofers enough for lists.
func crawlersGoogleInput(mode Mode) Input {
	in := crawlersInput(mode)
	g := &in.Crawlers[1]
	for i := range 600 {
		g.Listed = append(g.Listed, netip.PrefixFrom(netip.AddrFrom4([4]byte{34, byte(i / 8), byte(i%8) * 32, 0}), 27))
	}
	for i := range 700 {
		g.Spoofed = append(g.Spoofed, netip.AddrFrom4([4]byte{45, 10, byte(i / 250), byte(i%250 + 1)}))
	}
	return in
}

// TestCrawlersGolden writes every mode with every target for several
// crawlers and compares the result with the golden files.
func TestCrawlersGolden(t *testing.T) {
	for _, mode := range Modes {
		for _, tg := range targets {
			t.Run(string(mode)+"/"+tg.name, func(t *testing.T) {
				var buf bytes.Buffer
				if _, err := tg.write(&buf, crawlersInput(mode)); err != nil {
					t.Fatal(err)
				}
				checkGolden(t, "crawlers."+goldenName(mode, tg.name), buf.Bytes())
			})
		}
	}
}

// TestCrawlersDeterministic: shuffled, duplicated input gives the same
// bytes.
func TestCrawlersDeterministic(t *testing.T) {
	for _, mk := range []func(Mode) Input{crawlersInput, crawlersGoogleInput} {
		for _, mode := range Modes {
			for _, tg := range targets {
				in := mk(mode)
				rev := mk(mode)
				for i := range rev.Crawlers {
					c := &rev.Crawlers[i]
					c.Spoofed = reversed(append(c.Spoofed, c.Spoofed...))
					c.Genuine = reversed(c.Genuine)
					c.Listed = reversed(c.Listed)
				}
				var a, b bytes.Buffer
				_, errA := tg.write(&a, in)
				_, errB := tg.write(&b, rev)
				if fmt.Sprint(errA) != fmt.Sprint(errB) || !bytes.Equal(a.Bytes(), b.Bytes()) {
					t.Errorf("%s/%s: reordered input changed the output (%v, %v):\n%s", mode, tg.name, errA, errB, testutil.LineDiff(a.String(), b.String()))
				}
			}
		}
	}
}

// crawlerInput is one crawler's part of in as an Input of its own.
func crawlerInput(in Input, c CrawlerInput) Input {
	return Input{Mode: in.Mode, NeverBlock: in.NeverBlock, Crawlers: []CrawlerInput{{Tokens: lohiTokens, Spoofed: c.Spoofed, Genuine: c.Genuine, Listed: c.Listed}}}
}

// allCrawlers is in with every crawler's addresses as one: no block set
// may hold any of their listed or genuine addresses.
func allCrawlers(in Input) Input {
	all := Input{Mode: in.Mode, NeverBlock: in.NeverBlock}
	for _, c := range in.Crawlers {
		all.one().Spoofed = append(all.one().Spoofed, c.Spoofed...)
		all.one().Genuine = append(all.one().Genuine, c.Genuine...)
		all.one().Listed = append(all.one().Listed, c.Listed...)
	}
	return all
}

var msCrawlerTag = regexp.MustCompile(`tag:'lohibot-audit/crawler/([a-z0-9-]+)'`)

// readModSecCrawlers reads a multi-crawler ModSecurity file back, crawler
// by crawler (a chained line belongs to the rule above it), and checks
// that the IDs are unique.
func readModSecCrawlers(t testing.TB, out string) map[string]ruleSets {
	t.Helper()
	sections := map[string][]string{}
	cur := ""
	ids := map[string]bool{}
	idRE := regexp.MustCompile(`"id:([0-9]+),`)
	for _, l := range strings.Split(out, "\n") {
		if m := msCrawlerTag.FindStringSubmatch(l); m != nil {
			cur = m[1]
		}
		if m := idRE.FindStringSubmatch(l); m != nil {
			if ids[m[1]] {
				t.Errorf("rule id %s used twice", m[1])
			}
			ids[m[1]] = true
		}
		if strings.HasPrefix(strings.TrimSpace(l), "SecRule") {
			if cur == "" {
				t.Fatalf("rule before any crawler's: %s", l)
			}
			sections[cur] = append(sections[cur], l)
		}
	}
	rs := map[string]ruleSets{}
	for name, lines := range sections {
		rs[name] = readModSec(t, strings.Join(lines, "\n")+"\n")
	}
	return rs
}

// cfCrawlerSets reads a multi-crawler Cloudflare ruleset back, with the
// list output's items, crawler by crawler.
func cfCrawlerSets(t testing.TB, in Input, ruleset []byte, lists map[string][]netip.Prefix) map[string]ruleSets {
	t.Helper()
	rules, err := checkCFRuleset(ruleset)
	if err != nil {
		t.Fatalf("cloudflare ruleset: %v\n%s", err, ruleset)
	}
	out := map[string]ruleSets{}
	for _, r := range rules {
		name, _, _ := strings.Cut(strings.TrimPrefix(r.Description, "lohibot-audit "), ":")
		n, err := parseCFExpr(r.Expression)
		if err != nil {
			t.Fatal(err)
		}
		rs := cfSets(in.Mode, n, func(list string) []netip.Prefix {
			set, ok := lists[list]
			if !ok {
				t.Errorf("%s: the rule refers to $%s, which the list output lacks", name, list)
			}
			return set
		})
		out[name] = rs
	}
	return out
}

// cfCrawlerLists reads the list output of several crawlers.
func cfCrawlerListItems(t testing.TB, data []byte) map[string][]netip.Prefix {
	t.Helper()
	var raw map[string]json.RawMessage
	if err := strictDecode(data, &raw); err != nil {
		t.Fatalf("list output: %v\n%s", err, data)
	}
	out := map[string][]netip.Prefix{}
	total := 0
	for name, items := range raw {
		if !cfListName.MatchString(name) {
			t.Errorf("list name %q", name)
		}
		ps, err := checkCFList(items)
		if err != nil {
			t.Fatalf("list %s: %v", name, err)
		}
		out[name] = ps
		total += len(ps)
	}
	if total > CloudflareMaxListItems {
		t.Errorf("%d list items in all", total)
	}
	return out
}

// checkCrawlersSafety checks each crawler's rules against its own input,
// and every block set against all the crawlers' addresses.
func checkCrawlersSafety(t testing.TB, what string, in Input, per map[string]ruleSets) {
	t.Helper()
	all := allCrawlers(in)
	for _, c := range in.Crawlers {
		rs, ok := per[c.Name]
		if !ok {
			continue // no rule: nothing of it to match
		}
		checkSafety(t, what+" "+c.Name, crawlerInput(in, c), rs)
		if in.Mode == BlockSpoofed {
			checkSafety(t, what+" "+c.Name+" against every crawler", all, ruleSets{block: rs.block})
		}
	}
	for name := range per {
		if !slices.ContainsFunc(in.Crawlers, func(c CrawlerInput) bool { return c.Name == name }) {
			t.Errorf("%s: rules for %q, which is no crawler of the input", what, name)
		}
	}
}

// checkCrawlersAllTargets writes in with every emitter and checks the
// safety property of each crawler's rules.
func checkCrawlersAllTargets(t testing.TB, in Input) {
	t.Helper()
	all := allCrawlers(in)
	for _, o := range []NFTOptions{{}, {SetOnly: true}} {
		var b bytes.Buffer
		if _, err := NFTables(&b, in, o); err != nil {
			t.Fatalf("nftables: %v", err)
		}
		rs := readNFT(t, in.Mode, b.String())
		if in.Mode == BlockSpoofed {
			checkSafety(t, "nftables", all, rs)
		} else {
			checkSafety(t, "nftables", all, ruleSets{block: rs.block, allow: rs.allow})
		}
	}
	var ms bytes.Buffer
	if _, err := ModSecurity(&ms, in, ModSecOptions{}); err == nil {
		checkCrawlersSafety(t, "modsecurity", in, readModSecCrawlers(t, ms.String()))
	} else if !isExpected(err) {
		t.Fatalf("modsecurity: %v", err)
	}
	for _, o := range []CloudflareOptions{{}, {ListName: "l"}} {
		var list, rules bytes.Buffer
		lo := o
		lo.Output = CloudflareList
		if _, err := Cloudflare(&list, in, lo); err != nil {
			if !isExpected(err) {
				t.Fatalf("cloudflare list: %v", err)
			}
			continue
		}
		items := cfCrawlerListItems(t, list.Bytes())
		if _, err := Cloudflare(&rules, in, o); err != nil {
			if !isExpected(err) {
				t.Fatalf("cloudflare: %v", err)
			}
			continue
		}
		checkCrawlersSafety(t, fmt.Sprintf("cloudflare(list %q)", o.ListName), in, cfCrawlerSets(t, in, rules.Bytes(), items))
	}
}

// TestCrawlersSafetyProperty: for random inputs of several crawlers whose
// addresses cross (one's genuine address spoofing another, one's listed
// range in another's spoofers), no rule blocks any crawler's address, a
// special one or one in --never-block, and each token rule spares its
// crawler's addresses.
func TestCrawlersSafetyProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 42))
	for i := range 150 {
		mode := Modes[i%len(Modes)]
		n := 1 + r.IntN(4)
		in := Input{Mode: mode, Named: true}
		var pool []netip.Addr
		for j := range n {
			ri := randomInput(r, mode)
			in.NeverBlock = append(in.NeverBlock, ri.NeverBlock...)
			pool = append(pool, ri.one().Genuine...)
			in.Crawlers = append(in.Crawlers, CrawlerInput{Name: fmt.Sprintf("bot-%d", j), Tokens: []string{fmt.Sprintf("Bot%d", j)},
				Spoofed: ri.one().Spoofed, Genuine: ri.one().Genuine, Listed: ri.one().Listed})
		}
		// Every crawler's genuine addresses also spoof the others.
		for j := range in.Crawlers {
			in.Crawlers[j].Spoofed = append(in.Crawlers[j].Spoofed, pool...)
		}
		checkCrawlersAllTargets(t, in)
		if t.Failed() {
			t.Fatalf("input %d failed", i)
		}
	}
	for _, mode := range Modes {
		checkCrawlersAllTargets(t, crawlersInput(mode))
		checkCrawlersAllTargets(t, crawlersGoogleInput(mode))
	}
}

// TestCrawlersCloudflareGoogle: Google's hundreds of ranges do not fit in
// an expression: Googlebot's rule refers to its lists, the others stay
// inline, every expression stays under the limit, and the rules do what
// they say for real requests.
func TestCrawlersCloudflareGoogle(t *testing.T) {
	in := crawlersGoogleInput(BlockSpoofed)
	var rules, list bytes.Buffer
	p, err := Cloudflare(&rules, in, CloudflareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Cloudflare(&list, in, CloudflareOptions{Output: CloudflareList}); err != nil {
		t.Fatal(err)
	}
	items := cfCrawlerListItems(t, list.Bytes())
	rs, err := checkCFRuleset(rules.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 {
		t.Fatalf("%d rules, want one per crawler", len(rs))
	}
	if !strings.Contains(rs[1].Expression, "$lohibot_googlebot_exempt") || !strings.Contains(rs[1].Expression, "$lohibot_googlebot_spoofed") {
		t.Errorf("googlebot's rule does not refer to its lists: %s", rs[1].Expression)
	}
	if strings.Contains(rs[0].Expression, "$") || strings.Contains(rs[2].Expression, "$") {
		t.Errorf("small crawlers' rules refer to lists:\n%s\n%s", rs[0].Expression, rs[2].Expression)
	}
	if len(items["lohibot_googlebot_exempt"]) != 603 || len(p.Notes) != 2 {
		t.Errorf("%d exempt items, notes %q", len(items["lohibot_googlebot_exempt"]), p.Notes)
	}
	blocked := func(ip, ua string) bool {
		for _, r := range rs {
			n, _ := parseCFExpr(r.Expression)
			if n.eval(cfRequest{ip: netip.MustParseAddr(ip), ua: ua}, items) {
				return true
			}
		}
		return false
	}
	const gUA = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	for _, tc := range []struct {
		ip, ua string
		want   bool
	}{
		{"34.0.32.5", gUA, false},                // in Google's list
		{"66.249.66.1", gUA, false},              // genuine
		{"66.249.66.1", "LohiSoftBot/1.0", true}, // Googlebot's address claiming LohiSoftBot
		{"203.0.113.99", gUA, true},              // not seen, not Google's
		{"45.10.1.7", "curl/8", true},            // a spoofer, whatever it says
		{"203.0.113.99", "curl/8", false},        // nobody
		{"198.51.100.77", "EXAMPLEBOT-image/2", false},
		{"79.139.58.98", "ExampleBot-Image/2", true},
		{"79.139.58.98", "examplesearch/1", true},
		{"198.51.100.77", "ExampleSearch/1", false},
	} {
		if got := blocked(tc.ip, tc.ua); got != tc.want {
			t.Errorf("%s %q: blocked %v, want %v", tc.ip, tc.ua, got, tc.want)
		}
	}
}

// TestCrawlersErrors: names and tokens that cannot go into rules, and a
// crawler with no address of its own.
func TestCrawlersErrors(t *testing.T) {
	for _, c := range []CrawlerInput{
		{Name: "Google", Tokens: []string{"x"}},
		{Name: "a b", Tokens: []string{"x"}},
		{Name: "ok", Tokens: []string{"two words"}},
		{Name: "ok", Tokens: []string{`q"uote`}},
	} {
		in := Input{Crawlers: []CrawlerInput{c}, Named: true}
		if _, err := NFTables(&bytes.Buffer{}, in, NFTOptions{}); err == nil || !strings.Contains(err.Error(), "invalid option") {
			t.Errorf("%+v: err %v", c, err)
		}
	}
	in := Input{Crawlers: []CrawlerInput{{Name: "a", Tokens: []string{"A"}, Listed: prefixes("192.0.2.0/24")}, {Name: "b", Tokens: []string{"B"}}}, Named: true}
	for _, f := range []func() error{
		func() error { _, err := Cloudflare(&bytes.Buffer{}, in, CloudflareOptions{}); return err },
		func() error { _, err := ModSecurity(&bytes.Buffer{}, in, ModSecOptions{}); return err },
	} {
		if err := f(); err == nil || !strings.Contains(err.Error(), "b has no genuine address") {
			t.Errorf("err %v, want b named", err)
		}
	}
	// A crawler known by name only: its addresses are blocked, but a
	// token rule cannot be written.
	named := Input{Crawlers: []CrawlerInput{{Name: "examplebot", Spoofed: addrs("203.0.113.66"), Genuine: addrs("198.51.100.77")}}, Named: true}
	var nft bytes.Buffer
	if _, err := NFTables(&nft, named, NFTOptions{}); err != nil || !strings.Contains(nft.String(), "203.0.113.66") {
		t.Errorf("nftables without tokens: %v\n%s", err, nft.String())
	}
	if _, err := ModSecurity(&bytes.Buffer{}, named, ModSecOptions{}); !errors.Is(err, ErrNoTokens) {
		t.Errorf("modsecurity without tokens: %v", err)
	}
	if _, err := Cloudflare(&bytes.Buffer{}, named, CloudflareOptions{}); !errors.Is(err, ErrNoTokens) {
		t.Errorf("cloudflare without tokens: %v", err)
	}
	named.Mode = BlockBot
	if _, err := Cloudflare(&bytes.Buffer{}, named, CloudflareOptions{}); err != nil {
		t.Errorf("cloudflare block-bot without tokens: %v", err)
	}
	long := in
	long.Crawlers = []CrawlerInput{{Name: strings.Repeat("a", 32), Tokens: []string{"A"}, Listed: prefixes("192.0.2.0/24")}}
	if _, err := Cloudflare(&bytes.Buffer{}, long, CloudflareOptions{ListName: strings.Repeat("l", 20), Output: CloudflareList}); err == nil || !strings.Contains(err.Error(), "longer than 50") {
		t.Errorf("long list name: %v", err)
	}
}
