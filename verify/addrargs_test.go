package verify

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
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
