package parse

import (
	"encoding/binary"
	"math/bits"
	"strings"
)

// letterRarity ranks the letters from rarest to commonest in the
// User-Agent headers web servers log (browsers, libraries, crawlers). A
// TokenSet looks for a rare letter of each token first.
const letterRarity = "jqyvdufzxbghwrscnptkmaoeil"

// maxClaimGroups is how many groups (crawlers) a TokenSet tells apart: the
// bits of the mask Match returns.
const maxClaimGroups = 64

// TokenSet finds product tokens in a User-Agent, without regard to ASCII
// case and without allocating. Tokens belong to groups (one per crawler);
// Match says which groups' tokens appear. It looks at eight bytes at a
// time for the tokens' anchor bytes — rare letters chosen so that few
// anchors cover every token — and compares whole tokens only around one.
//
// A token matches as a product token, never inside another word: where
// the token begins with a token character (RFC 9110 §5.6.2 tchar: a
// letter, a digit or one of !#$%&'*+-.^_`|~), the byte before it must not
// be one, and where it ends with one, the byte after it must not be one
// (the start and the end of the text count as boundaries). So GPTBot
// matches "compatible; GPTBot/1.2" and "+https://openai.com/gptbot)" but
// not "NotGPTBotX", "GPTBot-Extended" or "GPTBot2"; LCC does not match
// "SLCC1". A token's edge that is not a token character ("Foo/" or
// "(Foo") sets no condition on that side.
//
// [TokenSet.Match] reads the text as servers log it, with their escapes:
// a backslash that an odd run of backslashes ends, with "x" and two hex
// digits or with one of the letters Apache escapes controls with (\x22,
// \t), is a boundary when the byte it stands for is no token character
// (servers escape quotes, backslashes, controls and non-ASCII bytes,
// never a letter or a digit). So "\x22GPTBot" holds GPTBot, and
// "\\tGPTBot" (a backslash and a "t"), "\0GPTBot" and "\x41GPTBot" do
// not: Match agrees with [TokenSet.MatchText] on the decoded text.
// [TokenSet.MatchText] reads text as it is, such as a JSON
// string once decoded.
//
// The nil *TokenSet matches nothing. A TokenSet is safe for concurrent use.
type TokenSet struct {
	tokens  []setToken
	anchors []anchor
	byFold  [256][]int // tokens (indexes) by the folded byte of their anchor
	// follow[a] holds the folded bytes that come right after anchor a in
	// its tokens (a bit set of 256): most anchors met in a User-Agent
	// ("WebKit", "Mobile") are rejected by the next byte alone, before
	// any token is compared. It is full for an anchor that ends a token.
	follow [256][4]uint64
	minLen int
	// lo is the least offset of an anchor in its token and tail the least
	// number of token bytes after an anchor: anchors are looked for in
	// b[lo : len(b)-tail+1].
	lo, tail int
}

type setToken struct {
	lower string // the token in lower case
	off   int    // where its anchor byte is
	group uint   // its group's bit
	// open says the token begins (openStart) or ends (openEnd) with a
	// token character, so that the byte beside it must not be one.
	openStart, openEnd bool
}

type anchor struct {
	b    byte   // the byte, lower case for a letter
	fold bool   // a letter: compare with b|0x20
	rep  uint64 // b in all eight bytes
}

// NewTokenSet builds the set of groups[i]'s tokens, reported as bit i of
// Match. Empty tokens are ignored; at most 64 groups are used.
func NewTokenSet(groups [][]string) *TokenSet {
	s := &TokenSet{}
	for g, toks := range groups {
		if g >= maxClaimGroups {
			break
		}
		for _, t := range toks {
			if t == "" {
				continue
			}
			s.tokens = append(s.tokens, setToken{lower: lowerASCIIString(t), group: uint(g),
				openStart: IsTokenChar(t[0]), openEnd: IsTokenChar(t[len(t)-1])})
		}
	}
	if len(s.tokens) == 0 {
		return nil
	}
	s.chooseAnchors()
	for _, t := range s.tokens {
		a := t.lower[t.off]
		if t.off+1 == len(t.lower) {
			s.follow[a] = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
			continue
		}
		c := t.lower[t.off+1]
		s.follow[a][c>>6] |= 1 << (c & 63)
		if c >= 'a' && c <= 'z' {
			// A letter after the anchor: either case.
			c -= 'a' - 'A'
			s.follow[a][c>>6] |= 1 << (c & 63)
		}
	}
	s.minLen, s.lo, s.tail = len(s.tokens[0].lower), s.tokens[0].off, len(s.tokens[0].lower)-s.tokens[0].off
	for _, t := range s.tokens {
		s.minLen = min(s.minLen, len(t.lower))
		s.lo = min(s.lo, t.off)
		s.tail = min(s.tail, len(t.lower)-t.off)
	}
	return s
}

// chooseAnchors picks anchor bytes greedily: each round takes the letter
// that covers the most tokens not yet covered per unit of cost, where a
// further anchor costs a pass over the text and a commoner letter costs
// more false starts. A token without letters is anchored on its first
// byte.
func (s *TokenSet) chooseAnchors() {
	covered := make([]bool, len(s.tokens))
	left := len(s.tokens)
	for left > 0 {
		best, bestScore := byte(0), 0.0
		for r := 0; r < len(letterRarity); r++ {
			c := letterRarity[r]
			n := 0
			for i, t := range s.tokens {
				if !covered[i] && strings.IndexByte(t.lower, c) >= 0 {
					n++
				}
			}
			// One pass costs as much as a letter of middling rarity.
			score := float64(n) / float64(len(letterRarity)+r+1)
			if score > bestScore {
				best, bestScore = c, score
			}
		}
		if best == 0 {
			// Tokens without letters: anchor each on its first byte.
			for i, t := range s.tokens {
				if !covered[i] {
					s.addAnchor(t.lower[0], false)
					s.tokens[i].off = 0
					s.byFold[t.lower[0]] = append(s.byFold[t.lower[0]], i)
					covered[i] = true
					left--
				}
			}
			break
		}
		s.addAnchor(best, true)
		for i, t := range s.tokens {
			if !covered[i] {
				if off := strings.IndexByte(t.lower, best); off >= 0 {
					s.tokens[i].off = off
					s.byFold[best] = append(s.byFold[best], i)
					covered[i] = true
					left--
				}
			}
		}
	}
}

func (s *TokenSet) addAnchor(b byte, fold bool) {
	for _, a := range s.anchors {
		if a.b == b && a.fold == fold {
			return
		}
	}
	s.anchors = append(s.anchors, anchor{b: b, fold: fold, rep: uint64(b) * swarOnes})
}

// Contains reports whether b carries any of the tokens.
func (s *TokenSet) Contains(b []byte) bool { return s.Match(b) != 0 }

// Match returns the groups whose tokens appear in b, text as a server
// logs it (with its escapes), as a bit mask (bit i for groups[i] of
// NewTokenSet), or 0.
func (s *TokenSet) Match(b []byte) uint64 { return s.match(b, matchEscaped) }

// MatchText is Match for text without escapes, such as a decoded JSON
// string: every byte stands for itself.
func (s *TokenSet) MatchText(b []byte) uint64 { return s.match(b, matchText) }

// MayContain reports whether b holds any of the tokens anywhere, in any
// case, also inside a longer word: a line that does not cannot be a claim
// in any format, however the format encodes its User-Agent (IIS's '+' for
// spaces puts a token character before the token). A reader that keeps
// the lines that may be claims and parses only those (watch) uses it; the
// parser then decides.
func (s *TokenSet) MayContain(b []byte) bool { return s.match(b, matchAnywhere) != 0 }

// How match reads the text around a token.
type matchMode uint8

const (
	matchText     matchMode = iota // every byte stands for itself
	matchEscaped                   // a server's escape before a token is a boundary
	matchAnywhere                  // no boundaries: a token inside a word counts
)

func (s *TokenSet) match(b []byte, mode matchMode) uint64 {
	if s == nil || len(b) < s.minLen {
		return 0
	}
	// An anchor at j can start a token only when the token fits.
	lo, hi := s.lo, len(b)-s.tail // j in [lo, hi]
	var mask uint64
	i := lo
	if len(s.anchors) == 1 && s.anchors[0].fold {
		a, rep := s.anchors[0].b, s.anchors[0].rep
		for ; i+8 <= hi+1; i += 8 {
			v := (binary.LittleEndian.Uint64(b[i:]) | swarSpaces) ^ rep
			if (v-swarOnes)&^v&swarHighs == 0 {
				continue // no anchor in these eight bytes
			}
			for j := i; j < i+8; j++ {
				if b[j]|0x20 == a {
					mask |= s.tokensAt(b, j, a, mode)
				}
			}
		}
		for ; i <= hi; i++ {
			if b[i]|0x20 == a {
				mask |= s.tokensAt(b, i, a, mode)
			}
		}
		return mask
	}
	for ; i+8 <= hi+1; i += 8 {
		// The bytes that may be an anchor: the high bit of each byte of
		// m, set for every byte equal to an anchor (and, through the
		// subtraction's borrow, for some bytes above one, which anyAt
		// rules out). Only those are looked at.
		w := binary.LittleEndian.Uint64(b[i:])
		var m uint64
		for _, a := range s.anchors {
			v := w ^ a.rep
			if a.fold {
				v = (w | swarSpaces) ^ a.rep
			}
			m |= (v - swarOnes) &^ v & swarHighs
		}
		for ; m != 0; m &= m - 1 {
			mask |= s.anyAt(b, i+bits.TrailingZeros64(m)>>3, mode)
		}
	}
	for ; i <= hi; i++ {
		mask |= s.anyAt(b, i, mode)
	}
	return mask
}

// anyAt checks the tokens of every anchor that b[j] is.
func (s *TokenSet) anyAt(b []byte, j int, mode matchMode) uint64 {
	var mask uint64
	for _, a := range s.anchors {
		if b[j] == a.b || a.fold && b[j]|0x20 == a.b {
			mask |= s.tokensAt(b, j, a.b, mode)
		}
	}
	return mask
}

// tokensAt checks the tokens anchored on byte a, with the anchor at b[j].
func (s *TokenSet) tokensAt(b []byte, j int, a byte, mode matchMode) uint64 {
	if j+1 < len(b) {
		c := b[j+1]
		if s.follow[a][c>>6]&(1<<(c&63)) == 0 {
			return 0
		}
	}
	var mask uint64
	for _, ti := range s.byFold[a] {
		t := &s.tokens[ti]
		p := j - t.off
		e := p + len(t.lower)
		// The edges first: a byte each, they rule out most places (a
		// host name's ".google.com") before the bytes are compared.
		if p >= 0 && e <= len(b) &&
			(!t.openStart || p == 0 || mode == matchAnywhere || !tokenChars[b[p-1]] || mode == matchEscaped && escapeEndsAt(b, p)) &&
			(!t.openEnd || e == len(b) || mode == matchAnywhere || !tokenChars[b[e]]) &&
			equalFoldLower(b[p:e], t.lower) {
			mask |= 1 << t.group
		}
	}
	return mask
}

// tokenChars marks the bytes RFC 9110 §5.6.2 allows in a token (tchar).
var tokenChars = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range []byte("!#$%&'*+-.^_`|~") {
		t[c] = true
	}
	return t
}()

// IsTokenChar reports whether c may be part of an HTTP token (RFC 9110
// §5.6.2 tchar): what a product token in a User-Agent is made of.
func IsTokenChar(c byte) bool { return tokenChars[c] }

// escapeEndsAt reports whether a server's escape ends right before b[p]
// (see [TokenSet]): b[p-4:p] is \xHH, or b[p-2:p] a backslash and one
// byte that does not begin \xHH, where the backslash is the last of an
// odd run (an even run is escaped backslashes).
func escapeEndsAt(b []byte, p int) bool {
	esc := -1 // the escape's backslash
	switch {
	case p >= 4 && b[p-4] == '\\' && (b[p-3] == 'x' || b[p-3] == 'X') && isHex(b[p-2]) && isHex(b[p-1]):
		// \xHH ends a token only where the byte it stands for does
		// (no server writes \x41 for "A", but a hostile line may).
		if tokenChars[unhex(b[p-2])<<4|unhex(b[p-1])] {
			return false
		}
		esc = p - 4
	case p >= 2 && b[p-2] == '\\' && strings.IndexByte("nrtbvf", b[p-1]) >= 0:
		// Apache's escapes of controls; a backslash before any other
		// token character is no escape, and stays in the text.
		esc = p - 2
	default:
		return false
	}
	n := 0
	for i := esc; i >= 0 && b[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// lowerASCIIString is s with ASCII letters in lower case and every other
// byte as it is (strings.ToLower would replace invalid UTF-8).
func lowerASCIIString(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lowerASCII(c)
	}
	return string(b)
}

// equalFoldLower reports whether b equals lower (already in lower case)
// without regard to ASCII case.
func equalFoldLower(b []byte, lower string) bool {
	for k := 0; k < len(lower); k++ {
		if lowerASCII(b[k]) != lower[k] {
			return false
		}
	}
	return true
}
