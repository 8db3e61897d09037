package verify

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestReadAddrList(t *testing.T) {
	got, err := ReadAddrList(strings.NewReader("# addresses\n192.0.2.1\n\n  2001:db8::1  # a comment\n::ffff:192.0.2.1\n"))
	if err != nil || !slices.Equal(got, []string{"192.0.2.1", "2001:db8::1", "::ffff:192.0.2.1"}) {
		t.Errorf("got %q, %v", got, err)
	}
	var in strings.Builder
	for i := range 8 {
		in.WriteString("192.0.2.1\n")
		if i%2 == 0 {
			in.WriteString("bad\x1b[2J" + strings.Repeat("x", 70) + "\n")
		}
	}
	in.WriteString("fe80::1%eth0\n")
	_, err = ReadAddrList(strings.NewReader(in.String()))
	var bad *AddrListError
	if !errors.As(err, &bad) || bad.Count != 5 || len(bad.Lines) != 5 || !strings.HasPrefix(bad.Lines[0], `line 2: "bad\\x1b[2Jxxx`) ||
		!strings.Contains(err.Error(), "…") || strings.Contains(err.Error(), "\x1b") {
		t.Errorf("err %v (%+v): want five bad lines named, escaped and cut", err, bad)
	}
}

func TestParseAddrs(t *testing.T) {
	got, err := ParseAddrs([]string{"2001:db8::1", " 192.0.2.9", "::ffff:192.0.2.1", "192.0.2.1"})
	want := []netip.Addr{netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.9"), netip.MustParseAddr("2001:db8::1")}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	for _, v := range []string{"", "example.com", "fe80::1%eth0", "192.0.2.1:53"} {
		var bad *NotAddrError
		if _, err := ParseAddrs([]string{"192.0.2.1", v}); !errors.As(err, &bad) || bad.Value != v {
			t.Errorf("%q: err %v", v, err)
		}
	}
}
