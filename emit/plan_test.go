package emit

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/ipfmt"
)

func prefixList(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = ipfmt.Prefix(p)
	}
	return strings.Join(s, " ")
}

func skippedList(ss []Skipped) string {
	s := make([]string, len(ss))
	for i, x := range ss {
		s[i] = ipfmt.Prefix(x.Prefix) + "=" + string(x.Reason)
	}
	return strings.Join(s, " ")
}

func TestNewPlan(t *testing.T) {
	cases := []struct {
		name                          string
		in                            Input
		block, exempt, allow, skipped string
	}{
		{
			name:    "fixture block-spoofed",
			in:      fixtureInput(BlockSpoofed),
			block:   "198.51.100.23 203.0.113.7 203.0.113.8 203.0.113.9 2001:db8:bad::1 2001:db8:bad::2 2001:db8:beef::1",
			exempt:  "79.139.58.98 79.139.58.121 198.51.100.200",
			skipped: "0.0.0.0=unspecified 10.0.0.5=private 79.139.58.98=listed 100.64.0.1=shared 127.0.0.1=loopback 169.254.1.1=link-local 192.0.2.10=never-block 198.51.100.200=genuine fe80::1=link-local",
		},
		{
			name:  "fixture block-bot blocks the crawler, never private or never-block",
			in:    fixtureInput(BlockBot),
			block: "79.139.58.98 79.139.58.121 198.51.100.200",
		},
		{
			name:  "fixture allow-bot",
			in:    fixtureInput(AllowBot),
			allow: "79.139.58.98 79.139.58.121 198.51.100.200",
		},
		{
			name: "zero mode is block-spoofed; mapped and zoned addresses normalised",
			in: Input{
				Crawlers: []CrawlerInput{{Tokens: lohiTokens, Spoofed: []netip.Addr{netip.MustParseAddr("::ffff:198.51.100.1"), netip.MustParseAddr("2001:db8::1%eth0"), {}}, Listed: prefixes("::ffff:79.139.58.0/120")}},
			},
			block:  "198.51.100.1 2001:db8::1",
			exempt: "79.139.58.0/24",
		},
		{
			name: "a spoofer inside a listed prefix stays out",
			in: Input{
				Mode:     BlockSpoofed,
				Crawlers: []CrawlerInput{{Tokens: lohiTokens, Spoofed: addrs("79.139.58.7", "79.139.59.7"), Listed: prefixes("79.139.58.0/24", "79.139.58.98/32")}},
			},
			block:   "79.139.59.7",
			exempt:  "79.139.58.0/24",
			skipped: "79.139.58.7=listed",
		},
		{
			name: "block-bot drops listed prefixes that overlap never-block or special ranges",
			in: Input{
				Mode:       BlockBot,
				NeverBlock: prefixes("198.51.100.128/25"),
				Crawlers:   []CrawlerInput{{Tokens: lohiTokens, Listed: prefixes("79.139.58.0/24", "198.51.100.0/24", "10.0.0.0/8", "0.0.0.0/0", "2001:db8::/48")}},
			},
			block:   "79.139.58.0/24 2001:db8::/48",
			skipped: "0.0.0.0/0=unspecified 10.0.0.0/8=private 198.51.100.0/24=never-block",
		},
		{
			name: "allow-bot never allows special ranges",
			in: Input{
				Mode:     AllowBot,
				Crawlers: []CrawlerInput{{Tokens: lohiTokens, Genuine: addrs("127.0.0.1", "192.168.1.1", "79.139.58.98"), Listed: prefixes("fc00::/7", "224.0.0.0/4")}},
			},
			allow:   "79.139.58.98",
			skipped: "127.0.0.1=loopback 192.168.1.1=private 224.0.0.0/4=multicast fc00::/7=private",
		},
		{
			name: "never-block given as a mapped prefix still protects",
			in: Input{
				Mode:       BlockSpoofed,
				NeverBlock: prefixes("::ffff:198.51.100.0/120"),
				Crawlers:   []CrawlerInput{{Tokens: lohiTokens, Spoofed: addrs("198.51.100.9"), Listed: prefixes("79.139.58.98/32")}},
			},
			exempt:  "79.139.58.98",
			skipped: "198.51.100.9=never-block",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewPlan(c.in)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range []struct{ what, got, want string }{
				{"block", prefixList(p.Block), c.block},
				{"exempt", prefixList(p.Exempt), c.exempt},
				{"allow", prefixList(p.Allow), c.allow},
				{"skipped", skippedList(p.Skipped), c.skipped},
			} {
				if f.got != f.want {
					t.Errorf("%s:\n got  %s\n want %s", f.what, f.got, f.want)
				}
			}
		})
	}
}

func TestNewPlanWidensForCloudflare(t *testing.T) {
	in := Input{
		Mode:     BlockSpoofed,
		Crawlers: []CrawlerInput{{Tokens: lohiTokens, Spoofed: addrs("2001:db8:1::5", "2001:db8:1::6", "2001:db8:2::5", "203.0.113.7"), Genuine: addrs("2001:db8:2::1"), Listed: prefixes("79.139.58.98/32")}},
	}
	p, err := newPlan(in, planLimits{v6Bits: 64, minBits4: 8})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := prefixList(p.Block), "203.0.113.7 2001:db8:1::/64"; got != want {
		t.Errorf("block = %s, want %s", got, want)
	}
	if got, want := skippedList(p.Skipped), "2001:db8:2::/64=genuine"; got != want {
		t.Errorf("skipped = %s, want %s", got, want)
	}
}

func TestCollapse(t *testing.T) {
	got := collapse(prefixes("10.1.0.0/16", "10.0.0.0/8", "10.2.3.4/32", "11.0.0.0/8", "2001:db8::/32", "2001:db8:1::/48", "11.0.0.0/8", "::/0"))
	if want := "10.0.0.0/8 11.0.0.0/8 ::/0"; prefixList(got) != want {
		t.Errorf("collapse = %s, want %s", prefixList(got), want)
	}
	if collapse(nil) != nil {
		t.Error("collapse(nil) is not nil")
	}
}

func TestParseMode(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Mode
		err  bool
	}{{"", BlockSpoofed, false}, {"block-spoofed", BlockSpoofed, false}, {"block-bot", BlockBot, false}, {"allow-bot", AllowBot, false}, {"Block-Bot", "", true}, {"allow", "", true}} {
		got, err := ParseMode(c.in)
		if got != c.want || (err != nil) != c.err || err != nil && !errors.Is(err, ErrBadOption) {
			t.Errorf("ParseMode(%q) = %q, %v", c.in, got, err)
		}
	}
	if _, err := NewPlan(Input{Mode: "drop-all"}); !errors.Is(err, ErrBadOption) {
		t.Errorf("NewPlan with a bad mode: %v", err)
	}
}

func TestParseTTL(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{"7d", 7 * 24 * time.Hour, false},
		{"1d12h", 36 * time.Hour, false},
		{"36h", 36 * time.Hour, false},
		{"90m", 90 * time.Minute, false},
		{" 2d ", 48 * time.Hour, false},
		{"d", 0, true},
		{"-1d", 0, true},
		{"1.5d", 0, true},
		{"7days", 0, true},
		{"-5m", 0, true},
		{"", 0, true},
		{"99999d", 0, true},
		{"1d99999h", 0, true},
	}
	for _, c := range cases {
		got, err := ParseTTL(c.in)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("ParseTTL(%q) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.err)
		}
	}
}

func TestFormatNFTDuration(t *testing.T) {
	cases := []struct {
		in   time.Duration
		want string
		err  bool
	}{
		{7 * 24 * time.Hour, "7d", false},
		{36 * time.Hour, "1d12h", false},
		{90*time.Minute + 5*time.Second, "1h30m5s", false},
		{time.Second, "1s", false},
		{MaxTTL, "365d", false},
		{0, "", true},
		{1500 * time.Millisecond, "", true},
		{MaxTTL + time.Second, "", true},
		{-time.Hour, "", true},
	}
	for _, c := range cases {
		got, err := FormatNFTDuration(c.in)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("FormatNFTDuration(%v) = %q, %v", c.in, got, err)
		}
	}
}

func TestParseNFTPriority(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", "filter - 10"},
		{"-10", "-10"},
		{"+5", "5"},
		{"0", "0"},
		{"filter", "filter"},
		{"raw+5", "raw + 5"},
		{"raw - 0", "raw"},
		{"security  -  3", "security - 3"},
		{"mangle", "mangle"},
		{"dstnat", ""},
		{"filter; drop", ""},
		{"filter -", ""},
		{"1234567", ""},
		{"x", ""},
	}
	for _, c := range cases {
		got, err := ParseNFTPriority(c.in)
		if c.want == "" {
			if !errors.Is(err, ErrBadOption) {
				t.Errorf("ParseNFTPriority(%q) = %q, %v; want an error", c.in, got, err)
			}
			continue
		}
		if got != c.want || err != nil {
			t.Errorf("ParseNFTPriority(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestNFTOptionErrors(t *testing.T) {
	cases := []NFTOptions{
		{Hook: "output"},
		{Hook: "ingress"},
		{Table: "inet lohi bot"},
		{Table: "inet lohi-bot"},
		{Table: "bridge lohibot", SetOnly: true},
		{Table: "ip lohibot"}, // the chain needs inet
		{Table: "inet 1abc"},
		{TTL: time.Millisecond},
		{TTL: 400 * 24 * time.Hour},
		{Priority: "filter }"},
	}
	for _, o := range cases {
		var b strings.Builder
		if _, err := NFTables(&b, fixtureInput(BlockSpoofed), o); !errors.Is(err, ErrBadOption) {
			t.Errorf("NFTables(%+v) err = %v, want ErrBadOption", o, err)
		}
		if b.Len() != 0 {
			t.Errorf("NFTables(%+v) wrote output despite the error", o)
		}
	}
}

func TestModSecurityOptions(t *testing.T) {
	cases := []struct {
		name string
		in   Input
		o    ModSecOptions
		want error
	}{
		{"negative base", fixtureInput(BlockSpoofed), ModSecOptions{IDBase: -1}, ErrBadOption},
		{"base too high", fixtureInput(BlockSpoofed), ModSecOptions{IDBase: ModSecMaxID}, ErrBadOption},
		{"no crawler for the token rule", Input{Mode: BlockSpoofed, Crawlers: []CrawlerInput{{Tokens: lohiTokens, Spoofed: addrs("203.0.113.7")}}}, ModSecOptions{}, ErrNoCrawlerAddresses},
		{"nothing to block", Input{Mode: BlockBot, Crawlers: []CrawlerInput{{Tokens: lohiTokens, Genuine: addrs("10.0.0.1")}}}, ModSecOptions{}, ErrNoCrawlerAddresses},
		{"last id fits", fixtureInput(BlockSpoofed), ModSecOptions{IDBase: ModSecMaxID - 1}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			_, err := ModSecurity(&b, c.in, c.o)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if c.want != nil && b.Len() != 0 {
				t.Errorf("wrote output despite the error")
			}
		})
	}
}

// TestModSecurityRuleShape checks what every rule line must carry.
func TestModSecurityRuleShape(t *testing.T) {
	for _, mode := range Modes {
		for _, in := range []Input{fixtureInput(mode), largeInput(mode)} {
			var b strings.Builder
			if _, err := ModSecurity(&b, in, ModSecOptions{}); err != nil {
				t.Fatal(err)
			}
			ids := map[string]bool{}
			chained := false
			for _, line := range strings.Split(b.String(), "\n") {
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				trimmed := strings.TrimSpace(line)
				if !strings.HasPrefix(trimmed, "SecRule ") {
					t.Fatalf("%s: not a SecRule: %.80s", mode, line)
				}
				actions := trimmed[strings.LastIndex(trimmed[:len(trimmed)-1], `"`)+1 : len(trimmed)-1]
				if !strings.HasPrefix(actions, "t:none") && !strings.Contains(actions, ",t:none") {
					t.Errorf("%s: rule without t:none: %.120s", mode, line)
				}
				if first := strings.Index(actions, "t:"); first >= 0 && !strings.HasPrefix(actions[first:], "t:none") {
					t.Errorf("%s: t:none is not the first transformation: %.120s", mode, actions)
				}
				if chained {
					if strings.Contains(actions, "id:") || strings.Contains(actions, "phase:") {
						t.Errorf("%s: chained rule carries id or phase: %s", mode, actions)
					}
				} else {
					for _, want := range []string{"id:", "phase:1,", "log,", "msg:'", "tag:'lohibot-audit'"} {
						if !strings.Contains(actions, want) {
							t.Errorf("%s: rule lacks %q: %.120s", mode, want, actions)
						}
					}
					if mode != AllowBot && !strings.Contains(actions, "deny,status:403") {
						t.Errorf("%s: deny rule without deny,status:403: %.120s", mode, actions)
					}
					id := actions[strings.Index(actions, "id:"):]
					id = id[:strings.IndexByte(id, ',')]
					if ids[id] {
						t.Errorf("%s: duplicate %s", mode, id)
					}
					ids[id] = true
				}
				chained = strings.HasSuffix(actions, ",chain")
				if n := strings.Count(line, ","); n > ModSecChunk+20 {
					t.Errorf("%s: a line with %d commas: lists are not split", mode, n)
				}
			}
			if chained {
				t.Errorf("%s: the last rule opens a chain", mode)
			}
		}
	}
}

func TestHashComment(t *testing.T) {
	got := hashComment("plain", "", "new\nline", `ends in \`, "tab\tand \x1b esc", "é")
	want := "# plain\n#\n# new\\x0aline\n# ends in \\x5c\n# tab\\x09and \\x1b esc\n# \\xc3\\xa9\n"
	if got != want {
		t.Errorf("hashComment:\n got  %q\n want %q", got, want)
	}
}

func TestQuoting(t *testing.T) {
	if got, want := cfQuote("a\"b\\c\nd"), `"a\"b\\cd"`; got != want {
		t.Errorf("cfQuote = %s, want %s", got, want)
	}
	if got, want := msQuote(`it's "x" \`), `'it s  x   '`; got != want {
		t.Errorf("msQuote = %s, want %s", got, want)
	}
	if got, want := msOperator("@ipMatch", "1.2.3.4\"\\\n"), `"@ipMatch 1.2.3.4\"\\"`; got != want {
		t.Errorf("msOperator = %s, want %s", got, want)
	}
}

func TestSkippedString(t *testing.T) {
	for _, s := range []Skipped{
		{Prefix: netip.MustParsePrefix("10.0.0.1/32"), Reason: SkipPrivate},
		{Prefix: netip.MustParsePrefix("79.139.58.98/32"), Reason: SkipListed},
		{Prefix: netip.MustParsePrefix("198.51.100.0/24"), Reason: SkipNeverBlock},
		{Prefix: netip.MustParsePrefix("198.51.100.200/32"), Reason: SkipGenuine},
		{Prefix: netip.MustParsePrefix("32.0.0.0/7"), Reason: SkipTooWide},
	} {
		msg := s.String()
		if !strings.HasPrefix(msg, ipfmt.Prefix(s.Prefix)+" ") || strings.ContainsAny(msg, "\n") {
			t.Errorf("Skipped.String() = %q", msg)
		}
	}
	special := []SkipReason{SkipPrivate, SkipLoopback, SkipUnspecified, SkipLinkLocal, SkipMulticast, SkipShared, SkipReserved}
	for _, r := range []SkipReason{SkipTooWide, SkipPrivate, SkipListed, SkipGenuine, SkipNeverBlock, SkipLoopback, SkipUnspecified, SkipLinkLocal, SkipMulticast, SkipShared, SkipReserved} {
		if r.Special() != slices.Contains(special, r) {
			t.Errorf("%s.Special() = %v", r, r.Special())
		}
	}
}

func TestParseNeverBlock(t *testing.T) {
	got, err := ParseNeverBlock([]string{"192.0.2.7/24, 2001:db8::1", "", "fe80::1%eth0,,198.51.100.9"})
	want := prefixes("192.0.2.0/24", "2001:db8::1/128", "fe80::1/128", "198.51.100.9/32")
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	var bad *BadPrefixError
	if _, err := ParseNeverBlock([]string{"192.0.2.0/24,example.com"}); !errors.As(err, &bad) || bad.Value != "example.com" {
		t.Errorf("err %v, want example.com named", err)
	}
}
