package emit

import (
	"regexp"
	"strings"

	"github.com/lohisoft/lohibot-audit/parse"
)

// notTokenChar is the regular-expression class of the bytes that are no
// token character (RFC 9110 tchar, parse.IsTokenChar) in lower-cased text:
// every byte but digits, lower-case letters and !#$%&'*+-.^_`|~. It holds
// no backslash, no double quote and no '[', so it reads the same in
// PCRE (ModSecurity 2 and 3), RE2 and the Rust engine of Cloudflare's
// Rules language, and needs no quoting in a SecRule argument.
var notTokenChar = func() string {
	var b strings.Builder
	b.WriteString("[^0-9a-z")
	dash := false
	for c := 0x21; c < 0x7f; c++ {
		switch {
		case !parse.IsTokenChar(byte(c)), c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c == '-':
			dash = true // last, where it stands for itself
		default:
			b.WriteByte(byte(c))
		}
	}
	if dash {
		b.WriteByte('-')
	}
	b.WriteByte(']')
	return b.String()
}()

// tokenRegexp returns a regular expression that finds any of tokens (in
// lower case) in lower-cased text as a product token, as
// parse.TokenSet.MatchText does: where a token begins with a token
// character, the start of the text or a byte that is none must come
// before it, and where it ends with one, the end or such a byte after it.
// So "googlebot" is found in "compatible; googlebot/2.1" but not in
// "googlebot-image/1.0" or "notgooglebot". It uses no lookaround (the
// Rust engine has none): a match may take the boundary byte with it,
// which does not change whether the text matches.
//
// Tokens hold no backslash nor double quote (checkCrawlers), so the only
// backslashes are the ones escaping a metacharacter (regexp.QuoteMeta),
// never "\\" nor "\"": ModSecurity 2 (Apache's configuration reader) and
// libmodsecurity 3 read such a single backslash alike, where they differ
// on a doubled one (Apache halves it, libmodsecurity keeps both).
func tokenRegexp(tokens []string) string {
	// Tokens are grouped by the boundaries they need, in a fixed order:
	// both, start only, end only, none.
	var groups [4][]string
	for _, t := range tokens {
		if t == "" {
			continue
		}
		g := 3
		switch open, end := parse.IsTokenChar(t[0]), parse.IsTokenChar(t[len(t)-1]); {
		case open && end:
			g = 0
		case open:
			g = 1
		case end:
			g = 2
		}
		groups[g] = append(groups[g], regexp.QuoteMeta(t))
	}
	var parts []string
	for g, alts := range groups {
		if len(alts) == 0 {
			continue
		}
		var b strings.Builder
		if g == 0 || g == 1 {
			b.WriteString("(?:^|" + notTokenChar + ")")
		}
		if len(alts) == 1 {
			b.WriteString(alts[0])
		} else {
			b.WriteString("(?:" + strings.Join(alts, "|") + ")")
		}
		if g == 0 || g == 2 {
			b.WriteString("(?:$|" + notTokenChar + ")")
		}
		parts = append(parts, b.String())
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "(?:" + strings.Join(parts, "|") + ")"
}
