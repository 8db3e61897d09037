package cmd

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

func TestPrintError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"one line", errors.New("cannot read x"), "lohibot-audit: error: cannot read x\n"},
		{"hint", withHint(errors.New("cannot read x"), "check it"), "lohibot-audit: error: cannot read x\nlohibot-audit: hint: check it\n"},
		{"more lines and a hint", withHint(errors.New("bad\nsecond line"), "check it"), "lohibot-audit: error: bad\nlohibot-audit: hint: second line; check it\n"},
		{"control characters escaped", errors.New("bad \x1b[2J\rname\nnext\x07"), "lohibot-audit: error: bad \\x1b[2J\\x0dname\nlohibot-audit: hint: next\\x07\n"},
	}
	for _, tc := range tests {
		var errb bytes.Buffer
		printError(&Env{Stderr: &errb}, tc.err)
		if errb.String() != tc.want {
			t.Errorf("%s: printed %q, want %q", tc.name, errb.String(), tc.want)
		}
	}
}

// TestCobraErrors checks cobra's own errors as the user sees them: one
// error line and one hint line, with no escaped newline.
func TestCobraErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"bogus"}, "lohibot-audit: error: unknown command \"bogus\" for \"lohibot-audit\"\nlohibot-audit: hint: did you mean logs?\n"},
		{[]string{"rbots"}, "lohibot-audit: error: unknown command \"rbots\" for \"lohibot-audit\"\nlohibot-audit: hint: did you mean robots?\n"},
		{[]string{"logs", "--bogus"}, "lohibot-audit: error: unknown flag: --bogus\nlohibot-audit: hint: see 'lohibot-audit logs --help'\n"},
		{[]string{"emit", "nftables", "--ttl"}, "lohibot-audit: error: flag needs an argument: --ttl\nlohibot-audit: hint: see 'lohibot-audit emit --help'\n"},
		{[]string{"robots", "extra"}, "lohibot-audit: error: unknown command \"extra\" for \"lohibot-audit robots\"\n"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		code := Run(context.Background(), &Env{Stdout: &out, Stderr: &errb}, tc.args)
		if code != fail.ExitUsage || out.Len() != 0 || errb.String() != tc.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2, nothing and %q", tc.args, code, out.String(), errb.String(), tc.want)
		}
	}
}
