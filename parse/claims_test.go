package parse

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// naiveMatch is the obvious, slow definition of TokenSet.Match.
func naiveMatch(groups [][]string, b []byte) uint64 {
	lower := func(b []byte) []byte {
		out := make([]byte, len(b))
		for i, c := range b {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			out[i] = c
		}
		return out
	}
	var mask uint64
	lb := lower(b)
	for g, toks := range groups {
		for _, t := range toks {
			if t != "" && bytes.Contains(lb, lower([]byte(t))) {
				mask |= 1 << g
			}
		}
	}
	return mask
}

var claimGroups = [][]string{{"LohiSoftBot"}, {"Googlebot"}, {"bingbot"}}

func TestTokenSetMatch(t *testing.T) {
	s := NewTokenSet(claimGroups)
	for _, tc := range []struct {
		ua   string
		want uint64
	}{
		{"LohiSoftBot/1.0 (+message@lohisoft.com)", 1},
		{"lohisoftbot", 1},
		{"LOHISOFTBOT", 1},
		{"xLohiSoftBotx", 1},
		{"LohiSoftBo", 0},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", 2},
		{"Googlebot-Image/1.0", 2},
		{"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", 4},
		{"Googlebot bingbot LohiSoftBot", 7},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", 0},
		{"", 0},
		{"bot", 0},
		{"googlebo", 0},
		// Bytes whose bit 5 set gives a letter must not match that letter.
		{"\x02ing\x02ot", 0},
		{"LohiSoftBot\x00", 1},
	} {
		if got := s.Match([]byte(tc.ua)); got != tc.want {
			t.Errorf("Match(%q) = %b, want %b", tc.ua, got, tc.want)
		}
		if got := naiveMatch(claimGroups, []byte(tc.ua)); got != tc.want {
			t.Errorf("naive(%q) = %b, want %b (the test is wrong)", tc.ua, got, tc.want)
		}
	}
	var nilSet *TokenSet
	if nilSet.Match([]byte("LohiSoftBot")) != 0 || NewTokenSet(nil) != nil || NewTokenSet([][]string{{""}}) != nil {
		t.Error("an empty TokenSet matches")
	}
}

// TestTokenSetAgreesWithContainsToken checks the one-crawler set against
// the reader's dedicated LohiSoftBot search.
func TestTokenSetAgreesWithContainsToken(t *testing.T) {
	s := NewTokenSet([][]string{{Token}})
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("lohisoftbLOHISOFTB xf/.;()-\x00\xff")
	for i := 0; i < 20000; i++ {
		b := make([]byte, rng.IntN(40))
		for j := range b {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		}
		if rng.IntN(4) == 0 && len(b) > 11 {
			p := rng.IntN(len(b) - 10)
			copy(b[p:], "lOhIsOfTbOt")
		}
		if got, want := s.Contains(b), ContainsToken(b); got != want {
			t.Fatalf("Contains(%q) = %v, ContainsToken = %v", b, got, want)
		}
	}
}

func TestTokenSetAnchors(t *testing.T) {
	// The three built-in crawlers share the 'b' of "bot": one pass.
	if s := NewTokenSet(claimGroups); len(s.anchors) != 1 || s.anchors[0].b != 'b' {
		t.Errorf("anchors for %v = %+v, want one: 'b'", claimGroups, s.anchors)
	}
	// One token: its rarest letter.
	if s := NewTokenSet([][]string{{"LohiSoftBot"}}); len(s.anchors) != 1 || s.anchors[0].b != 'f' {
		t.Errorf("anchors for LohiSoftBot = %+v, want 'f'", s.anchors)
	}
	// Tokens without a letter in common need several anchors, and a token
	// without letters is anchored on a byte.
	s := NewTokenSet([][]string{{"Yandex"}, {"Qwant"}, {"Seznam"}, {"123/"}})
	if len(s.anchors) != 2 || s.anchors[0].b != 'n' || s.anchors[1].b != '1' {
		t.Errorf("anchors = %+v, want 'n' (in every name) and '1'", s.anchors)
	}
	s = NewTokenSet([][]string{{"Yandex"}, {"Qwjk"}, {"Exabot"}, {"123/"}})
	if len(s.anchors) != 3 {
		t.Errorf("anchors = %+v, want 3", s.anchors)
	}
	for _, tc := range []struct {
		ua   string
		want uint64
	}{{"YANDEX", 1}, {"qwjk", 2}, {"exabot/1", 4}, {"x123/", 8}, {"12/3", 0}, {"Yandex Exabot", 5}, {"qwj", 0}} {
		if got := s.Match([]byte(tc.ua)); got != tc.want {
			t.Errorf("Match(%q) = %b, want %b", tc.ua, got, tc.want)
		}
	}
}

func FuzzTokenSet(f *testing.F) {
	f.Add("Googlebot", "bingbot", []byte("Mozilla/5.0 (compatible; Googlebot/2.1)"))
	f.Add("a1b", "ZZZ", []byte("xxA1Bzzz"))
	f.Fuzz(func(t *testing.T, t1, t2 string, b []byte) {
		groups := [][]string{{t1}, {t2, "LohiSoftBot"}}
		if got, want := NewTokenSet(groups).Match(b), naiveMatch(groups, b); got != want {
			t.Errorf("Match(%q) with %q = %b, want %b", b, groups, got, want)
		}
	})
}

var benchUAs = [][]byte{
	[]byte("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"),
	[]byte("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148"),
	[]byte("Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"),
	[]byte("curl/8.5.0"),
}

func BenchmarkContainsToken(b *testing.B) {
	for i := 0; i < b.N; i++ {
		for _, ua := range benchUAs {
			ContainsToken(ua)
		}
	}
}

func BenchmarkTokenSet1(b *testing.B) {
	s := NewTokenSet([][]string{{Token}})
	for i := 0; i < b.N; i++ {
		for _, ua := range benchUAs {
			s.Match(ua)
		}
	}
}

func BenchmarkTokenSet3(b *testing.B) {
	s := NewTokenSet(claimGroups)
	for i := 0; i < b.N; i++ {
		for _, ua := range benchUAs {
			s.Match(ua)
		}
	}
}
