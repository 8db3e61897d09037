package fail

import (
	"errors"
	"fmt"
	"testing"
)

func TestKindAndHintThroughWrapping(t *testing.T) {
	base := errors.New("bad value")
	for _, tc := range []struct {
		name string
		err  error
		kind Kind
		hint string
	}{
		{"plain", base, Other, ""},
		{"usage", Usagef("--x %d: no", 3), Usage, ""},
		{"hinted", Hinted(base, "do this"), Usage, "do this"},
		{"wrapped", fmt.Errorf("reading: %w", New(Incomplete, base, "try again")), Incomplete, "try again"},
		// A hint added around a kind keeps the inner kind, and the outer
		// hint is the one said.
		{"hint around kind", New(Other, New(Usage, base, "inner"), "outer"), Usage, "outer"},
		{"kind around hint", New(Incomplete, New(Other, base, "inner"), ""), Incomplete, "inner"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := KindOf(tc.err); got != tc.kind {
				t.Errorf("KindOf = %d, want %d", got, tc.kind)
			}
			if got := HintOf(tc.err); got != tc.hint {
				t.Errorf("HintOf = %q, want %q", got, tc.hint)
			}
		})
	}
	if msg := Hinted(base, "h").Error(); msg != "bad value" {
		t.Errorf("message %q: the hint is not part of it", msg)
	}
	if !errors.Is(Hinted(base, "h"), base) {
		t.Error("a marked error does not unwrap to its cause")
	}
}
