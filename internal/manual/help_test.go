package manual

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// defaultValues are the default crawler's facts, as cmd gives them.
var defaultValues = Values{Crawler: "LohiSoftBot", IPList: "https://lohisoft.com/bot/ips.json", FCrDNS: "bot.lohisoft.com",
	Builtin: []netip.Prefix{netip.MustParsePrefix("79.139.58.98/32"), netip.MustParsePrefix("79.139.58.121/32")}}

// Every help file makes with the default crawler's values: no field left
// unfilled, each value said where its file names it.
func TestHelpFilesMake(t *testing.T) {
	v := defaultValues
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
	if l := texts["logs"].long; !strings.Contains(l, "claims LohiSoftBot ") {
		t.Errorf("logs' help does not name the crawler:\n%s", l)
	}
	if e := texts["verify"].example; !strings.Contains(e, "verify 79.139.58.98 ") {
		t.Errorf("verify's example does not use the crawler's address:\n%s", e)
	}
	if l := texts["verify"].long; !strings.Contains(l, "ends in .bot.lohisoft.com and") {
		t.Errorf("verify's help does not name the PTR domain:\n%s", l)
	}
	if l := texts["ips"].long; !strings.Contains(l, "at\nhttps://lohisoft.com/bot/ips.json.") || !strings.Contains(l, "(79.139.58.98, 79.139.58.121)") {
		t.Errorf("ips' help does not name the list and the built-in addresses:\n%s", l)
	}
}

// The values are filled in as people write them: single addresses
// without a length, the first of them the example.
func TestValuesFill(t *testing.T) {
	v := Values{Crawler: "ExampleBot", Builtin: []netip.Prefix{netip.MustParsePrefix("192.0.2.7/32"), netip.MustParsePrefix("198.51.100.0/24")}}
	f := v.fill()
	if f.BuiltinIPs != "192.0.2.7, 198.51.100.0/24" || f.ExampleIP != "192.0.2.7" || f.Signals != watchSignals || f.Crawler != "ExampleBot" {
		t.Errorf("fill: %+v", f)
	}
	if f := (Values{Crawler: "bare"}).fill(); f.BuiltinIPs != "" || f.ExampleIP != "" {
		t.Errorf("fill of no addresses: %+v", f)
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
	unused := Describe(root, defaultValues)
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
