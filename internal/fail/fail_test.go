package fail

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
		{"unwritten", fmt.Errorf("emit: %w", New(Unwritten, base, "check the disk")), Unwritten, "check the disk"},
		{"findings", New(Findings, base, ""), Findings, ""},
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

// TestCodeOf checks that the exit code a user chose is found through
// wrapping and under a hint, and that no code is 0.
func TestCodeOf(t *testing.T) {
	base := errors.New("the rules changed")
	chosen := &Error{Kind: Findings, Err: base, Code: 7}
	for _, tc := range []struct {
		name string
		err  error
		code int
	}{
		{"none", New(Findings, base, ""), 0},
		{"plain", base, 0},
		{"chosen", chosen, 7},
		{"wrapped", fmt.Errorf("emit: %w", chosen), 7},
		{"under a hint", New(Other, chosen, "see the file"), 7},
	} {
		if got := CodeOf(tc.err); got != tc.code {
			t.Errorf("%s: CodeOf = %d, want %d", tc.name, got, tc.code)
		}
	}
	if KindOf(New(Other, chosen, "h")) != Findings {
		t.Error("a hint around a chosen code hides its kind")
	}
}

func TestPathCause(t *testing.T) {
	_, err := os.Open(filepath.Join(t.TempDir(), "missing"))
	if err == nil {
		t.Fatal("opening a missing file succeeded")
	}
	if got := PathCause(err); !errors.Is(got, fs.ErrNotExist) || got.Error() != "no such file or directory" {
		t.Errorf("PathCause(%v) = %v, want the cause without the path", err, got)
	}
	if got := PathCause(fmt.Errorf("reading: %w", err)); got.Error() != "no such file or directory" {
		t.Errorf("wrapped: %v, want the cause without the path", got)
	}
	other := errors.New("not a path error")
	if got := PathCause(other); got != other {
		t.Errorf("PathCause(%v) = %v, want it unchanged", other, got)
	}
	if PathCause(nil) != nil {
		t.Error("PathCause(nil) is not nil")
	}
}
