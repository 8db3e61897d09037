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

func TestOpenBadOption(t *testing.T) {
	// A bad option fails before any netlink traffic.
	if _, err := Open(Options{NFTOptions: emit.NFTOptions{Table: "ip x"}}); !errors.Is(err, ErrBadOption) {
		t.Errorf("Open with a bad table: %v", err)
	}
}
