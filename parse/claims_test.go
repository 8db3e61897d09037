package parse

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// naiveMatch is the obvious, slow definition of TokenSet.Match (escaped)
// and MatchText: each case-insensitive occurrence of a token whose edges
// are boundaries. Escapes are found by reading b from the start.
func naiveMatch(groups [][]string, b []byte) uint64 { return naive(groups, b, true) }

func naive(groups [][]string, b []byte, escaped bool) uint64 {
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
	tchar := func(c byte) bool {
		return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
	}
	// escEnd[p]: an escape ends right before b[p].
	escEnd := make([]bool, len(b)+1)
	for i := 0; i < len(b); {
		if !escaped || b[i] != '\\' || i+1 == len(b) {
			i++
			continue
		}
		// The escapes Apache and nginx write; a backslash before any
		// other byte is itself.
		switch {
		case (b[i+1] == 'x' || b[i+1] == 'X') && i+3 < len(b) && isHex(b[i+2]) && isHex(b[i+3]):
			v, _ := strconv.ParseUint(string(b[i+2:i+4]), 16, 8)
			i += 4
			escEnd[i] = !tchar(byte(v))
		case strings.IndexByte("\"\\nrtbvf", b[i+1]) >= 0:
			i += 2
			escEnd[i] = true
		default:
			i++
		}
	}
	var mask uint64
	lb := lower(b)
	for g, toks := range groups {
		for _, t := range toks {
			if t == "" {
				continue
			}
			lt := lower([]byte(t))
			for p := 0; p+len(lt) <= len(lb); p++ {
				if !bytes.Equal(lb[p:p+len(lt)], lt) {
					continue
				}
				e := p + len(lt)
				startOK := !tchar(t[0]) || p == 0 || !tchar(b[p-1]) || escEnd[p]
				endOK := !tchar(t[len(t)-1]) || e == len(b) || !tchar(b[e])
				if startOK && endOK {
					mask |= 1 << g
				}
			}
		}
	}
	return mask
}

func asciiOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

var claimGroups = [][]string{{"LohiSoftBot"}, {"Googlebot"}, {"bingbot"}}

// testClaims is the token set the tests read logs with: LohiSoftBot's.
var testClaims = NewTokenSet(claimGroups[:1])

func TestTokenSetMatch(t *testing.T) {
	s := NewTokenSet(claimGroups)
	for _, tc := range []struct {
		ua   string
		want uint64
	}{
		{"LohiSoftBot/1.0 (+message@lohisoft.com)", 1},
		{"lohisoftbot", 1},
		{"LOHISOFTBOT", 1},
		{"xLohiSoftBotx", 0},
		{"LohiSoftBot2", 0},
		{"(LohiSoftBot)", 1},
		{"+https://lohisoft.com/LohiSoftBot.html", 0},
		{"LohiSoftBo", 0},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", 2},
		{"Googlebot-Image/1.0", 0},
		{"Mozilla/5.0 (compatible; Googlebot-Image/1.0; Googlebot/2.1)", 2},
		{"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", 4},
		{"Googlebot bingbot LohiSoftBot", 7},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", 0},
		{"", 0},
		{"bot", 0},
		{"googlebo", 0},
		// Bytes whose bit 5 set gives a letter must not match that letter.
		{"\x02ing\x02ot", 0},
		{"LohiSoftBot\x00", 1},
		// Server escapes stand for bytes that are no token characters.
		{`\x22LohiSoftBot`, 1},
		{`\"LohiSoftBot\"`, 1},
		{`\tLohiSoftBot`, 1},
		{`\\tLohiSoftBot`, 0},  // a backslash and a "t"
		{`\\\tLohiSoftBot`, 1}, // a backslash and a tab
		{`x41LohiSoftBot`, 0},
		{`\x4LohiSoftBot`, 0},
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

// TestOneTokenClaims checks the set of one crawler (LohiSoftBot, the
// default profile) against the obvious definition, on text made of the
// token's letters.
func TestOneTokenClaims(t *testing.T) {
	s := testClaims
	if len(s.anchors) != 1 || s.anchors[0].b != 'f' {
		t.Errorf("default anchors = %+v, want 'f' (the rarest letter of LohiSoftBot)", s.anchors)
	}
	groups := [][]string{{"LohiSoftBot"}}
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
		if got, want := s.Match(b), naiveMatch(groups, b); got != want {
			t.Fatalf("Match(%q) = %b, want %b", b, got, want)
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
	}{{"YANDEX", 1}, {"qwjk", 2}, {"exabot/1", 4}, {"x 123/", 8}, {"x123/", 0}, {"12/3", 0}, {"Yandex Exabot", 5}, {"qwj", 0}} {
		if got := s.Match([]byte(tc.ua)); got != tc.want {
			t.Errorf("Match(%q) = %b, want %b", tc.ua, got, tc.want)
		}
	}
}

func FuzzTokenSet(f *testing.F) {
	f.Add("Googlebot", "bingbot", []byte("Mozilla/5.0 (compatible; Googlebot/2.1)"))
	f.Add("a1b", "ZZZ", []byte("xxA1Bzzz"))
	f.Add("GPTBot", "LCC", []byte(`NotGPTBotX; SLCC1; \x22GPTBot \\tLCC`))
	f.Add("x41", "(Foo", []byte(`\x41 x41 a(Foo`))
	f.Fuzz(func(t *testing.T, t1, t2 string, b []byte) {
		groups := [][]string{{t1}, {t2, "LohiSoftBot"}}
		s := NewTokenSet(groups)
		if got, want := s.Match(b), naive(groups, b, true); got != want {
			t.Errorf("Match(%q) with %q = %b, want %b", b, groups, got, want)
		}
		if got, want := s.MatchText(b), naive(groups, b, false); got != want {
			t.Errorf("MatchText(%q) with %q = %b, want %b", b, groups, got, want)
		}
		// MayContain: a token anywhere, in any case, and so never less
		// than Match or MatchText.
		want := false
		for _, tok := range []string{t1, t2, "LohiSoftBot"} {
			want = want || tok != "" && bytes.Contains(bytes.ToLower(b), bytes.ToLower([]byte(tok))) && asciiOnly(tok)
		}
		if got := s.MayContain(b); got != want && asciiOnly(t1+t2) || !got && (s.Match(b) != 0 || s.MatchText(b) != 0) {
			t.Errorf("MayContain(%q) with %q = %v, want %v", b, groups, got, want)
		}
	})
}

// TestTokenBoundaries holds the product-token rule against User-Agents
// crawlers send and near-misses: a token is never found inside another
// word (RFC 9110 token characters on both sides).
func TestTokenBoundaries(t *testing.T) {
	groups := [][]string{{"GPTBot"}, {"LCC"}, {"ClaudeBot"}, {"Claude-User"}, {"Applebot"}, {"DuckDuckBot"}, {"Googlebot"}, {"Perplexity-User"}}
	s := NewTokenSet(groups)
	for _, tc := range []struct {
		ua   string
		want uint64
	}{
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)", 1},
		{"NotGPTBotX/1.0", 0},
		{"GPTBot2/1.0", 0},
		{"GPTBot-Extended", 0},
		{"_GPTBot", 0},
		{"GPTBot.", 0},
		{"gptbot", 1},
		{"Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1; SLCC1; .NET CLR 2.0.50727)", 0},
		{"Mozilla/4.0 (compatible; LCC)", 2},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)", 4},
		{"Claude-User/1.0", 8},
		{"Claude-UserX", 0},
		{"Claude", 0},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)", 16},
		{"Applebot-Extended", 0},
		{"DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)", 32},
		{"Mozilla/5.0 (compatible; DuckDuckBot-Https/1.1; https://duckduckgo.com/duckduckbot)", 32}, // the URL's last word
		{"DuckAssistBot/1.2; (+http://duckduckgo.com/duckassistbot.html)", 0},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", 64},
		{"Googlebot-Image/1.0", 0},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)", 128},
		{`\x22GPTBot\x22`, 1},
		{`\\x22GPTBot`, 0},
		// Only an escape a server writes is a boundary: a backslash
		// before a digit stays in the text, and \x41 stands for "A".
		{`\tGPTBot`, 1},
		{`\X22GPTBot`, 1},
		{`\"\"\0GPTBot`, 0},
		{`\x41GPTBot`, 0},
		{`\qGPTBot`, 0},
	} {
		if got := s.Match([]byte(tc.ua)); got != tc.want {
			t.Errorf("Match(%q) = %b, want %b", tc.ua, got, tc.want)
		}
		if got := naiveMatch(groups, []byte(tc.ua)); got != tc.want {
			t.Errorf("naive(%q) = %b, want %b (the test is wrong)", tc.ua, got, tc.want)
		}
	}
	// A token edge that is no token character sets no condition there.
	if got := NewTokenSet([][]string{{"(Foo"}, {"Bar/"}}).Match([]byte("x(Foo Bar/1")); got != 3 {
		t.Errorf("tokens with non-token edges: %b, want 11", got)
	}
	// JSON strings are matched decoded, where a backslash is itself.
	if got := s.MatchText([]byte(`\tGPTBot`)); got != 0 {
		t.Errorf("MatchText read an escape: %b", got)
	}
}

var benchUAs = [][]byte{
	[]byte("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"),
	[]byte("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148"),
	[]byte("Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"),
	[]byte("curl/8.5.0"),
}

func BenchmarkTokenSet1(b *testing.B) {
	s := testClaims
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

// TestReaderClaims reads one log with the three built-in crawlers' tokens
// and with the default set, in a text format and as JSON lines, and checks
// which lines are kept and which crawlers each claims.
func TestReaderClaims(t *testing.T) {
	type want struct {
		line   int64
		claims uint64
	}
	combined := strings.Join([]string{
		`192.0.2.1 - - [01/Dec/2026:06:25:01 +0100] "GET / HTTP/1.1" 200 5 "-" "LohiSoftBot/1.0 (+message@lohisoft.com)"`,
		`192.0.2.2 - - [01/Dec/2026:06:25:02 +0100] "GET / HTTP/1.1" 200 5 "-" "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"`,
		`192.0.2.3 - - [01/Dec/2026:06:25:03 +0100] "GET / HTTP/1.1" 200 5 "-" "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36"`,
		`192.0.2.4 - - [01/Dec/2026:06:25:04 +0100] "GET / HTTP/1.1" 200 5 "-" "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"`,
		`192.0.2.5 - - [01/Dec/2026:06:25:05 +0100] "GET / HTTP/1.1" 200 5 "-" "googlebot bingbot lohisoftbot"`,
		`not a request: Googlebot`,
	}, "\n") + "\n"
	jsonl := strings.Join([]string{
		`{"remote_addr":"192.0.2.1","time_local":"01/Dec/2026:06:25:01 +0100","request":"GET / HTTP/1.1","status":200,"http_user_agent":"LohiSoftBot/1.0"}`,
		`{"remote_addr":"192.0.2.2","time_local":"01/Dec/2026:06:25:02 +0100","request":"GET / HTTP/1.1","status":200,"http_user_agent":"\u0047ooglebot/2.1"}`,
		`{"remote_addr":"192.0.2.3","time_local":"01/Dec/2026:06:25:03 +0100","request":"GET / HTTP/1.1","status":200,"http_user_agent":"curl/8.5.0"}`,
		`{"remote_addr":"192.0.2.4","time_local":"01/Dec/2026:06:25:04 +0100","request":"GET / HTTP/1.1","status":200,"http_user_agent":"bingbot/2.0 \"x\""}`,
		`{"remote_addr":"192.0.2.5","time_local":"01/Dec/2026:06:25:05 +0100","request":"GET / HTTP/1.1","status":200,"http_user_agent":"googlebot bingbot lohisoftbot"}`,
		`{"remote_addr":"192.0.2.6","request":"GET / HTTP/1.1","http_user_agent":"Googlebot no time"}`,
	}, "\n") + "\n"
	three := NewTokenSet(claimGroups)
	for _, tc := range []struct {
		name   string
		log    string
		format *Format
		claims *TokenSet
		want   []want
		// malformedClaims counts the malformed claims.
		malformedClaims int64
	}{
		{"combined, one", combined, Combined, testClaims, []want{{1, 1}, {5, 1}}, 0},
		{"combined, three", combined, Combined, three, []want{{1, 1}, {2, 2}, {4, 4}, {5, 7}}, 1},
		{"json, one", jsonl, JSON, testClaims, []want{{1, 1}, {5, 1}}, 0},
		{"json, three", jsonl, JSON, three, []want{{1, 1}, {2, 2}, {4, 4}, {5, 7}}, 1},
		// No tokens given, nothing is claimed: the reader knows no crawler
		// of its own.
		{"combined, none", combined, Combined, nil, nil, 0},
		{"json, none", jsonl, JSON, nil, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tc.log), Options{Name: "x.log", Format: tc.format, Claims: tc.claims, Workers: 2})
			var got []want
			for r.Scan() {
				rec := r.Record()
				if rec.Claimed != (rec.Claims != 0) {
					t.Errorf("line %d: Claimed %v with Claims %b", rec.Line, rec.Claimed, rec.Claims)
				}
				got = append(got, want{rec.Line, rec.Claims})
			}
			if r.Err() != nil {
				t.Fatal(r.Err())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("kept %v, want %v", got, tc.want)
			}
			if st := r.Stats(); st.Malformed != 1 || st.MalformedClaims != tc.malformedClaims {
				t.Errorf("malformed %d (claims %d), want 1 (%d)", st.Malformed, st.MalformedClaims, tc.malformedClaims)
			}
		})
	}
}

// manyGroups are the tokens of many crawlers, as every built-in profile
// gives them: several anchors, many tokens per anchor.
var manyGroups = [][]string{
	{"LohiSoftBot"}, {"Googlebot"},
	{"Googlebot-Image", "Googlebot-News", "Googlebot-Video", "Storebot-Google", "Google-InspectionTool", "GoogleOther", "GoogleOther-Image", "GoogleOther-Video", "Google-CloudVertexBot"},
	{"AdsBot-Google", "AdsBot-Google-Mobile", "Mediapartners-Google", "APIs-Google", "Google-Safety"},
	{"FeedFetcher-Google", "Google-Site-Verification", "Google-Read-Aloud", "GoogleProducer", "Google-CWS", "Google-NotebookLM", "Google-GeminiNotebook", "Google-Pinpoint", "Google-Agent"},
	{"bingbot"}, {"Applebot"}, {"DuckDuckBot"}, {"GPTBot"}, {"OAI-SearchBot"}, {"ChatGPT-User"}, {"ClaudeBot"}, {"Claude-SearchBot"},
	{"Claude-User"}, {"PerplexityBot"}, {"Perplexity-User"}, {"Amazonbot"},
}

// TestTokenSetManyTokens checks a set of many crawlers' tokens (several
// anchors) against the plain definition, on log-like text made of the
// tokens, their pieces, URLs and separators, escapes included.
func TestTokenSetManyTokens(t *testing.T) {
	s := NewTokenSet(manyGroups)
	if len(s.anchors) < 2 {
		t.Fatalf("anchors %+v: the test wants several", s.anchors)
	}
	pieces := []string{"Google", "google.com", "-", "bot", "User", "Bot", " ", ";", "/", ".", "(", ")", `\x22`, `\\`, "+https://www.google.com/bot.html",
		"Mozilla/5.0", "Gecko", "AppleWebKit", "x"}
	for _, g := range manyGroups {
		pieces = append(pieces, g...)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 20000; i++ {
		var b []byte
		for range rng.IntN(12) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		if got, want := s.Match(b), naive(manyGroups, b, true); got != want {
			t.Fatalf("Match(%q) = %b, want %b", b, got, want)
		}
		if got, want := s.MatchText(b), naive(manyGroups, b, false); got != want {
			t.Fatalf("MatchText(%q) = %b, want %b", b, got, want)
		}
	}
}

func BenchmarkTokenSetMany(b *testing.B) {
	s := NewTokenSet(manyGroups)
	for i := 0; i < b.N; i++ {
		for _, ua := range benchUAs {
			s.Match(ua)
		}
	}
}
