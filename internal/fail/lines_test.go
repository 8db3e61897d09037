package fail

import (
	"errors"
	"testing"
)

func TestLines(t *testing.T) {
	tests := []struct {
		err       error
		msg, hint string
	}{
		{errors.New("cannot read x"), "cannot read x", ""},
		{errors.New("unknown command \"bogus\" for \"lohibot-audit\"\n\nDid you mean this?\n\tlogs\n"), `unknown command "bogus" for "lohibot-audit"`, "did you mean logs?"},
		{errors.New("unknown command \"x\" for \"a\"\n\nDid you mean this?\n\tlogs\n\tips\n"), `unknown command "x" for "a"`, "did you mean logs or ips?"},
		{errors.New("line one\n  line two \n\nline three"), "line one", "line two; line three"},
		{errors.New("trailing\n"), "trailing", ""},
		{Hinted(errors.New("cannot read x"), "check it"), "cannot read x", "check it"},
		{New(Other, errors.New("bad\nsecond line"), "check it"), "bad", "second line; check it"},
	}
	for _, tc := range tests {
		msg, hint := Lines(tc.err)
		if msg != tc.msg || hint != tc.hint {
			t.Errorf("Lines(%q) = %q, %q; want %q, %q", tc.err, msg, hint, tc.msg, tc.hint)
		}
	}
}
