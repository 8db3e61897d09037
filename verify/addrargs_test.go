package verify

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

func TestAddrArgs(t *testing.T) {
	stdin := func(in string) func() ([]string, error) {
		return func() ([]string, error) { return ReadAddrList(strings.NewReader(in)) }
	}
	ctx := context.Background()
	got, err := AddrArgs(ctx, []string{"203.0.113.7", "-", "::ffff:192.0.2.1"}, stdin("2001:db8::1\n# c\n203.0.113.7\n"))
	want := []netip.Addr{netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("2001:db8::1")}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	if _, err := AddrArgs(ctx, []string{"-"}, stdin("# nothing\n\n")); !errors.Is(err, ErrNoAddrs) {
		t.Errorf("empty stdin: %v, want ErrNoAddrs", err)
	}
	var se *StdinError
	var bad *AddrListError
	if _, err := AddrArgs(ctx, []string{"-"}, stdin("localhost\n")); !errors.As(err, &se) || !errors.As(err, &bad) {
		t.Errorf("a bad line: %v, want a StdinError of an AddrListError", err)
	}
	var na *NotAddrError
	if _, err := AddrArgs(ctx, []string{"example.com"}, nil); !errors.As(err, &na) {
		t.Errorf("a name: %v, want a NotAddrError", err)
	}
	// A pipe that never ends does not hold up a cancelled run.
	never := make(chan struct{})
	defer close(never)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := AddrArgs(cctx, []string{"-"}, func() ([]string, error) { <-never; return nil, nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestReadAddrArgs: the command line's errors, each of its kind and
// worded for the user.
func TestReadAddrArgs(t *testing.T) {
	ctx := context.Background()
	got, err := ReadAddrArgs(ctx, []string{"-", "203.0.113.7"}, strings.NewReader("2001:db8::1\n"))
	if err != nil || len(got) != 2 {
		t.Errorf("got %v, %v; want the two addresses", got, err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		stdin io.Reader
		kind  fail.Kind
		msg   string
		hint  string
	}{
		{"bad line", []string{"-"}, strings.NewReader("localhost\n"), fail.Usage,
			`stdin: not an IP address on line 1: "localhost"`, "give one IPv4 or IPv6 address a line, without port or zone; # starts a comment"},
		{"unreadable", []string{"-"}, iotest.ErrReader(errors.New("broken pipe")), fail.Incomplete,
			"cannot read addresses from stdin: broken pipe", ""},
		{"empty", []string{"-"}, strings.NewReader("# none\n"), fail.Usage,
			"no addresses on stdin: give one IP address a line", ""},
		{"a name", []string{"example.com"}, nil, fail.Usage,
			"", "give IPv4 or IPv6 addresses without port or zone, such as 79.139.58.98 or 2001:db8::1"},
	} {
		_, err := ReadAddrArgs(ctx, tc.args, tc.stdin)
		if fail.KindOf(err) != tc.kind || (tc.msg != "" && err.Error() != tc.msg) || fail.HintOf(err) != tc.hint {
			t.Errorf("%s: %v (kind %v, hint %q), want kind %v, %q, hint %q", tc.name, err, fail.KindOf(err), fail.HintOf(err), tc.kind, tc.msg, tc.hint)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ReadAddrArgs(cctx, []string{"-"}, strings.NewReader("")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want ctx's error", err)
	}
}

// FuzzAddrArgs: any argument and any standard input give either sorted,
// distinct, unmapped addresses without a zone, or an error that says what
// was wrong (a line of stdin, the argument, or no address at all); never a
// panic.
func FuzzAddrArgs(f *testing.F) {
	f.Add("203.0.113.7", "79.139.58.98\n# comment\n\n2001:db8::1 # x\n")
	f.Add("::ffff:192.0.2.1", "localhost\n10.0.0.1:80\n\x00\xff\n")
	f.Add("fe80::1%eth0", strings.Repeat("1.2.3.4\n", 100))
	f.Add("-", "")
	f.Fuzz(func(t *testing.T, arg, in string) {
		addrs, err := AddrArgs(context.Background(), []string{arg, "-"}, func() ([]string, error) {
			return ReadAddrList(strings.NewReader(in))
		})
		var se *StdinError
		var bad *AddrListError
		var na *NotAddrError
		switch {
		case err == nil:
		case errors.Is(err, ErrNoAddrs):
			if arg != "-" {
				t.Fatalf("no addresses, with the argument %q", arg)
			}
			return
		case errors.As(err, &se):
			if !errors.As(err, &bad) || !strings.Contains(err.Error(), "line ") {
				t.Fatalf("stdin error without its line: %v", err)
			}
			return
		case errors.As(err, &na):
			if na.Value != arg {
				t.Fatalf("error names %q, not the argument %q", na.Value, arg)
			}
			return
		default:
			t.Fatalf("error of no known kind: %v", err)
		}
		if len(addrs) == 0 {
			t.Fatal("no addresses and no error")
		}
		for i, a := range addrs {
			if !a.IsValid() || a.Zone() != "" || a.Is4In6() {
				t.Fatalf("%v passed as an address", a)
			}
			if i > 0 && addrs[i-1].Compare(a) >= 0 {
				t.Fatalf("addresses not sorted and distinct: %v", addrs)
			}
		}
	})
}
