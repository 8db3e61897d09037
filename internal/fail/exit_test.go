package fail

import (
	"errors"
	"fmt"
	"testing"
)

func TestExit(t *testing.T) {
	plain := errors.New("unknown flag: --bogus")
	tests := []struct {
		name string
		err  error
		code int
		say  bool
	}{
		{"findings", New(Findings, errors.New("findings"), ""), ExitFindings, false},
		{"findings with a code of the user's", &Error{Kind: Findings, Err: errors.New("changed"), Code: 9}, 9, false},
		{"an input not read whole", New(Incomplete, errors.New("cannot read x"), ""), ExitIncomplete, true},
		{"output not written", fmt.Errorf("logs: %w", New(Unwritten, errors.New("disk full"), "")), ExitIncomplete, true},
		{"usage", Usagef("--top: bad"), ExitUsage, true},
		{"a hint only", New(Other, plain, "see --help"), ExitUsage, true},
		{"cobra's own", plain, ExitUsage, true},
	}
	for _, tc := range tests {
		if code, say := Exit(tc.err); code != tc.code || say != tc.say {
			t.Errorf("%s: Exit = %d, %v; want %d, %v", tc.name, code, say, tc.code, tc.say)
		}
	}
}
