package robots

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Reason is the deciding line and rule ("line 3: Disallow: /private/"),
// or why no rule decided.
func (d Decision) Reason() string {
	if d.Line > 0 {
		return "line " + strconv.Itoa(d.Line) + ": " + d.Rule
	}
	return d.Why
}

// Explain says what d, the decision of rs for token on path, is and what
// made it: "ExampleBot is blocked from /private/ by robots.txt line 3:
// Disallow: /private/".
func (rs *Source) Explain(token, path string, d Decision) string {
	verdict := "blocked from"
	if d.Allowed {
		verdict = "allowed"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s is %s %s", token, verdict, path)
	switch {
	case d.Line > 0:
		fmt.Fprintf(&b, " by %s line %d: %s", rs.Name, d.Line, d.Rule)
	case rs.Note != "" && d.Why == rs.Note:
		// The note names the source and the rule of RFC 9309 that applied.
		fmt.Fprintf(&b, ": %s", d.Why)
	default:
		fmt.Fprintf(&b, " in %s: %s", rs.Name, d.Why)
	}
	return b.String()
}

// ForeignOrigin returns the origin of the robots.txt URL robotsURL
// ("https://example.com") when target is a URL of another origin, which
// that robots.txt does not speak for (RFC 9309 §2.3: its own scheme, host
// and port), and "" otherwise: when it is of the same origin, or either is
// not an absolute URL (a file, a path).
func ForeignOrigin(robotsURL, target string) string {
	a, err1 := url.Parse(robotsURL)
	b, err2 := url.Parse(target)
	if err1 != nil || err2 != nil || !absolute(a) || !absolute(b) {
		return ""
	}
	if !strings.EqualFold(a.Scheme, b.Scheme) || !strings.EqualFold(a.Host, b.Host) {
		return a.Scheme + "://" + a.Host
	}
	return ""
}

func absolute(u *url.URL) bool { return u.Scheme != "" && u.Host != "" }

// OtherHostWarning is the warning for a target of another origin than
// the robots.txt URL robotsURL (ForeignOrigin), or "" for none.
func OtherHostWarning(robotsURL, target string) string {
	if origin := ForeignOrigin(robotsURL, target); origin != "" {
		return fmt.Sprintf("%s is not on %s: that robots.txt does not apply to it (RFC 9309 §2.3)", target, origin)
	}
	return ""
}

// OtherHostWarnings are the warnings for the targets of another origin
// than the robots.txt URL of rs (OtherHostWarning), in order.
func (rs *Source) OtherHostWarnings(targets []string) []string {
	var out []string
	for _, target := range targets {
		if w := OtherHostWarning(rs.Name, target); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// LineOf returns the line a parser warning is about ("line 3: ..."), or
// 0 when it names none.
func LineOf(warning string) int {
	rest, ok := strings.CutPrefix(warning, "line ")
	if !ok {
		return 0
	}
	i := strings.IndexByte(rest, ':')
	if i <= 0 {
		return 0
	}
	n, err := strconv.Atoi(rest[:i])
	if err != nil {
		return 0
	}
	return n
}
