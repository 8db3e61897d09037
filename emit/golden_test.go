package emit

import (
	"bytes"
	"io"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// fixtureInput is the input every golden file is made from: spoofers of
// every kind the safety rules must handle, genuine addresses inside and
// outside the IP list, and a --never-block range.
func fixtureInput(mode Mode) Input {
	return Input{
		Mode: mode,
		Crawlers: []CrawlerInput{{
			Tokens: lohiTokens,
			Spoofed: addrs(
				"203.0.113.8", "203.0.113.7", "203.0.113.7", // duplicate, unsorted
				"198.51.100.23",
				"2001:db8:bad::2", "2001:db8:bad::1", // one /64
				"2001:db8:beef::1",
				"::ffff:203.0.113.9", // IPv4-mapped
				"10.0.0.5",           // private
				"127.0.0.1",          // loopback
				"169.254.1.1",        // link-local
				"fe80::1",            // link-local
				"100.64.0.1",         // carrier-grade NAT
				"0.0.0.0",            // unspecified
				"79.139.58.98",       // listed
				"198.51.100.200",     // genuine
				"192.0.2.10",         // never-block
			),
			Genuine: addrs("79.139.58.121", "198.51.100.200", "79.139.58.98"),
			Listed:  prefixes("79.139.58.98/32", "79.139.58.121/32"),
		}},
		NeverBlock:   prefixes("192.0.2.0/28"),
		Sources:      []string{"/var/log/nginx/access.log", "/var/log/nginx/access.log.1.gz"},
		IPListSource: "https://lohisoft.com/bot/ips.json",
		Generated:    time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC),
		Version:      "1.0.0",
	}
}

// lohiTokens are the tokens of the crawler the tests write rules for.
var lohiTokens = []string{"LohiSoftBot"}

// one returns the one crawler of in, LohiSoftBot with no address when in
// has none yet.
func (in *Input) one() *CrawlerInput {
	if len(in.Crawlers) == 0 {
		in.Crawlers = []CrawlerInput{{Tokens: lohiTokens}}
	}
	return &in.Crawlers[0]
}

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// target is one way of writing rules, as the golden tests and the tool
// checks run them.
type target struct {
	name  string
	write func(w io.Writer, in Input) (*Plan, error)
}

var targets = []target{
	{"nftables", func(w io.Writer, in Input) (*Plan, error) { return NFTables(w, in, NFTOptions{}) }},
	{"nftables-set-only", func(w io.Writer, in Input) (*Plan, error) {
		return NFTables(w, in, NFTOptions{SetOnly: true, TTL: 36 * time.Hour})
	}},
	{"nftables-prerouting", func(w io.Writer, in Input) (*Plan, error) {
		return NFTables(w, in, NFTOptions{Hook: "prerouting", Priority: "raw+5", Table: "lohibot_edge", TTL: 90 * time.Minute})
	}},
	{"cloudflare-ruleset", func(w io.Writer, in Input) (*Plan, error) { return Cloudflare(w, in, CloudflareOptions{}) }},
	{"cloudflare-ruleset-list", func(w io.Writer, in Input) (*Plan, error) {
		return Cloudflare(w, in, CloudflareOptions{ListName: "my_list"})
	}},
	{"cloudflare-list", func(w io.Writer, in Input) (*Plan, error) {
		return Cloudflare(w, in, CloudflareOptions{Output: CloudflareList})
	}},
	{"cloudflare-expression", func(w io.Writer, in Input) (*Plan, error) {
		return Cloudflare(w, in, CloudflareOptions{Output: CloudflareExpression})
	}},
	{"cloudflare-expression-matches", func(w io.Writer, in Input) (*Plan, error) {
		return Cloudflare(w, in, CloudflareOptions{Output: CloudflareExpression, Matches: true})
	}},
	{"modsecurity", func(w io.Writer, in Input) (*Plan, error) { return ModSecurity(w, in, ModSecOptions{}) }},
}

// checkGolden compares got with testdata/golden/name, or rewrites the file
// with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", "golden", name), got)
}

func goldenName(mode Mode, tg string) string {
	ext := map[bool]string{true: ".nft", false: ""}[strings.HasPrefix(tg, "nftables")]
	switch {
	case strings.HasPrefix(tg, "modsecurity"):
		ext = ".conf"
	case strings.HasPrefix(tg, "cloudflare-expression"):
		ext = ".txt"
	case strings.HasPrefix(tg, "cloudflare"):
		ext = ".json"
	}
	return string(mode) + "." + tg + ext
}

// TestGolden writes every mode with every target and compares the result
// with the golden files.
func TestGolden(t *testing.T) {
	for _, mode := range Modes {
		for _, tg := range targets {
			t.Run(string(mode)+"/"+tg.name, func(t *testing.T) {
				var buf bytes.Buffer
				if _, err := tg.write(&buf, fixtureInput(mode)); err != nil {
					t.Fatal(err)
				}
				checkGolden(t, goldenName(mode, tg.name), buf.Bytes())
			})
		}
	}
}

// TestGoldenHostile pins how hostile provenance text is escaped in each
// header.
func TestGoldenHostile(t *testing.T) {
	for _, tg := range targets {
		if tg.name != "nftables" && tg.name != "modsecurity" && tg.name != "cloudflare-ruleset" {
			continue
		}
		t.Run(tg.name, func(t *testing.T) {
			var buf bytes.Buffer
			if _, err := tg.write(&buf, hostileInput(BlockSpoofed)); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "hostile."+goldenName(BlockSpoofed, tg.name), buf.Bytes())
		})
	}
}

// TestDeterministic checks that shuffled, duplicated input gives the same
// bytes, and that a later run differs only in its generated marker.
func TestDeterministic(t *testing.T) {
	for _, mode := range Modes {
		for _, tg := range targets {
			t.Run(string(mode)+"/"+tg.name, func(t *testing.T) {
				in := fixtureInput(mode)
				var a, b, c bytes.Buffer
				if _, err := tg.write(&a, in); err != nil {
					t.Fatal(err)
				}
				rev := in
				rev.Crawlers = slices.Clone(in.Crawlers)
				orig := in.one()
				rev.one().Spoofed = reversed(append(orig.Spoofed, orig.Spoofed...))
				rev.one().Genuine = reversed(orig.Genuine)
				rev.one().Listed = reversed(orig.Listed)
				if _, err := tg.write(&b, rev); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(a.Bytes(), b.Bytes()) {
					t.Errorf("reordered input changed the output:\n%s", testutil.LineDiff(a.String(), b.String()))
				}
				later := in
				later.Generated = in.Generated.Add(26*time.Hour + 7*time.Second)
				if _, err := tg.write(&c, later); err != nil {
					t.Fatal(err)
				}
				hasMarker := strings.Contains(a.String(), "generated 2026-12-01T03:00:00Z")
				if tg.name == "cloudflare-list" || strings.HasPrefix(tg.name, "cloudflare-expression") {
					if hasMarker || !bytes.Equal(a.Bytes(), c.Bytes()) {
						t.Errorf("%s output should carry no time at all", tg.name)
					}
					return
				}
				if !hasMarker {
					t.Errorf("output has no generated marker:\n%s", a.String())
				}
				if bytes.Equal(a.Bytes(), c.Bytes()) {
					t.Errorf("a later run gave the same bytes: the time is missing")
				}
				if !SameIgnoringGenerated(a.Bytes(), c.Bytes()) {
					t.Errorf("outputs of two runs differ in more than the generated marker:\n%s", testutil.LineDiff(a.String(), c.String()))
				}
			})
		}
	}
}

func reversed[T any](s []T) []T {
	out := make([]T, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}
