package crawler

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// One resolves a single --crawler value (robots, optout): the name of a
// built-in profile, else a profile file. A file that does not validate,
// or a value that is neither, is a usage error with a hint.
func One(v string) (*Profile, error) {
	if p, ok := Builtin(v); ok {
		return p, nil
	}
	p, err := LoadFile(v)
	if errors.Is(err, ErrInvalid) {
		return nil, fail.Hinted(err, "fix that line of the profile, or use a built-in profile: "+strings.Join(BuiltinNames(), ", "))
	}
	if err != nil {
		return nil, fail.Hinted(fmt.Errorf("unknown crawler %q: not a built-in profile, and %v", v, fail.PathCause(err)),
			"use "+strings.Join(BuiltinNames(), ", ")+", or the path of a profile file")
	}
	return p, nil
}

// UserAgentToken is the robots.txt token a --user-agent value asks for:
// "*" for the * group, else its product token (a version such as /1.0 is
// cut). A value without one is a usage error.
func UserAgentToken(userAgent string) (string, error) {
	if strings.TrimSpace(userAgent) == "*" {
		return "*", nil
	}
	tok := ProductToken(userAgent)
	if tok == "" {
		return "", fail.Usagef("--user-agent %q has no product token: give a name of letters, '-' and '_' such as %s, or *", userAgent, DefaultTitle())
	}
	return tok, nil
}

// RobotsToken is the token robots.txt is read for: the --user-agent value
// (UserAgentToken) when one is given, else the robots.txt token of the
// --crawler profile name (One).
func RobotsToken(name string, userAgentGiven bool, userAgent string) (string, error) {
	if userAgentGiven {
		return UserAgentToken(userAgent)
	}
	p, err := One(name)
	if err != nil {
		return "", err
	}
	return p.RobotsToken, nil
}
