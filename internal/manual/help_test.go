package manual

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/spf13/cobra"
)

// Every help file makes with the default crawler's values: no field left
// unfilled, each value said where its file names it.
func TestHelpFilesMake(t *testing.T) {
	v := ValuesOf(crawler.DefaultProfile())
	for _, field := range []string{v.Crawler, v.IPList, v.BuiltinIPs, v.ExampleIP, v.FCrDNS, v.Signals} {
		if field == "" {
			t.Fatalf("ValuesOf(default) left a field empty: %+v", v)
		}
	}
	texts := helpTexts(v)
	if len(texts) < 10 {
		t.Fatalf("%d help files, want one per command", len(texts))
	}
	for name, h := range texts {
		for _, part := range []string{h.long, h.example} {
			if strings.Contains(part, "{{") || strings.Contains(part, "<no value>") || strings.Contains(part, "--- examples ---") {
				t.Errorf("%s: not made whole:\n%s", name, part)
			}
			if strings.HasSuffix(part, "\n") || strings.HasPrefix(part, "\n") {
				t.Errorf("%s: a part begins or ends with a line break: %q", name, part)
			}
		}
		if h.long == "" && h.example == "" {
			t.Errorf("%s: empty", name)
		}
	}
	if w := texts["watch"].long; !strings.Contains(w, watchSignals) {
		t.Errorf("watch's help does not say the signals:\n%s", w)
	}
	if l := texts["logs"].long; !strings.Contains(l, "claims "+v.Crawler+" ") {
		t.Errorf("logs' help does not name the crawler:\n%s", l)
	}
	if e := texts["verify"].example; !strings.Contains(e, "verify "+v.ExampleIP+" ") {
		t.Errorf("verify's example does not use the crawler's address:\n%s", e)
	}
}

// The values are the profile's, addresses written without a length when
// they are single.
func TestValuesOf(t *testing.T) {
	p := &crawler.Profile{
		Name:       "examplebot",
		Tokens:     []string{"ExampleBot"},
		FCrDNS:     []string{"crawl.example.org"},
		IPLists:    []string{"https://example.org/bot.json", "https://example.org/other.json"},
		BuiltinIPs: []netip.Prefix{netip.MustParsePrefix("192.0.2.7/32"), netip.MustParsePrefix("198.51.100.0/24")},
	}
	got := ValuesOf(p)
	want := Values{Crawler: "ExampleBot", IPList: "https://example.org/bot.json", BuiltinIPs: "192.0.2.7, 198.51.100.0/24",
		ExampleIP: "192.0.2.7", FCrDNS: "crawl.example.org", Signals: watchSignals}
	if got != want {
		t.Errorf("ValuesOf:\n got %+v\nwant %+v", got, want)
	}
	if got := ValuesOf(&crawler.Profile{Name: "bare"}); got != (Values{Crawler: "bare", Signals: watchSignals}) {
		t.Errorf("ValuesOf(a bare profile) = %+v", got)
	}
}

// Describe fills each command that has a file, by its path, keeps the
// text of one that has none, and names the files no command took.
func TestDescribe(t *testing.T) {
	root := &cobra.Command{Use: "lohibot-audit"}
	robots := &cobra.Command{Use: "robots"}
	check := &cobra.Command{Use: "check ROBOTS"}
	own := &cobra.Command{Use: "completion", Long: "cobra's own"}
	robots.AddCommand(check)
	root.AddCommand(robots, own)
	unused := Describe(root, ValuesOf(crawler.DefaultProfile()))
	if !strings.HasPrefix(root.Long, "lohibot-audit reads web server access logs") {
		t.Errorf("root: Long = %q", root.Long)
	}
	if !strings.HasPrefix(check.Long, "Check that robots.txt blocks") || !strings.Contains(check.Example, "robots check public/robots.txt") {
		t.Errorf("robots check: Long = %q, Example = %q", check.Long, check.Example)
	}
	if own.Long != "cobra's own" {
		t.Errorf("a command without a file lost its text: %q", own.Long)
	}
	for _, name := range []string{"logs.txt", "robots-test.txt", "watch-status.txt"} {
		if !slices.Contains(unused, name) {
			t.Errorf("unused = %v, want %s among them (no such command here)", unused, name)
		}
	}
	if slices.Contains(unused, "robots-check.txt") || slices.Contains(unused, "lohibot-audit.txt") {
		t.Errorf("unused = %v names a file a command took", unused)
	}
}
