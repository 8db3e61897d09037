package crawler

import (
	"testing"

	"github.com/lohisoft/lohibot-audit/parse"
)

// TestTokenGroups checks that the claims of a run's crawlers, read by
// parse, name each crawler by its place: a nil profile claims nothing.
func TestTokenGroups(t *testing.T) {
	google, ok := Builtin("googlebot")
	if !ok {
		t.Fatal("no built-in googlebot")
	}
	def := DefaultProfile()
	groups := TokenGroups([]*Profile{google, nil, def})
	if len(groups) != 3 || groups[1] != nil || len(groups[0]) == 0 || len(groups[2]) == 0 {
		t.Fatalf("groups %q: want googlebot's tokens, none, the default crawler's", groups)
	}
	set := parse.NewTokenSet(groups)
	for _, tc := range []struct {
		ua   string
		want uint64
	}{
		{"Mozilla/5.0 (compatible; " + google.Tokens[0] + "/2.1; +http://www.google.com/bot.html)", 1},
		{"Mozilla/5.0 (compatible; " + def.Tokens[0] + "/1.0)", 4},
		{"Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0", 0},
	} {
		if got := set.Match([]byte(tc.ua)); got != tc.want {
			t.Errorf("%q: claims %b, want %b", tc.ua, got, tc.want)
		}
	}
}
