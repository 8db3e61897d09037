// Package urlarg tells a URL from a file name in a value given for
// --ip-list, --robots and the like: a value with a scheme ("x://") is a
// URL, anything else is a file. A URL whose scheme the value cannot use is
// an error that says which schemes work, rather than a file name.
package urlarg

import (
	"fmt"
	"strings"
)

// Scheme returns the scheme of v in lower case when v is a URL: a letter,
// then letters, digits, "+", "-" or "." (RFC 3986 §3.1), then "://". It
// returns "" for a value without one, which names a file ("/srv/http://x",
// "./a://b" and "site=https://x" name no scheme).
func Scheme(v string) string {
	i := strings.Index(v, "://")
	if i <= 0 {
		return ""
	}
	for j := range i {
		c := v[j]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case j > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return ""
		}
	}
	return strings.ToLower(v[:i])
}

// IsURL reports whether v is a URL (has a scheme) rather than a file name.
func IsURL(v string) bool { return Scheme(v) != "" }

// Check returns nil for a file name or a URL with one of schemes (lower
// case, without "://"), and a *SchemeError for a URL with another.
func Check(v string, schemes ...string) error {
	s := Scheme(v)
	if s == "" {
		return nil
	}
	for _, ok := range schemes {
		if s == ok {
			return nil
		}
	}
	return &SchemeError{Scheme: s, Schemes: schemes}
}

// SchemeError is a URL whose scheme does not work where it was given.
type SchemeError struct {
	// Scheme is the URL's scheme, lower case.
	Scheme string
	// Schemes are those that work.
	Schemes []string
}

func (e *SchemeError) Error() string {
	return fmt.Sprintf("%s:// is not a scheme this can fetch: use %s, or a file", e.Scheme, e.Want())
}

// Want names the schemes that work: "https://", "http:// or https://".
func (e *SchemeError) Want() string {
	var b strings.Builder
	for i, s := range e.Schemes {
		switch {
		case i == 0:
		case i == len(e.Schemes)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(s + "://")
	}
	return b.String()
}
