// Package robots reads robots.txt files as RFC 9309 tells a crawler to,
// and fetches them with its rules for answers that are not a file: [Parse]
// and [Robots.Decide] say which line decides for a URL, [Fetcher] applies
// RFC 9309 §2.3.1 to an HTTP answer, and [Set] holds the robots.txt of each
// site of an audit.
package robots

import (
	"fmt"
	"strings"

	"github.com/lohisoft/lohibot-audit/crawler"
)

// MaxBytes is how much of a robots.txt file Parse reads: the
// least parsing limit RFC 9309 §2.5 allows a crawler. Rules past it are
// not seen.
const MaxBytes = 500 << 10

// maxWarnings bounds the warnings kept for one file; a hostile file
// could otherwise produce one per line.
const maxWarnings = 20

// Robots is a parsed robots.txt (RFC 9309), or a stand-in for one that
// could not be fetched ([AllowAll], [DisallowAll]).
//
// The zero value, like a nil *Robots, is an empty file: it allows
// everything. A Robots is never changed after it is made and is safe for
// concurrent use.
//
// How the file is read, where RFC 9309 leaves a choice:
//   - Lines end at CR, LF or CRLF, and line numbers count them so. A UTF-8
//     byte order mark at the start is skipped. Only the first
//     [MaxBytes] are read; a line cut by that limit is dropped.
//   - "#" starts a comment anywhere on a line. Keys are matched without
//     regard to case; a line without a colon is read as "key value" when it
//     has exactly two words, and the misspellings "useragent",
//     "user agent", "dissallow", "dissalow", "disalow", "diasllow" and
//     "disallaw" are accepted, as Google's parser does (RFC 9309 §2.2.4
//     lets a crawler be lenient). Each such line is reported by
//     [Robots.Warnings].
//   - A group is one or more user-agent lines followed by rules; it ends
//     only at a user-agent line that follows a rule, so blank lines,
//     sitemap lines and unknown lines never end a group. Rules before the
//     first user-agent line are ignored.
//   - A user-agent value is cut to its product token, the leading run of
//     letters, "-" and "_" (RFC 9309 §2.2.1's grammar; Google does the
//     same): "ExampleBot/1.0" names ExampleBot, "ExampleBotX" does not.
//     A value that is "*", or "*" followed by a space, names every crawler.
//   - Paths are compared after percent-encoding is normalised on both
//     sides (see [Robots.Decide]); "*" matches any run of bytes and "$"
//     anchors the end of a pattern only as its last character (elsewhere
//     it is a literal "$"). The longest matching pattern wins, its length
//     counted in bytes of the normalised pattern with "*" and "$" counted
//     as one byte each; "allow" wins a tie. An empty pattern matches
//     nothing. Google's rewriting of ".../index.html" allow rules is not
//     done.
type Robots struct {
	groups []group
	// agents maps a lower-case product token to the groups that name it,
	// in file order, each group once.
	agents map[string][]int
	// global lists the groups whose user-agent is "*".
	global []int

	fixed    fixedKind
	why      string
	warnings []string
	dropped  int // warnings not kept
}

type fixedKind int8

const (
	parsed fixedKind = iota
	allowAll
	disallowAll
)

type group struct {
	rules []rule
}

type rule struct {
	allow    bool
	anchored bool   // the pattern ended in "$"
	pattern  string // normalised, without the final "$"
	length   int    // precedence: bytes of the normalised pattern, "$" included
	line     int
	text     string
}

// Decision is the answer of [Robots.Decide].
type Decision struct {
	// Allowed says whether the crawler may fetch the target.
	Allowed bool
	// Line is the 1-based line of the deciding rule; 0 when no rule decided.
	Line int
	// Rule is that line's text as written, without its comment and trimmed,
	// such as "Disallow: /private/"; "" when Line is 0.
	Rule string
	// Why says what decided when Line is 0: "no rule in the ExampleBot
	// group matches", "/robots.txt is always allowed", "no group for
	// ExampleBot and no * group", or the reason given to
	// [AllowAll] or [DisallowAll]. It is "" when a rule decided.
	Why string
	// Agent names the group that applied: the caller's product token, or
	// "*" for the fallback group; "" when no group applied.
	Agent string
}

// AllowAll returns a Robots that allows everything, for a robots.txt
// that answered 4xx (RFC 9309 §2.3.1.3). why is put in every decision.
func AllowAll(why string) *Robots {
	return &Robots{fixed: allowAll, why: why}
}

// DisallowAll returns a Robots that disallows everything but
// /robots.txt itself, for a robots.txt that was unreachable: a 5xx answer
// or a network error (RFC 9309 §2.3.1.4). why is put in every decision.
func DisallowAll(why string) *Robots {
	return &Robots{fixed: disallowAll, why: why}
}

// Parse parses a robots.txt file. It never fails: it reads at most
// [MaxBytes] of data and uses every rule it can make sense of; what
// it could not use is said by [Robots.Warnings].
func Parse(data []byte) *Robots {
	r := &Robots{agents: map[string][]int{}}
	truncated := len(data) > MaxBytes
	if truncated {
		cut := MaxBytes
		if c := data[cut]; c != '\n' && c != '\r' {
			// The limit falls inside a line: drop that line rather than
			// read a shortened, and so broader, rule.
			for cut > 0 && data[cut-1] != '\n' && data[cut-1] != '\r' {
				cut--
			}
		}
		data = data[:cut]
	}
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		data = data[3:]
	}

	cur := -1              // index of the group being read, -1 before the first user-agent
	sawRule := false       // the current group has a rule line, so a user-agent line starts a new group
	var curAgents []string // lower-case tokens of the current group, to add each group once
	lineNo := 0
	for len(data) > 0 {
		i := 0
		for i < len(data) && data[i] != '\n' && data[i] != '\r' {
			i++
		}
		line := data[:i]
		if i < len(data) {
			if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			i++
		}
		data = data[i:]
		lineNo++

		text := lineText(line)
		key, value, how := splitText(text)
		if key == "" {
			continue
		}
		kind, typo := keyKind(key)
		if kind == keyUnknown {
			continue
		}
		if how == sepSpace {
			r.warn(fmt.Sprintf("line %d: %q has no colon; read as %q as Google does, but a strict RFC 9309 parser ignores it", lineNo, short(text), short(key+": "+value)))
		}
		if typo {
			r.warn(fmt.Sprintf("line %d: %q is a misspelling of %s; read as %s as Google does, but a strict RFC 9309 parser ignores it", lineNo, short(key), kind, kind))
		}
		switch kind {
		case keyUserAgent:
			if cur < 0 || sawRule {
				r.groups = append(r.groups, group{})
				cur = len(r.groups) - 1
				sawRule = false
				curAgents = curAgents[:0]
			}
			if value == "*" || len(value) > 1 && value[0] == '*' && (value[1] == ' ' || value[1] == '\t') {
				if n := len(r.global); n == 0 || r.global[n-1] != cur {
					r.global = append(r.global, cur)
				}
				continue
			}
			tok := strings.ToLower(crawler.ProductToken(value))
			if tok == "" {
				r.warn(fmt.Sprintf("line %d: user-agent %q names no product token (letters, '-' and '_'), so it applies to no crawler", lineNo, short(value)))
				continue
			}
			seen := false
			for _, a := range curAgents {
				if a == tok {
					seen = true
					break
				}
			}
			if !seen {
				curAgents = append(curAgents, tok)
				r.agents[tok] = append(r.agents[tok], cur)
			}
		case keyAllow, keyDisallow:
			if cur < 0 {
				r.warn(fmt.Sprintf("line %d: %q comes before any user-agent line and is ignored (RFC 9309 §2.2.2)", lineNo, short(text)))
				continue
			}
			sawRule = true
			ru := rule{allow: kind == keyAllow, line: lineNo, text: text}
			pat := value
			if strings.HasSuffix(pat, "$") {
				ru.anchored = true
				pat = pat[:len(pat)-1]
			}
			ru.pattern = normalize(pat)
			ru.length = len(ru.pattern)
			if ru.anchored {
				ru.length++
			}
			if value != "" && value[0] != '/' && value[0] != '*' {
				r.warn(fmt.Sprintf("line %d: %q does not start with '/' or '*', so it matches no path", lineNo, short(text)))
			}
			g := &r.groups[cur]
			g.rules = append(g.rules, ru)
		}
	}
	if truncated {
		w := fmt.Sprintf("robots.txt is larger than %d KiB: only its first %d lines were read (RFC 9309 §2.5)", MaxBytes>>10, lineNo)
		r.warnings = append([]string{w}, r.warnings...)
		if len(r.warnings) > maxWarnings {
			r.warnings = r.warnings[:maxWarnings]
			r.dropped++
		}
	}
	return r
}

func (r *Robots) warn(s string) {
	if len(r.warnings) < maxWarnings {
		r.warnings = append(r.warnings, s)
		return
	}
	r.dropped++
}

// Warnings returns what a reader of the file should know: lines read
// leniently (a misspelled key, a missing colon), lines that can never
// apply (rules before any user-agent line, patterns that do not start with
// "/" or "*", user-agent values without a product token), and a file cut
// at [MaxBytes]. Text from the file is quoted but not escaped: escape
// it before printing it to a terminal. It returns nil for a clean file.
func (r *Robots) Warnings() []string {
	if r == nil || len(r.warnings) == 0 {
		return nil
	}
	out := append([]string(nil), r.warnings...)
	if r.dropped > 0 {
		out = append(out, fmt.Sprintf("%d more warnings not shown", r.dropped))
	}
	return out
}

// short cuts s for quoting in a warning.
func short(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}

type separator int8

const (
	sepColon separator = iota
	sepSpace
)

// splitText returns the key and value, trimmed, of a line already
// stripped of its comment; key is "" for a line that is blank or not a
// record.
func splitText(s string) (key, value string, how separator) {
	if s == "" {
		return "", "", sepColon
	}
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return trim(s[:i]), trim(s[i+1:]), sepColon
	}
	// No colon: accept "key value" with exactly two words.
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return "", "", sepColon
	}
	value = trim(s[i:])
	if strings.ContainsAny(value, " \t") {
		return "", "", sepColon
	}
	return s[:i], value, sepSpace
}

// lineText is a line without its comment, trimmed.
func lineText(line []byte) string {
	for i, c := range line {
		if c == '#' {
			line = line[:i]
			break
		}
	}
	return trim(string(line))
}

func trim(s string) string {
	return strings.Trim(s, " \t\v\f")
}

type keyword int8

const (
	keyUnknown keyword = iota
	keyUserAgent
	keyAllow
	keyDisallow
)

func (k keyword) String() string {
	switch k {
	case keyUserAgent:
		return "user-agent"
	case keyAllow:
		return "allow"
	case keyDisallow:
		return "disallow"
	}
	return "unknown"
}

// keyKind classifies a key, case-insensitively; typo is true for a
// misspelling that Google's parser accepts.
func keyKind(key string) (kind keyword, typo bool) {
	switch strings.ToLower(key) {
	case "user-agent":
		return keyUserAgent, false
	case "useragent", "user agent":
		return keyUserAgent, true
	case "allow":
		return keyAllow, false
	case "disallow":
		return keyDisallow, false
	case "dissallow", "dissalow", "disalow", "diasllow", "disallaw":
		return keyDisallow, true
	}
	return keyUnknown, false
}

// Decide says whether the crawler whose product token is token may fetch
// target.
//
// token may be a whole product ("ExampleBot/1.0"); it is cut with
// [crawler.ProductToken] and matched without regard to case against the
// file's user-agent lines. All groups naming it are merged; the "*" group
// applies only when none does. A token of "*" or one without a product
// token gets the "*" group.
//
// target is a path with its query ("/a/b?x=1"); an absolute URL is reduced
// to its path and query, a fragment is dropped, and "" means "/". Before
// matching, percent-encoding is normalised on both the target and every
// pattern (RFC 9309 §2.2.2): bytes outside ASCII, controls, space and the
// characters RFC 3986 never allows unescaped are percent-encoded; escapes
// of unreserved characters (letters, digits, "-", ".", "_", "~") are
// decoded; other escapes keep their bytes with upper-case hex; a "%" not
// followed by two hex digits is read as "%25"; and in the query (after the
// first "?"), ":", "/", "?" and "@" compare equal to their escapes, as in
// the RFC's example where "?baz=https://foo.bar" and
// "?baz=https%3A%2F%2Ffoo.bar" are one target. Other reserved characters
// and their escapes stay distinct ("/a%2Fb" is not "/a/b", "%2A" is not a
// wildcard). Matching is case-sensitive and
// starts at the path's first byte. "/robots.txt" is always allowed.
//
// Matching takes time linear in the target's length times the number of
// rules, whatever the patterns: there is no backtracking.
func (r *Robots) Decide(token, target string) Decision {
	path := targetPath(target)
	if path == "/robots.txt" {
		return Decision{Allowed: true, Why: "/robots.txt is always allowed"}
	}
	if r == nil {
		return Decision{Allowed: true, Why: "no robots.txt"}
	}
	switch r.fixed {
	case allowAll:
		return Decision{Allowed: true, Why: r.why}
	case disallowAll:
		return Decision{Allowed: false, Why: r.why}
	}

	tok := crawler.ProductToken(token)
	if strings.TrimSpace(token) == "*" {
		tok = ""
	}
	var groups []int
	agent := ""
	if tok != "" {
		groups = r.agents[strings.ToLower(tok)]
		agent = tok
	}
	if len(groups) == 0 {
		groups = r.global
		agent = "*"
	}
	if len(groups) == 0 {
		name := tok
		if name == "" {
			name = "this crawler"
		}
		return Decision{Allowed: true, Why: fmt.Sprintf("no group for %s and no * group", name)}
	}

	var best *rule
	rules := 0
	for _, gi := range groups {
		g := &r.groups[gi]
		rules += len(g.rules)
		for i := range g.rules {
			ru := &g.rules[i]
			if ru.pattern == "" && !ru.anchored {
				continue // an empty pattern matches nothing
			}
			if best != nil && (ru.length < best.length || ru.length == best.length && (best.allow || !ru.allow)) {
				continue // cannot win: shorter, or a tie that best already wins
			}
			if match(ru.pattern, ru.anchored, path) {
				best = ru
			}
		}
	}
	name := "the " + agent + " group"
	if best == nil {
		if rules == 0 {
			return Decision{Allowed: true, Agent: agent, Why: name + " has no rules"}
		}
		return Decision{Allowed: true, Agent: agent, Why: "no rule in " + name + " matches"}
	}
	return Decision{Allowed: best.allow, Line: best.line, Rule: best.text, Agent: agent}
}

// match reports whether the normalised pattern (with "*" wildcards,
// and anchored at the end when anchored is set) matches the start of path.
// Taking each "*"-free piece at its leftmost place is enough for patterns
// whose only wildcard is "*", so no backtracking is needed.
func match(pat string, anchored bool, path string) bool {
	star := strings.IndexByte(pat, '*')
	if star < 0 {
		if anchored {
			return path == pat
		}
		return strings.HasPrefix(path, pat)
	}
	if !strings.HasPrefix(path, pat[:star]) {
		return false
	}
	pos := star
	pat = pat[star+1:]
	for {
		star = strings.IndexByte(pat, '*')
		if star < 0 {
			break
		}
		if seg := pat[:star]; seg != "" {
			k := strings.Index(path[pos:], seg)
			if k < 0 {
				return false
			}
			pos += k + len(seg)
		}
		pat = pat[star+1:]
	}
	if anchored {
		return len(path)-pos >= len(pat) && strings.HasSuffix(path, pat)
	}
	return strings.Contains(path[pos:], pat)
}

// targetPath reduces a request target or URL to its normalised path
// and query.
func targetPath(t string) string {
	if t == "" {
		return "/"
	}
	if t[0] != '/' {
		// An absolute URL: scheme "://" authority, then the path. A "://"
		// after the first "/", "?" or ";" is part of the path, not a scheme.
		if i := strings.Index(t, "://"); i > 0 && !strings.ContainsAny(t[:i], "/?;#") {
			rest := t[i+3:]
			j := strings.IndexAny(rest, "/?#")
			if j < 0 {
				t = "/"
			} else {
				t = rest[j:]
			}
		}
	}
	if i := strings.IndexByte(t, '#'); i >= 0 {
		t = t[:i]
	}
	if t == "" || t[0] != '/' {
		t = "/" + t
	}
	return normalize(t)
}

const upperHex = "0123456789ABCDEF"

// normalize puts a path or pattern in the one form that matching
// compares; see [Robots.Decide]. "*" and "$" are left as they are.
func normalize(s string) string {
	if isNormal(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	inQuery := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				v := unhex(s[i+1])<<4 | unhex(s[i+2])
				i += 2
				if unreserved(v) || inQuery && queryData(v) {
					b.WriteByte(v)
				} else {
					b.WriteByte('%')
					b.WriteByte(upperHex[v>>4])
					b.WriteByte(upperHex[v&15])
				}
				continue
			}
			b.WriteString("%25")
			continue
		}
		if mustEscape(c) {
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&15])
			continue
		}
		if c == '?' {
			inQuery = true
		}
		b.WriteByte(c)
	}
	return b.String()
}

// isNormal reports whether normalize would return s unchanged,
// so the common case allocates nothing.
func isNormal(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '%' || mustEscape(c) {
			return false
		}
	}
	return true
}

// mustEscape reports whether byte c is compared in escaped form: bytes
// outside ASCII, controls, space, and the characters RFC 3986 never allows
// unescaped in a path or query.
func mustEscape(c byte) bool {
	if c <= ' ' || c >= 0x7f {
		return true
	}
	switch c {
	case '"', '<', '>', '\\', '^', '`', '{', '|', '}', '[', ']':
		return true
	}
	return false
}

// queryData reports whether c is a reserved character that RFC 3986
// lets a query carry as plain data, so that in a query it compares equal
// to its escape.
func queryData(c byte) bool {
	return c == ':' || c == '/' || c == '?' || c == '@'
}

func unreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
