package emit

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/parse"
)

// lowerASCII lower-cases the ASCII letters of s and leaves every other
// byte alone, as ModSecurity's t:lowercase and Cloudflare's lower() do.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// claimJudges holds, for one set of tokens, what a generated token rule
// decides about a User-Agent (the rule's regular expression run on the
// lower-cased header) and what the audit decides (a claim when the
// User-Agent holds a token as a product token).
type claimJudges struct {
	re  *regexp.Regexp
	set *parse.TokenSet
}

func newClaimJudges(t testing.TB, tokens []string) claimJudges {
	t.Helper()
	re, err := regexp.Compile(tokenRegexp(lowerTokens(tokens)))
	if err != nil {
		t.Fatalf("tokens %q: %v", tokens, err)
	}
	return claimJudges{re, parse.NewTokenSet([][]string{tokens})}
}

func (j claimJudges) rule(ua string) bool   { return j.re.MatchString(lowerASCII(ua)) }
func (j claimJudges) reader(ua string) bool { return j.set.MatchText([]byte(ua)) != 0 }

// TestNotTokenCharIsReaders checks the boundary class byte by byte against
// the reader's token characters, on lower-cased text.
func TestNotTokenCharIsReaders(t *testing.T) {
	re := regexp.MustCompile("^" + notTokenChar + "$")
	for c := 0; c < 256; c++ {
		got := re.Match([]byte(lowerASCII(string([]byte{byte(c)}))))
		if want := !parse.IsTokenChar(byte(c)); got != want {
			t.Errorf("byte %#x: class matches %v, want %v", c, got, want)
		}
	}
	inner := strings.TrimSuffix(strings.TrimPrefix(notTokenChar, "[^"), "]")
	if strings.ContainsAny(inner, `\"[]`) || len(inner) != len(notTokenChar)-3 {
		t.Errorf("class %s holds a byte that needs quoting", notTokenChar)
	}
}

// oddTokens are tokens that put the regex quoting and the boundary rule to
// work: metacharacters, edges that are no token characters, a "%{" that
// ModSecurity 2 would read as a macro.
var oddTokens = [][]string{
	{"LohiSoftBot"},
	{"ExampleBot", "ExampleBot-Image", "examplebot", "ExampleSearch"},
	{"a.b", "x+y*", "q?z", "(paren", "slash/", "%{env}", "^caret$", "[br]", "pipe|bar", "{c}"},
	{"(compatible;Foo)", "Bar;", ";Baz"},
	{"GoogleOther", "GoogleOther-Image", "Google-Other"},
}

// agreementUAs are User-Agents the rules and the reader must judge alike
// for every token set: real ones, near misses, edges and odd bytes.
var agreementUAs = []string{
	"LohiSoftBot/1.0 (+message@lohisoft.com)",
	"Mozilla/5.0 (compatible; lohisoftbot/1.0; +https://lohisoft.com/bot)",
	"NotLohiSoftBotX/1.0", "LohiSoftBot-Image/1.0", "+LOHISOFTBOT", "xLohiSoftBot", "LohiSoftBot2",
	"(LOHISOFTBOT)", "LohiSoftBot", " LohiSoftBot ", "\x80LohiSoftBot\xff", "é LohiSoftBot",
	"ExampleBot-Image/1.0", "ExampleBot-Imagery", "Mozilla/5.0 (compatible; ExampleSearch)", "examplebot_",
	"A.B", "axb", "x+y*/1", "x+yy", "q?z", "qz", "(paren)", "x(paren", "slash/1", "x-slash/",
	"%{env}", "a%{env}", "^caret$", "x^caret$", "[br]", "pipe|bar", "pipebar", "{c}", "{{c}}",
	"Mozilla/5.0 (compatible;Foo)", "x(compatible;foo)y Bar;", "Baz;Baz", "x;baz",
	"GoogleOther", "GoogleOther-Image/1.0", "GoogleOther-Video/1.0", "Google-Other", "Google-OtherX",
	"Mozilla/5.0 (X11; Linux x86_64)", "", "-", "LohiSoft Bot",
}

// TestTokenRegexpAgreesWithReader checks that the token rules claim a
// User-Agent exactly when the audit does, for every built-in crawler's
// tokens and for odd ones, on real, near-miss and random User-Agents.
func TestTokenRegexpAgreesWithReader(t *testing.T) {
	sets := append([][]string{}, oddTokens...)
	for _, name := range crawler.BuiltinNames() {
		p, _ := crawler.Builtin(name)
		sets = append(sets, p.Tokens)
	}
	uas := append([]string{}, agreementUAs...)
	for _, name := range crawler.BuiltinNames() {
		p, _ := crawler.Builtin(name)
		for _, tok := range p.Tokens {
			uas = append(uas, tok, "Mozilla/5.0 (compatible; "+tok+"/1.0; +https://example.com/)",
				"Not"+tok, tok+"X", tok+"-Extended", "+"+tok, strings.ToUpper(tok)+";", "\""+tok+"\"")
		}
	}
	// Random User-Agents made of tokens, parts of tokens and bytes on
	// either side of the boundary rule.
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"-", "_", ".", "+", "/", " ", ";", "(", ")", "x", "Z", "0", "\x80", "%", "{", "^", "|", "$"}
	for _, s := range sets {
		for _, tok := range s {
			pieces = append(pieces, tok, strings.ToUpper(tok), tok[:len(tok)/2], tok[len(tok)/2:])
		}
	}
	for range 3000 {
		var b strings.Builder
		for n := rng.IntN(5) + 1; n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		uas = append(uas, b.String())
	}
	claims := 0
	for _, s := range sets {
		j := newClaimJudges(t, s)
		for _, ua := range uas {
			want := j.reader(ua)
			if got := j.rule(ua); got != want {
				t.Errorf("tokens %q, User-Agent %q: rule claims %v, the audit %v (regexp %s)", s, ua, got, want, tokenRegexp(lowerTokens(s)))
			}
			if want {
				claims++
			}
		}
	}
	if claims < 500 {
		t.Errorf("only %d claims among the cases: the test does not exercise matching", claims)
	}
}

// FuzzTokenRegexp compares the token rules with the reader on any
// tokens (space separated, as a profile may hold them) and User-Agent.
func FuzzTokenRegexp(f *testing.F) {
	f.Add("LohiSoftBot", "Mozilla/5.0 (compatible; LohiSoftBot/1.0)")
	f.Add("ExampleBot ExampleBot-Image", "ExampleBot-Image/1.0")
	f.Add("a.b (x %{y}", "A.B (X %{Y}")
	f.Fuzz(func(t *testing.T, tokens, ua string) {
		var toks []string
		for _, tok := range strings.Fields(tokens) {
			if plainToken(tok) {
				toks = append(toks, tok)
			}
		}
		if len(toks) == 0 {
			return
		}
		j := newClaimJudges(t, toks)
		if got, want := j.rule(ua), j.reader(ua); got != want {
			t.Errorf("tokens %q, User-Agent %q: rule claims %v, the audit %v (regexp %s)", toks, ua, got, want, tokenRegexp(lowerTokens(toks)))
		}
	})
}
