package nftset

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/emit"
)

func TestCheckAddr(t *testing.T) {
	tests := []struct {
		in   netip.Addr
		want error
	}{
		{netip.Addr{}, ErrInvalidAddr},
		{netip.MustParseAddr("0.0.0.0"), ErrInvalidAddr},
		{netip.MustParseAddr("::"), ErrInvalidAddr},
		{netip.MustParseAddr("fe80::1%eth0"), ErrInvalidAddr},
		{netip.MustParseAddr("::ffff:192.0.2.1"), ErrMappedAddr},
		{netip.MustParseAddr("192.0.2.1"), nil},
		{netip.MustParseAddr("2001:db8::1"), nil},
		{netip.MustParseAddr("255.255.255.255"), nil},
	}
	for _, tt := range tests {
		err := CheckAddr(tt.in)
		if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("CheckAddr(%v) = %v, want %v", tt.in, err, tt.want)
		}
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		name    string
		in      Options
		family  string
		table   string
		prio    int32
		hook    string
		ttl     time.Duration
		wantErr bool
	}{
		{name: "defaults", family: "inet", table: "lohibot", prio: -10, hook: "input", ttl: emit.DefaultTTL},
		{name: "raw prerouting", in: Options{NFTOptions: emit.NFTOptions{Hook: "prerouting", Priority: "raw", TTL: time.Hour}}, family: "inet", table: "lohibot", prio: -300, hook: "prerouting", ttl: time.Hour},
		{name: "number", in: Options{NFTOptions: emit.NFTOptions{Priority: "-150", Table: "fw"}}, family: "inet", table: "fw", prio: -150, hook: "input", ttl: emit.DefaultTTL},
		{name: "security plus", in: Options{NFTOptions: emit.NFTOptions{Priority: "security + 5", Hook: "forward"}}, family: "inet", table: "lohibot", prio: 55, hook: "forward", ttl: emit.DefaultTTL},
		{name: "set-only ip", in: Options{NFTOptions: emit.NFTOptions{SetOnly: true, Table: "ip filter"}}, family: "ip", table: "filter", hook: "input", ttl: emit.DefaultTTL},
		{name: "set-only ip6", in: Options{NFTOptions: emit.NFTOptions{SetOnly: true, Table: "ip6 filter"}}, family: "ip6", table: "filter", hook: "input", ttl: emit.DefaultTTL},
		{name: "chain needs inet", in: Options{NFTOptions: emit.NFTOptions{Table: "ip filter"}}, wantErr: true},
		{name: "bad family", in: Options{NFTOptions: emit.NFTOptions{SetOnly: true, Table: "bridge x"}}, wantErr: true},
		{name: "bad name", in: Options{NFTOptions: emit.NFTOptions{Table: "inet a-b"}}, wantErr: true},
		{name: "three words", in: Options{NFTOptions: emit.NFTOptions{Table: "inet a b"}}, wantErr: true},
		{name: "bad hook", in: Options{NFTOptions: emit.NFTOptions{Hook: "output"}}, wantErr: true},
		{name: "bad priority", in: Options{NFTOptions: emit.NFTOptions{Priority: "dstnat"}}, wantErr: true},
		{name: "ttl fraction", in: Options{NFTOptions: emit.NFTOptions{TTL: 1500 * time.Millisecond}}, wantErr: true},
		{name: "ttl too long", in: Options{NFTOptions: emit.NFTOptions{TTL: emit.MaxTTL + time.Second}}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.in.config()
			if tt.wantErr {
				if !errors.Is(err, ErrBadOption) {
					t.Fatalf("config() error = %v, want ErrBadOption", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Family != tt.family || c.Table != tt.table || c.priority != tt.prio || c.Hook != tt.hook || c.TTL != tt.ttl {
				t.Errorf("config() = family %v table %q priority %d hook %q ttl %v, want %v %q %d %q %v",
					c.Family, c.Table, c.priority, c.Hook, c.TTL, tt.family, tt.table, tt.prio, tt.hook, tt.ttl)
			}
		})
	}
}

func TestIntervalsHold(t *testing.T) {
	el := func(s string, end bool) intervalKey {
		return intervalKey{netip.MustParseAddr(s), end}
	}
	// [10.0.0.5, 10.0.0.8) [10.0.0.8, 10.0.0.9) [10.0.1.0, end of space)
	// in the kernel's (descending) order, and an IPv6 key to ignore.
	els := []intervalKey{
		el("10.0.1.0", false), el("10.0.0.9", true), el("10.0.0.8", false),
		el("10.0.0.8", true), el("10.0.0.5", false), el("2001:db8::1", false),
	}
	for _, tt := range []struct {
		addr string
		want bool
	}{
		{"10.0.0.4", false}, {"10.0.0.5", true}, {"10.0.0.7", true}, {"10.0.0.8", true},
		{"10.0.0.9", false}, {"10.0.0.255", false}, {"10.0.1.0", true}, {"255.255.255.255", true},
		{"0.0.0.1", false},
	} {
		if got := intervalsHold(els, netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("intervalsHold(%s) = %v, want %v", tt.addr, got, tt.want)
		}
	}
	if intervalsHold(nil, netip.MustParseAddr("10.0.0.5")) {
		t.Error("an empty set holds an address")
	}
}

func TestOpenBadOption(t *testing.T) {
	// A bad option fails before any netlink traffic.
	if _, err := Open(Options{NFTOptions: emit.NFTOptions{Table: "ip x"}}); !errors.Is(err, ErrBadOption) {
		t.Errorf("Open with a bad table: %v", err)
	}
}
