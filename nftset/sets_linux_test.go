package nftset

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/emit"
)

func TestAddForLivesItsOwnTime(t *testing.T) {
	ns := newNetNS(t)
	a := openIn(t, ns, Options{NFTOptions: emit.NFTOptions{TTL: 2 * time.Hour}})
	if err := a.AddFor(ctxT(t), netip.MustParseAddr("192.0.2.1"), 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := a.AddFor(ctxT(t), netip.MustParseAddr("2001:db8::1"), 0); err != nil {
		t.Fatal(err)
	}
	e, ok := mustList(t, ns, "inet lohibot", LiveV4).elem("192.0.2.1")
	if !ok || e.Timeout != 600 || e.Expires > 600 {
		t.Errorf("192.0.2.1: %+v (found %v), want its own timeout of 600 s", e, ok)
	}
	e, ok = mustList(t, ns, "inet lohibot", LiveV6).elem("2001:db8::1")
	if !ok || (e.Timeout != 0 && e.Timeout != 7200) || e.Expires <= 600 {
		t.Errorf("2001:db8::1: %+v (found %v), want the set's 2 h", e, ok)
	}
}

func TestSetsMembersAndRemove(t *testing.T) {
	ns := newNetNS(t)
	// emit's file first: one address alone, two merged into one interval.
	if err := ns.load(emitted(t, emit.NFTOptions{SetOnly: true}, "198.51.100.7", "203.0.113.10", "203.0.113.11", "2001:db8:5::5")); err != nil {
		t.Fatal(err)
	}
	a := openIn(t, ns, Options{NFTOptions: emit.NFTOptions{SetOnly: true}})
	if err := a.AddFor(ctxT(t), netip.MustParseAddr("192.0.2.1"), 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, a, "192.0.2.2", "2001:db8::2")
	s := Sets{Options{NFTOptions: emit.NFTOptions{SetOnly: true}, NetNS: ns.fd()}}
	m, err := s.Members(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 3 || m[netip.MustParseAddr("192.0.2.1")] > 10*time.Minute || m[netip.MustParseAddr("192.0.2.2")] <= 10*time.Minute {
		t.Fatalf("members %v, want the three live addresses with the time each has left", m)
	}
	if _, ok := m[netip.MustParseAddr("198.51.100.7")]; ok {
		t.Errorf("members hold an address of emit's set: %v", m)
	}

	addrs := []string{"192.0.2.2", "198.51.100.7", "203.0.113.10", "2001:db8::2", "2001:db8:5::5", "192.0.2.200"}
	var as []netip.Addr
	for _, x := range addrs {
		as = append(as, netip.MustParseAddr(x))
	}
	got, err := s.Remove(ctxT(t), as)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Removed{
		"192.0.2.2":     {Sets: []string{LiveV4}},
		"198.51.100.7":  {Sets: []string{SetV4}},
		"203.0.113.10":  {Covered: "203.0.113.10/31"},
		"2001:db8::2":   {Sets: []string{LiveV6}},
		"2001:db8:5::5": {Sets: []string{SetV6}},
		"192.0.2.200":   {},
	}
	for k, w := range want {
		g := got[netip.MustParseAddr(k)]
		if !slices.Equal(g.Sets, w.Sets) || g.Covered != w.Covered {
			t.Errorf("%s: got %+v, want %+v", k, g, w)
		}
	}
	if v := mustList(t, ns, "inet lohibot", LiveV4).vals(); !slices.Equal(v, []string{"192.0.2.1"}) {
		t.Errorf("live set after: %v", v)
	}
	if v := mustList(t, ns, "inet lohibot", SetV4).vals(); !slices.Equal(v, []string{"203.0.113.10-203.0.113.11"}) && !slices.Equal(v, []string{"203.0.113.10/31"}) {
		t.Errorf("emit's set after: %v, want only the merged interval", v)
	}
	if v := mustList(t, ns, "inet lohibot", SetV6).vals(); len(v) != 0 {
		t.Errorf("emit's IPv6 set after: %v", v)
	}
}

func TestSetsWithoutTable(t *testing.T) {
	ns := newNetNS(t)
	s := Sets{Options{NetNS: ns.fd()}}
	m, err := s.Members(ctxT(t))
	if err != nil || len(m) != 0 {
		t.Fatalf("members of no table: %v, %v", m, err)
	}
	got, err := s.Remove(ctxT(t), []netip.Addr{netip.MustParseAddr("192.0.2.1")})
	if err != nil || len(got[netip.MustParseAddr("192.0.2.1")].Sets) != 0 {
		t.Fatalf("remove from no table: %v, %v", got, err)
	}
	if out := ns.nftRun("list", "tables"); len(out) != 0 {
		t.Errorf("a table was made: %s", out)
	}
}
