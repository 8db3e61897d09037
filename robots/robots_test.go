package robots

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// decideCase is one question put to a robots.txt: may token fetch target?
type decideCase struct {
	name    string
	robots  string
	token   string // "" means LohiSoftBot
	target  string
	allowed bool
	line    int    // deciding line, 0 when none
	rule    string // checked when line > 0 and non-empty
	why     string // checked when line == 0 and non-empty
	agent   string // checked when non-empty
}

func runCases(t *testing.T, cases []decideCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			token := tc.token
			if token == "" {
				token = testToken
			}
			got := Parse([]byte(tc.robots)).Decide(token, tc.target)
			if got.Allowed != tc.allowed || got.Line != tc.line {
				t.Fatalf("Decide(%q, %q) = allowed %v by line %d (%q, why %q); want allowed %v by line %d",
					token, tc.target, got.Allowed, got.Line, got.Rule, got.Why, tc.allowed, tc.line)
			}
			if tc.line > 0 && (got.Rule == "" || tc.rule != "" && got.Rule != tc.rule) {
				t.Errorf("Rule = %q, want %q", got.Rule, tc.rule)
			}
			if tc.line > 0 && got.Why != "" {
				t.Errorf("Why = %q, want empty when a rule decided", got.Why)
			}
			if tc.line == 0 && got.Rule != "" {
				t.Errorf("Rule = %q, want empty when no rule decided", got.Rule)
			}
			if tc.line == 0 && got.Why == "" {
				t.Errorf("Why is empty although no rule decided")
			}
			if tc.why != "" && got.Why != tc.why {
				t.Errorf("Why = %q, want %q", got.Why, tc.why)
			}
			if tc.agent != "" && got.Agent != tc.agent {
				t.Errorf("Agent = %q, want %q", got.Agent, tc.agent)
			}
		})
	}
}

func TestGroups(t *testing.T) {
	runCases(t, []decideCase{
		{name: "specific group applies", robots: "User-agent: LohiSoftBot\nDisallow: /\n", target: "/a", allowed: false, line: 2, rule: "Disallow: /", agent: "LohiSoftBot"},
		{name: "other crawler's group does not apply", robots: "User-agent: Googlebot\nDisallow: /\n", target: "/a", allowed: true, why: "no group for LohiSoftBot and no * group"},
		{name: "no groups at all", robots: "# nothing\n", target: "/a", allowed: true, why: "no group for LohiSoftBot and no * group"},
		{name: "empty file", robots: "", target: "/", allowed: true, why: "no group for LohiSoftBot and no * group"},
		{name: "star group when no group names the token", robots: "User-agent: *\nDisallow: /x\n", target: "/x/y", allowed: false, line: 2, rule: "Disallow: /x", agent: "*"},
		{name: "star group ignored when a group names the token", robots: "User-agent: *\nDisallow: /\n\nUser-agent: LohiSoftBot\nDisallow: /private\n", target: "/public", allowed: true, why: "no rule in the LohiSoftBot group matches", agent: "LohiSoftBot"},
		{name: "empty named group allows all and hides star", robots: "User-agent: *\nDisallow: /\n\nUser-agent: LohiSoftBot\n", target: "/anything", allowed: true, why: "the LohiSoftBot group has no rules"},
		{name: "token case-insensitive in file", robots: "user-agent: LOHISOFTBOT\ndisallow: /\n", target: "/", allowed: false, line: 2},
		{name: "token case-insensitive from caller", robots: "User-agent: LohiSoftBot\nDisallow: /\n", token: "lohisoftbot", target: "/", allowed: false, line: 2},
		{name: "caller token cut at version", robots: "User-agent: LohiSoftBot\nDisallow: /\n", token: "LohiSoftBot/1.0", target: "/", allowed: false, line: 2},
		{name: "file value cut at version", robots: "User-agent: LohiSoftBot/1.0\nDisallow: /\n", target: "/", allowed: false, line: 2},
		{name: "file value cut at space", robots: "User-agent: LohiSoftBot crawler\nDisallow: /\n", target: "/", allowed: false, line: 2},
		{name: "no prefix match of longer name", robots: "User-agent: LohiSoftBotX\nDisallow: /\n", target: "/", allowed: true, why: "no group for LohiSoftBot and no * group"},
		{name: "no prefix match of shorter name", robots: "User-agent: Lohi\nDisallow: /\n", target: "/", allowed: true},
		{name: "digits end the token as Google reads it", robots: "User-agent: LohiSoftBot2\nDisallow: /\n", target: "/", allowed: false, line: 2},
		{name: "star followed by words is global", robots: "User-agent: * everyone\nDisallow: /\n", target: "/", allowed: false, line: 2, agent: "*"},
		{name: "star glued to a name is no token", robots: "User-agent: *bot\nDisallow: /\n", target: "/", allowed: true, why: "no group for LohiSoftBot and no * group"},
		{name: "consecutive user-agent lines share rules", robots: "User-agent: Googlebot\nUser-agent: LohiSoftBot\nDisallow: /g\n", target: "/g", allowed: false, line: 3},
		{name: "blank line does not end a group", robots: "User-agent: LohiSoftBot\n\nDisallow: /b\n", target: "/b", allowed: false, line: 3},
		{name: "blank line between user-agents keeps one group", robots: "User-agent: Googlebot\n\nUser-agent: LohiSoftBot\nDisallow: /g\n", target: "/g", allowed: false, line: 4},
		{name: "sitemap does not end a group", robots: "User-agent: LohiSoftBot\nSitemap: https://x/s.xml\nDisallow: /s\n", target: "/s", allowed: false, line: 3},
		{name: "sitemap between user-agents keeps one group", robots: "User-agent: LohiSoftBot\nSitemap: https://x/s.xml\nUser-agent: Googlebot\nDisallow: /s\n", target: "/s", allowed: false, line: 4},
		{name: "unknown line does not end a group", robots: "User-agent: LohiSoftBot\nCrawl-delay: 5\nDisallow: /c\n", target: "/c", allowed: false, line: 3},
		{name: "user-agent after a rule starts a new group", robots: "User-agent: LohiSoftBot\nDisallow: /a\nUser-agent: Googlebot\nDisallow: /b\n", target: "/b", allowed: true, why: "no rule in the LohiSoftBot group matches"},
		{name: "empty disallow still ends the user-agent run", robots: "User-agent: LohiSoftBot\nDisallow:\nUser-agent: Googlebot\nDisallow: /\n", target: "/x", allowed: true, why: "no rule in the LohiSoftBot group matches"},
		{name: "rules before first user-agent ignored", robots: "Disallow: /\nUser-agent: *\nAllow: /x\n", target: "/y", allowed: true, why: "no rule in the * group matches"},
		{name: "groups naming the token are merged", robots: "User-agent: LohiSoftBot\nDisallow: /foo\n\nUser-agent: *\nDisallow: /\n\nUser-agent: lohisoftbot\nDisallow: /baz\n", target: "/baz/1", allowed: false, line: 8, rule: "Disallow: /baz"},
		{name: "merged groups: longest across groups", robots: "User-agent: LohiSoftBot\nDisallow: /a\n\nUser-agent: LohiSoftBot\nAllow: /a/b\n", target: "/a/b/c", allowed: true, line: 5, rule: "Allow: /a/b"},
		{name: "star groups are merged too", robots: "User-agent: *\nDisallow: /a\n\nUser-agent: Googlebot\nDisallow: /\n\nUser-agent: *\nDisallow: /c\n", target: "/c", allowed: false, line: 8},
		{name: "token without product token and no star group", robots: "User-agent: LohiSoftBot\nDisallow: /\n", token: "1.0", target: "/s", allowed: true, why: "no group for this crawler and no * group"},
	})
}

func TestTokenStar(t *testing.T) {
	// The token "*" asks what the fallback group says.
	r := Parse([]byte("User-agent: *\nDisallow: /s\n\nUser-agent: LohiSoftBot\nDisallow: /l\n"))
	got := r.Decide("*", "/s")
	if got.Allowed || got.Line != 2 || got.Agent != "*" {
		t.Errorf("Decide(*, /s) = %+v, want disallowed by line 2 of the * group", got)
	}
}

func TestRFC9309Examples(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "robots", "rfc9309-example.txt"))
	if err != nil {
		t.Fatal(err)
	}
	file := string(data)
	// RFC 9309 §5.1: what each crawler may fetch from the example file.
	runCases(t, []decideCase{
		{name: "foobot page.html allowed", robots: file, token: "foobot", target: "/example/page.html", allowed: true, line: 8, rule: "Allow:/example/page.html"},
		{name: "foobot allowed.gif allowed", robots: file, token: "foobot", target: "/example/allowed.gif", allowed: true, line: 9},
		{name: "foobot elsewhere disallowed", robots: file, token: "foobot", target: "/publications/x", allowed: false, line: 7, rule: "Disallow:/"},
		{name: "barbot page.html disallowed", robots: file, token: "barbot", target: "/example/page.html", allowed: false, line: 13},
		{name: "bazbot shares barbot's group", robots: file, token: "bazbot", target: "/example/page.html", allowed: false, line: 13},
		{name: "barbot other pages allowed", robots: file, token: "barbot", target: "/example/other.html", allowed: true, why: "no rule in the barbot group matches"},
		{name: "quxbot's empty group allows all", robots: file, token: "quxbot", target: "/example/x.gif", allowed: true, why: "the quxbot group has no rules"},
		{name: "other crawler gif disallowed", robots: file, token: "LohiSoftBot", target: "/img/a.gif", allowed: false, line: 2, rule: "Disallow: *.gif$"},
		{name: "other crawler gif with query allowed", robots: file, token: "LohiSoftBot", target: "/img/a.gif?x", allowed: true},
		{name: "other crawler publications allowed", robots: file, token: "LohiSoftBot", target: "/publications/a", allowed: true, line: 4},
		{name: "other crawler example disallowed", robots: file, token: "LohiSoftBot", target: "/example/", allowed: false, line: 3},
		{name: "robots.txt always allowed", robots: file, token: "foobot", target: "/robots.txt", allowed: true, why: "/robots.txt is always allowed"},
	})
	// RFC 9309 §5.2: the longest match wins.
	const longest = "User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n"
	runCases(t, []decideCase{
		{name: "longest allow", robots: longest, token: "foobot", target: "/example/page/", allowed: true, line: 2},
		{name: "longest disallow", robots: longest, token: "foobot", target: "/example/page/disallowed.gif", allowed: false, line: 3},
	})
}

func TestPrecedence(t *testing.T) {
	const ua = "User-agent: LohiSoftBot\n"
	runCases(t, []decideCase{
		{name: "longer disallow beats allow", robots: ua + "Allow: /p\nDisallow: /p/q\n", target: "/p/q/r", allowed: false, line: 3},
		{name: "longer allow beats disallow", robots: ua + "Disallow: /p\nAllow: /p/q\n", target: "/p/q/r", allowed: true, line: 3},
		{name: "allow wins a tie", robots: ua + "Disallow: /same\nAllow: /same\n", target: "/same", allowed: true, line: 3, rule: "Allow: /same"},
		{name: "allow wins a tie written first", robots: ua + "Allow: /same\nDisallow: /same\n", target: "/same", allowed: true, line: 2},
		{name: "tie between wildcard lengths", robots: ua + "Disallow: /*.php\nAllow: /a.php\n", target: "/a.php", allowed: true, line: 3},
		{name: "first of equal disallows reported", robots: ua + "Disallow: /ab\nDisallow: /a*\n", target: "/abc", allowed: false, line: 2},
		{name: "wildcard counts as one byte", robots: ua + "Allow: /page\nDisallow: /*.html\n", target: "/page.html", allowed: false, line: 3},
		{name: "shorter wildcard loses", robots: ua + "Allow: /page\nDisallow: /*.html\n", target: "/page", allowed: true, line: 2},
		{name: "dollar counts as one byte", robots: ua + "Allow: /$\nDisallow: /\n", target: "/", allowed: true, line: 2, rule: "Allow: /$"},
		{name: "dollar rule does not match longer path", robots: ua + "Allow: /$\nDisallow: /\n", target: "/page.html", allowed: false, line: 3},
		{name: "empty disallow matches nothing", robots: ua + "Disallow:\n", target: "/x", allowed: true, why: "no rule in the LohiSoftBot group matches"},
		{name: "empty allow matches nothing", robots: ua + "Allow:\nDisallow: /\n", target: "/x", allowed: false, line: 3},
		{name: "named group with only an empty disallow still hides star", robots: "User-agent: *\nDisallow: /\n" + ua + "Disallow:\n", target: "/x", allowed: true, why: "no rule in the LohiSoftBot group matches"},
		{name: "length counted after normalisation", robots: ua + "Disallow: /%7Ea\nAllow: /~a\n", target: "/~a", allowed: true, line: 3},
	})
}

func TestPatterns(t *testing.T) {
	const ua = "User-agent: LohiSoftBot\n"
	runCases(t, []decideCase{
		{name: "prefix match", robots: ua + "Disallow: /fish\n", target: "/fish.html", allowed: false, line: 2},
		{name: "prefix match is from the first byte", robots: ua + "Disallow: /fish\n", target: "/cat/fish", allowed: true},
		{name: "paths are case-sensitive", robots: ua + "Disallow: /fish\n", target: "/Fish", allowed: true},
		{name: "trailing slash matters", robots: ua + "Disallow: /fish/\n", target: "/fish", allowed: true},
		{name: "star matches any run", robots: ua + "Disallow: /fish*.php\n", target: "/fish/salmon.php", allowed: false, line: 2},
		{name: "star matches empty run", robots: ua + "Disallow: /fish*.php\n", target: "/fish.php", allowed: false, line: 2},
		{name: "star does not skip the prefix", robots: ua + "Disallow: /fish*.php\n", target: "/Fish.php", allowed: true},
		{name: "leading star", robots: ua + "Disallow: *.gif$\n", target: "/a/b.gif", allowed: false, line: 2},
		{name: "dollar anchors the end", robots: ua + "Disallow: /*.php$\n", target: "/a.php", allowed: false, line: 2},
		{name: "dollar rejects a longer path", robots: ua + "Disallow: /*.php$\n", target: "/a.php5", allowed: true},
		{name: "dollar rejects a query", robots: ua + "Disallow: /*.php$\n", target: "/a.php?x=1", allowed: true},
		{name: "dollar alone matches no path", robots: ua + "Disallow: $\n", target: "/", allowed: true},
		{name: "dollar in the middle is literal", robots: ua + "Disallow: /a$b\n", target: "/a$b/c", allowed: false, line: 2},
		{name: "dollar in the middle does not anchor", robots: ua + "Disallow: /a$b\n", target: "/a", allowed: true},
		{name: "star then dollar", robots: ua + "Disallow: /a*$\n", target: "/abc", allowed: false, line: 2},
		{name: "many stars", robots: ua + "Disallow: /*a*b*c\n", target: "/xaybzc", allowed: false, line: 2},
		{name: "many stars out of order", robots: ua + "Disallow: /*a*b*c\n", target: "/xcybza", allowed: true},
		{name: "anchored last piece after greedy middle", robots: ua + "Disallow: /*ab*ab$\n", target: "/xabab", allowed: false, line: 2},
		{name: "anchored last piece cannot overlap", robots: ua + "Disallow: /*aba*aba$\n", target: "/xaba", allowed: true},
		{name: "double star", robots: ua + "Disallow: /**x\n", target: "/ax", allowed: false, line: 2},
		{name: "query is part of the path", robots: ua + "Disallow: /search?q=\n", target: "/search?q=cats", allowed: false, line: 2},
		{name: "query pattern does not match bare path", robots: ua + "Disallow: /search?\n", target: "/search", allowed: true},
		{name: "any query", robots: ua + "Disallow: /*?\n", target: "/a/b?c", allowed: false, line: 2},
		{name: "fragment dropped", robots: ua + "Disallow: /a$\n", target: "/a#section", allowed: false, line: 2},
		{name: "absolute URL reduced to path", robots: ua + "Disallow: /private\n", target: "https://example.com/private/x?y#z", allowed: false, line: 2},
		{name: "absolute URL without path is slash", robots: ua + "Disallow: /$\n", target: "https://example.com", allowed: false, line: 2},
		{name: "absolute URL with query only", robots: ua + "Disallow: /?\n", target: "https://example.com?x=1", allowed: false, line: 2},
		{name: "empty target is slash", robots: ua + "Disallow: /$\n", target: "", allowed: false, line: 2},
		{name: "scheme-like text after a slash is a path", robots: ua + "Disallow: /go/http\n", target: "/go/http://x", allowed: false, line: 2},
		{name: "double slash target is a path", robots: ua + "Disallow: //admin\n", target: "//admin/x", allowed: false, line: 2},
		{name: "relative pattern matches nothing", robots: ua + "Disallow: fish\n", target: "/fish", allowed: true},
		{name: "comment after a rule", robots: ua + "Disallow: /a # not /a#b\n", target: "/a", allowed: false, line: 2, rule: "Disallow: /a"},
		{name: "hash ends the pattern", robots: ua + "Disallow: /a#b\n", target: "/ab", allowed: false, line: 2, rule: "Disallow: /a"},
		{name: "whitespace around value", robots: ua + "Disallow: \t /t \t\n", target: "/t", allowed: false, line: 2, rule: "Disallow: \t /t"},
	})
}

func TestRobotsTxtAlwaysAllowed(t *testing.T) {
	cases := []struct {
		name string
		r    *Robots
	}{
		{"parsed disallow all", Parse([]byte("User-agent: *\nDisallow: /\nDisallow: /robots.txt$\n"))},
		{"unreachable", DisallowAll("x answered 503")},
		{"nil", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, target := range []string{"/robots.txt", "https://example.com/robots.txt", "/robots%2Etxt"} {
				got := tc.r.Decide(testToken, target)
				if !got.Allowed || got.Line != 0 {
					t.Errorf("Decide(%q) = %+v, want allowed without a rule", target, got)
				}
			}
			if got := tc.r.Decide(testToken, "/robots.txt.bak"); tc.name != "nil" && got.Allowed {
				t.Errorf("/robots.txt.bak allowed: %+v", got)
			}
		})
	}
}

func TestDirectives(t *testing.T) {
	runCases(t, []decideCase{
		{name: "keys are case-insensitive", robots: "USER-AGENT: LohiSoftBot\nDISALLOW: /a\nallow: /a/b\n", target: "/a/b", allowed: true, line: 3},
		{name: "space before colon", robots: "User-agent : LohiSoftBot\nDisallow : /a\n", target: "/a", allowed: false, line: 2},
		{name: "no space after colon", robots: "User-agent:LohiSoftBot\nDisallow:/a\n", target: "/a", allowed: false, line: 2, rule: "Disallow:/a"},
		{name: "missing colon as Google reads it", robots: "User-agent LohiSoftBot\nDisallow /a\n", target: "/a", allowed: false, line: 2, rule: "Disallow /a"},
		{name: "missing colon with three words ignored", robots: "User-agent: LohiSoftBot\nDisallow /a /b\n", target: "/a", allowed: true},
		{name: "dissallow", robots: "User-agent: LohiSoftBot\nDissallow: /a\n", target: "/a", allowed: false, line: 2},
		{name: "dissalow", robots: "User-agent: LohiSoftBot\ndissalow: /a\n", target: "/a", allowed: false, line: 2},
		{name: "disalow", robots: "User-agent: LohiSoftBot\nDisalow: /a\n", target: "/a", allowed: false, line: 2},
		{name: "diasllow", robots: "User-agent: LohiSoftBot\nDiasllow: /a\n", target: "/a", allowed: false, line: 2},
		{name: "disallaw", robots: "User-agent: LohiSoftBot\nDisallaw: /a\n", target: "/a", allowed: false, line: 2},
		{name: "useragent", robots: "Useragent: LohiSoftBot\nDisallow: /a\n", target: "/a", allowed: false, line: 2},
		{name: "user agent", robots: "User agent: LohiSoftBot\nDisallow: /a\n", target: "/a", allowed: false, line: 2},
		{name: "other misspellings are unknown", robots: "User-agent: LohiSoftBot\nDisallowed: /a\nDis-allow: /a\n", target: "/a", allowed: true, why: "the LohiSoftBot group has no rules"},
		{name: "unknown key", robots: "User-agent: LohiSoftBot\nNoindex: /a\n", target: "/a", allowed: true},
	})
}

func TestLines(t *testing.T) {
	runCases(t, []decideCase{
		{name: "LF", robots: "User-agent: *\nAllow: /x\nDisallow: /\n", target: "/y", allowed: false, line: 3},
		{name: "CRLF", robots: "User-agent: *\r\nAllow: /x\r\nDisallow: /\r\n", target: "/y", allowed: false, line: 3, rule: "Disallow: /"},
		{name: "CR", robots: "User-agent: *\rAllow: /x\rDisallow: /\r", target: "/y", allowed: false, line: 3},
		{name: "mixed", robots: "User-agent: *\r\n\rAllow: /x\n\r\nDisallow: /\n", target: "/y", allowed: false, line: 5},
		{name: "LF CR is two line ends", robots: "User-agent: *\n\rDisallow: /\n", target: "/y", allowed: false, line: 3},
		{name: "no final newline", robots: "User-agent: *\nDisallow: /", target: "/y", allowed: false, line: 2},
		{name: "BOM skipped", robots: "\xef\xbb\xbfUser-agent: LohiSoftBot\nDisallow: /\n", target: "/y", allowed: false, line: 2},
		{name: "BOM only at start", robots: "User-agent: LohiSoftBot\n\xef\xbb\xbfDisallow: /\n", target: "/y", allowed: true},
		{name: "NUL in a line", robots: "User-agent: LohiSoftBot\nDisallow: /a\x00b\n", target: "/a%00b", allowed: false, line: 2},
	})
}

func TestPercentEncoding(t *testing.T) {
	const ua = "User-agent: LohiSoftBot\n"
	runCases(t, []decideCase{
		// RFC 9309 §2.2.2's table, each way round.
		{name: "UTF-8 rule, encoded path", robots: ua + "Disallow: /foo/bar/ツ\n", target: "/foo/bar/%E3%83%84", allowed: false, line: 2},
		{name: "UTF-8 rule, raw path", robots: ua + "Disallow: /foo/bar/ツ\n", target: "/foo/bar/ツ", allowed: false, line: 2},
		{name: "encoded rule, raw path", robots: ua + "Disallow: /foo/bar/%E3%83%84\n", target: "/foo/bar/ツ", allowed: false, line: 2},
		{name: "lower-case hex", robots: ua + "Disallow: /foo/bar/%e3%83%84\n", target: "/foo/bar/%E3%83%84", allowed: false, line: 2},
		{name: "lower-case hex in path", robots: ua + "Disallow: /foo/bar/%E3%83%84\n", target: "/foo/bar/%e3%83%84", allowed: false, line: 2},
		{name: "unreserved escapes decoded in path", robots: ua + "Disallow: /foo/bar/baz\n", target: "/foo/bar/%62%61%7A", allowed: false, line: 2},
		{name: "unreserved escapes decoded in rule", robots: ua + "Disallow: /foo/bar/%62%61%7A\n", target: "/foo/bar/baz", allowed: false, line: 2},
		{name: "tilde", robots: ua + "Disallow: /~user/\n", target: "/%7euser/notes", allowed: false, line: 2},
		{name: "query with URL, raw rule", robots: ua + "Disallow: /foo/bar?baz=https://foo.bar\n", target: "/foo/bar?baz=https%3A%2F%2Ffoo.bar", allowed: false, line: 2},
		{name: "query with URL, encoded rule", robots: ua + "Disallow: /foo/bar?baz=https%3A%2F%2Ffoo.bar\n", target: "/foo/bar?baz=https://foo.bar", allowed: false, line: 2},
		{name: "query at-sign", robots: ua + "Disallow: /m?to=a@b\n", target: "/m?to=a%40b", allowed: false, line: 2},
		// Reserved characters keep their meaning.
		{name: "encoded slash is not a slash", robots: ua + "Disallow: /a/\n", target: "/a%2Fb", allowed: true},
		{name: "slash is not an encoded slash", robots: ua + "Disallow: /a%2F\n", target: "/a/b", allowed: true},
		{name: "encoded slash matches itself", robots: ua + "Disallow: /a%2fb\n", target: "/a%2Fb", allowed: false, line: 2},
		{name: "encoded colon in path stays distinct", robots: ua + "Disallow: /a:b\n", target: "/a%3Ab", allowed: true},
		{name: "encoded question mark in path is not a query", robots: ua + "Disallow: /a?\n", target: "/a%3F", allowed: true},
		{name: "encoded star is literal", robots: ua + "Disallow: /file-%2A.html\n", target: "/file-%2a.html", allowed: false, line: 2},
		{name: "encoded star is no wildcard", robots: ua + "Disallow: /a%2Ac\n", target: "/abc", allowed: true},
		{name: "encoded dollar is literal", robots: ua + "Disallow: /foo-%24\n", target: "/foo-%24/x", allowed: false, line: 2},
		{name: "equals sign kept distinct", robots: ua + "Disallow: /q?a=b\n", target: "/q?a%3Db", allowed: true},
		{name: "space in rule and path", robots: ua + "Disallow: /a b\n", target: "/a%20b", allowed: false, line: 2},
		{name: "stray percent", robots: ua + "Disallow: /100%\n", target: "/100%25", allowed: false, line: 2},
		{name: "stray percent both sides", robots: ua + "Disallow: /100%zz\n", target: "/100%zz", allowed: false, line: 2},
		{name: "brackets", robots: ua + "Disallow: /a?x[]=1\n", target: "/a?x%5B%5D=1", allowed: false, line: 2},
		{name: "latin-1 byte", robots: ua + "Disallow: /caf\xe9\n", target: "/caf%E9", allowed: false, line: 2},
		{name: "robots.txt with encoded dot", robots: ua + "Disallow: /\n", target: "/robots%2etxt", allowed: true, why: "/robots.txt is always allowed"},
	})
}

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/foo/bar?baz=quz", "/foo/bar?baz=quz"},
		{"/foo/bar?baz=https://foo.bar", "/foo/bar?baz=https://foo.bar"},
		{"/foo/bar?baz=https%3A%2F%2Ffoo.bar", "/foo/bar?baz=https://foo.bar"},
		{"/foo/bar/ツ", "/foo/bar/%E3%83%84"},
		{"/foo/bar/%e3%83%84", "/foo/bar/%E3%83%84"},
		{"/foo/bar/%62%61%7A", "/foo/bar/baz"},
		{"/a%2fb", "/a%2Fb"},
		{"/a%3F?b%3F", "/a%3F?b?"},
		{"/%", "/%25"},
		{"/%4", "/%254"},
		{"/%%41", "/%25A"},
		{"/a b", "/a%20b"},
		{"/*$", "/*$"},
		{"/\x00\x7f", "/%00%7F"},
	}
	for _, tc := range tests {
		got := normalize(tc.in)
		if got != tc.want {
			t.Errorf("normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if again := normalize(got); again != got {
			t.Errorf("normalize is not idempotent on %q: %q then %q", tc.in, got, again)
		}
	}
}

func TestFixed(t *testing.T) {
	allow := AllowAll("https://x/robots.txt answered 404: allow all")
	got := allow.Decide(testToken, "/private")
	want := Decision{Allowed: true, Why: "https://x/robots.txt answered 404: allow all"}
	if got != want {
		t.Errorf("allow all: got %+v, want %+v", got, want)
	}
	deny := DisallowAll("https://x/robots.txt answered 503: disallow all")
	got = deny.Decide(testToken, "/")
	want = Decision{Allowed: false, Why: "https://x/robots.txt answered 503: disallow all"}
	if got != want {
		t.Errorf("disallow all: got %+v, want %+v", got, want)
	}
	var zero Robots
	if got := zero.Decide(testToken, "/x"); !got.Allowed || got.Why == "" {
		t.Errorf("zero Robots: got %+v, want allowed with a reason", got)
	}
	var nilRobots *Robots
	if got := nilRobots.Decide(testToken, "/x"); !got.Allowed || got.Why != "no robots.txt" {
		t.Errorf("nil Robots: got %+v, want allowed, no robots.txt", got)
	}
	if w := nilRobots.Warnings(); w != nil {
		t.Errorf("nil Robots warnings: %q", w)
	}
}

func TestWarnings(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "robots", "lenient.txt"))
	if err != nil {
		t.Fatal(err)
	}
	r := Parse(data)
	want := []string{
		`line 1: "Disallow: /before-any-group" comes before any user-agent line and is ignored (RFC 9309 §2.2.2)`,
		`line 2: "useragent" is a misspelling of user-agent; read as user-agent as Google does, but a strict RFC 9309 parser ignores it`,
		`line 3: "Dissallow" is a misspelling of disallow; read as disallow as Google does, but a strict RFC 9309 parser ignores it`,
		`line 4: "DISALOW" is a misspelling of disallow; read as disallow as Google does, but a strict RFC 9309 parser ignores it`,
		`line 5: "disallow /no-colon" has no colon; read as "disallow: /no-colon" as Google does, but a strict RFC 9309 parser ignores it`,
		`line 6: "Disallow: relative/path" does not start with '/' or '*', so it matches no path`,
		`line 7: user-agent "1.0" names no product token (letters, '-' and '_'), so it applies to no crawler`,
	}
	got := r.Warnings()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Warnings() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, c := range []struct {
		target  string
		allowed bool
		line    int
	}{
		{"/before-any-group", true, 0}, {"/typo-one", false, 3}, {"/typo-two", false, 4},
		{"/no-colon", false, 5}, {"/never", true, 0},
	} {
		if d := r.Decide(testToken, c.target); d.Allowed != c.allowed || d.Line != c.line {
			t.Errorf("Decide(%q) = %+v, want allowed %v line %d", c.target, d, c.allowed, c.line)
		}
	}

	if w := Parse([]byte("User-agent: *\nDisallow: /\n")).Warnings(); w != nil {
		t.Errorf("clean file has warnings: %q", w)
	}

	// Warnings are bounded however many bad lines there are.
	many := "User-agent: *\n" + strings.Repeat("Dissallow: /x\n", 1000)
	w := Parse([]byte(many)).Warnings()
	if len(w) != maxWarnings+1 || w[len(w)-1] != "980 more warnings not shown" {
		t.Errorf("got %d warnings ending %q, want %d ending with the count of the rest", len(w), w[len(w)-1], maxWarnings+1)
	}
}

func TestSizeLimit(t *testing.T) {
	head := "User-agent: LohiSoftBot\nDisallow: /early\n"
	filler := strings.Repeat("# filler line to pass the parsing limit\n", MaxBytes/20)
	tests := []struct {
		name      string
		data      string
		target    string
		allowed   bool
		line      int
		truncated bool
	}{
		{name: "rule before the limit applies", data: head + filler + "Disallow: /late\n", target: "/early", allowed: false, line: 2, truncated: true},
		{name: "rule after the limit is not read", data: head + filler + "Disallow: /late\n", target: "/late", allowed: true, truncated: true},
		{name: "line cut by the limit is dropped", data: head + strings.Repeat("#", MaxBytes-len(head)-len("Disallow: /privat")) + "\nDisallow: /private-area\n", target: "/privat", allowed: true, truncated: true},
		{name: "file of exactly the limit is whole", data: head + strings.Repeat("#", MaxBytes-len(head)-len("\nDisallow: /last")) + "\nDisallow: /last", target: "/last", allowed: false, line: 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Parse([]byte(tc.data))
			d := r.Decide(testToken, tc.target)
			if d.Allowed != tc.allowed || d.Line != tc.line {
				t.Errorf("Decide(%q) = %+v, want allowed %v line %d", tc.target, d, tc.allowed, tc.line)
			}
			w := r.Warnings()
			gotTrunc := len(w) > 0 && strings.HasPrefix(w[0], "robots.txt is larger than 500 KiB")
			if gotTrunc != tc.truncated {
				t.Errorf("truncation warning %v, want %v (warnings %q)", gotTrunc, tc.truncated, w)
			}
		})
	}
}

// matchDP is a plain dynamic-programming matcher, the reference for
// match: pos holds every path offset the pattern so far can reach.
func matchDP(pat string, anchored bool, path string) bool {
	reach := make([]bool, len(path)+1)
	reach[0] = true
	for i := 0; i < len(pat); i++ {
		next := make([]bool, len(path)+1)
		if pat[i] == '*' {
			on := false
			for j := range reach {
				on = on || reach[j]
				next[j] = on
			}
		} else {
			for j := 0; j < len(path); j++ {
				if reach[j] && path[j] == pat[i] {
					next[j+1] = true
				}
			}
		}
		reach = next
	}
	if anchored {
		return reach[len(path)]
	}
	for _, ok := range reach {
		if ok {
			return true
		}
	}
	return false
}

func TestMatchAgainstDP(t *testing.T) {
	pats := []string{"/", "/a", "/*", "*", "**", "/a*", "/*a", "/*a*", "/a*b", "/*ab*ab", "/*aba*aba", "/a**b*", "*b*", "/*a*a*a", "/ab*ba*ab"}
	paths := []string{"/", "/a", "/ab", "/ba", "/aba", "/abab", "/xabab", "/ababa", "/aaa", "/abba", "/abbaab", "/b", "/ab/ba/ab", "/aab"}
	for _, p := range pats {
		for _, anchored := range []bool{false, true} {
			for _, path := range paths {
				got := match(p, anchored, path)
				want := matchDP(p, anchored, path)
				if got != want {
					t.Errorf("match(%q, anchored %v, %q) = %v, want %v", p, anchored, path, got, want)
				}
			}
		}
	}
}

// TestHostileTime checks that matching time stays bounded on a
// file built to make a backtracking matcher take exponential time.
func TestHostileTime(t *testing.T) {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for b.Len() < MaxBytes-4096 {
		b.WriteString("Disallow: /")
		b.WriteString(strings.Repeat("*a", 200))
		b.WriteString("*b\n")
	}
	r := Parse([]byte(b.String()))
	path := "/" + strings.Repeat("a", 64<<10)
	start := time.Now()
	d := r.Decide(testToken, path)
	elapsed := time.Since(start)
	if !d.Allowed {
		t.Errorf("Decide = %+v, want allowed (no 'b' in the path)", d)
	}
	t.Logf("%d bytes of wildcard rules against a %d-byte path: %v", b.Len(), len(path), elapsed)
	if elapsed > 5*time.Second {
		t.Errorf("Decide took %v on a hostile file, want well under 5s", elapsed)
	}

	// One huge rule of many wildcards.
	huge := "User-agent: *\nDisallow: /" + strings.Repeat("*a", (MaxBytes-64)/2) + "*b\n"
	r = Parse([]byte(huge))
	start = time.Now()
	d = r.Decide(testToken, path)
	elapsed = time.Since(start)
	if !d.Allowed {
		t.Errorf("Decide = %+v, want allowed", d)
	}
	t.Logf("one %d-byte wildcard rule against a %d-byte path: %v", len(huge), len(path), elapsed)
	if elapsed > 5*time.Second {
		t.Errorf("Decide took %v on one huge rule, want well under 5s", elapsed)
	}

	// Long pieces that almost match everywhere.
	b.Reset()
	b.WriteString("User-agent: *\n")
	for b.Len() < MaxBytes-4096 {
		b.WriteString("Disallow: /*")
		b.WriteString(strings.Repeat("a", 1000))
		b.WriteString("b\n")
	}
	r = Parse([]byte(b.String()))
	start = time.Now()
	d = r.Decide(testToken, path)
	elapsed = time.Since(start)
	if !d.Allowed {
		t.Errorf("Decide = %+v, want allowed", d)
	}
	t.Logf("%d bytes of long near-miss rules against a %d-byte path: %v", b.Len(), len(path), elapsed)
	if elapsed > 5*time.Second {
		t.Errorf("Decide took %v on near-miss rules, want well under 5s", elapsed)
	}
}

func TestTestdataParses(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "robots", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("found %d robots.txt fixtures, want at least 5", len(files))
	}
	tests := []struct {
		file    string
		token   string
		target  string
		allowed bool
		line    int
	}{
		{"lohisoftbot-blocked.txt", "LohiSoftBot/1.0", "/", false, 3},
		{"lohisoftbot-blocked.txt", "Googlebot", "/admin/help/x", true, 7},
		{"lohisoftbot-partial.txt", "LohiSoftBot", "/private/x", false, 5},
		{"lohisoftbot-partial.txt", "LohiSoftBot", "/private/press/x", true, 6},
		{"lohisoftbot-partial.txt", "LohiSoftBot", "/files/a.pdf", false, 7},
		{"lohisoftbot-partial.txt", "LohiSoftBot", "/search?q=x", false, 8},
		{"lohisoftbot-partial.txt", "LohiSoftBot", "/drafts/x", false, 15},
		{"lohisoftbot-partial.txt", "LohiSoftBot", "/drafts/public", true, 16},
		{"lohisoftbot-partial.txt", "LohiSoftBot", "/", true, 0},
		{"lohisoftbot-partial.txt", "Bingbot", "/", false, 12},
		{"bom-crlf.txt", "LohiSoftBot", "/bom", false, 2},
		{"cr-lf-mixed.txt", "LohiSoftBot", "/cr-only/x", false, 2},
		{"cr-lf-mixed.txt", "LohiSoftBot", "/cr-only/ok", true, 3},
		{"cr-lf-mixed.txt", "LohiSoftBot", "/after-blank", false, 5},
		{"encoding.txt", "LohiSoftBot", "/foo/bar/%e3%83%84", false, 2},
		{"encoding.txt", "LohiSoftBot", "/~user/x", false, 3},
		{"encoding.txt", "LohiSoftBot", "/foo/bar?baz=https%3a%2f%2ffoo.bar", false, 5},
		{"encoding.txt", "LohiSoftBot", "/space%20here", false, 6},
		{"junk.txt", "LohiSoftBot", "/", true, 0},
	}
	for _, tc := range tests {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "robots", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		d := Parse(data).Decide(tc.token, tc.target)
		if d.Allowed != tc.allowed || d.Line != tc.line {
			t.Errorf("%s: Decide(%q, %q) = %+v, want allowed %v line %d", tc.file, tc.token, tc.target, d, tc.allowed, tc.line)
		}
	}
}
