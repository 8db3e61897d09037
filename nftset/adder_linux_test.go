package nftset

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/emit"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// openIn opens an Adder in ns and closes it when the test ends.
func openIn(t testing.TB, ns *netNS, o Options) *Adder {
	t.Helper()
	o.NetNS = ns.fd()
	a, err := Open(o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// openIdle opens an Adder in ns without its worker, for tests that drive
// commit themselves.
func openIdle(t testing.TB, ns *netNS, o Options) *Adder {
	t.Helper()
	o.NetNS = ns.fd()
	a, err := open(o)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { a.conn.CloseLasting() })
	return a
}

// ctxT is a context that detects a hang.
func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustAdd(t testing.TB, a *Adder, addrs ...string) {
	t.Helper()
	for _, s := range addrs {
		if err := a.Add(ctxT(t), netip.MustParseAddr(s)); err != nil {
			t.Fatalf("Add(%s): %v", s, err)
		}
	}
}

func mustList(t testing.TB, ns *netNS, table, set string) jsonSet {
	t.Helper()
	s, err := ns.listSet(table, set)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// emitted returns emit's nftables file for spoofers.
func emitted(t testing.TB, o emit.NFTOptions, spoofers ...string) []byte {
	t.Helper()
	c := emit.CrawlerInput{Tokens: []string{"LohiSoftBot"}}
	for _, s := range spoofers {
		c.Spoofed = append(c.Spoofed, netip.MustParseAddr(s))
	}
	in := emit.Input{Mode: emit.BlockSpoofed, Crawlers: []emit.CrawlerInput{c}}
	var b bytes.Buffer
	if _, err := emit.NFTables(&b, in, o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestAddCreatesTableSetsAndChain(t *testing.T) {
	ns := newNetNS(t)
	a := openIn(t, ns, Options{NFTOptions: emit.NFTOptions{TTL: 2 * time.Hour}})
	mustAdd(t, a, "192.0.2.7", "2001:db8::7", "255.255.255.255", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")

	for _, c := range []struct{ set, typ, addr, last string }{
		{LiveV4, "ipv4_addr", "192.0.2.7", "255.255.255.255"},
		{LiveV6, "ipv6_addr", "2001:db8::7", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
	} {
		s := mustList(t, ns, "inet lohibot", c.set)
		// No interval flag: the kernel keeps the set as a hash table.
		if s.Type != c.typ || !slices.Equal(s.Flags, []string{"timeout"}) || s.Timeout != 7200 {
			t.Errorf("set %s: type %s flags %v timeout %d, want %s [timeout] 7200", c.set, s.Type, s.Flags, s.Timeout, c.typ)
		}
		got := s.vals()
		slices.Sort(got)
		if want := []string{c.addr, c.last}; !slices.Equal(got, want) {
			t.Errorf("set %s holds %v, want %v", c.set, got, want)
		}
		e, _ := s.elem(c.addr)
		if e.Expires <= 0 || e.Expires > 7200 || (e.Timeout != 0 && e.Timeout != 7200) {
			t.Errorf("set %s element %s: timeout %d expires %d, want a 2h timeout", c.set, c.addr, e.Timeout, e.Expires)
		}
	}
	// emit's sets are made as its file makes them, and left empty.
	for _, set := range []string{SetV4, SetV6} {
		s := mustList(t, ns, "inet lohibot", set)
		if !slices.Equal(s.Flags, []string{"interval", "timeout"}) || s.Timeout != 7200 || len(s.Elems) != 0 {
			t.Errorf("set %s: flags %v timeout %d elements %v, want [interval timeout] 7200 none", set, s.Flags, s.Timeout, s.vals())
		}
	}

	// The whole table reads as the one emit's file makes once an Adder has
	// opened on it in another namespace: same sets, flags, auto-merge,
	// chain, hook, priority, rules, and the live sets and rules added.
	ours := normalizeTable(ns.nftRun("list", "table", "inet", "lohibot"))
	other := newNetNS(t)
	if err := other.load(emitted(t, emit.NFTOptions{TTL: 2 * time.Hour})); err != nil {
		t.Fatal(err)
	}
	openIn(t, other, Options{NFTOptions: emit.NFTOptions{TTL: 2 * time.Hour}})
	theirs := normalizeTable(other.nftRun("list", "table", "inet", "lohibot"))
	if ours != theirs {
		t.Errorf("table made live:\n%s\ntable made by emit's file and opened:\n%s", ours, theirs)
	}
	for _, rule := range []string{"ip saddr @spoofed_v4 counter", "ip6 saddr @spoofed_v6 counter", "ip saddr @spoofed_live_v4 counter", "ip6 saddr @spoofed_live_v6 counter"} {
		if strings.Count(ours, rule) != 1 {
			t.Errorf("the chain has not one rule %q:\n%s", rule, ours)
		}
	}
	if u := a.Unreferenced(); u != nil {
		t.Errorf("Unreferenced() = %v with the chain made", u)
	}
}

// normalizeTable drops elements and counters from nft list output.
func normalizeTable(b []byte) string {
	var out []string
	skip := false
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "elements = {") {
			skip = true
		}
		if skip {
			skip = !strings.HasSuffix(l, "}")
			continue
		}
		out = append(out, counterRE.ReplaceAllString(l, "counter"))
	}
	return strings.Join(out, "\n")
}

var counterRE = regexp.MustCompile(`counter packets [0-9]+ bytes [0-9]+`)

func TestAddAgainRefreshesTimeout(t *testing.T) {
	ns := newNetNS(t)
	a := openIn(t, ns, Options{NFTOptions: emit.NFTOptions{TTL: 2 * time.Hour}})
	ns.nftRun("add", "element", "inet", "lohibot", LiveV4, "{ 192.0.2.9 timeout 10m }")
	ns.nftRun("add", "element", "inet", "lohibot", LiveV6, "{ 2001:db8::9 timeout 10m }")
	for i := 0; i < 2; i++ {
		mustAdd(t, a, "192.0.2.9", "2001:db8::9")
	}
	for _, c := range []struct{ set, addr string }{{LiveV4, "192.0.2.9"}, {LiveV6, "2001:db8::9"}} {
		s := mustList(t, ns, "inet lohibot", c.set)
		if got := s.vals(); !slices.Equal(got, []string{c.addr}) {
			t.Fatalf("set %s holds %v, want just %s", c.set, got, c.addr)
		}
		e, _ := s.elem(c.addr)
		// 10 minutes left before the adds; the adds give it 2 hours again.
		if e.Expires <= 600 || (e.Timeout != 0 && e.Timeout != 7200) {
			t.Errorf("set %s element %s: timeout %d expires %d, want the 2h timeout started anew", c.set, c.addr, e.Timeout, e.Expires)
		}
	}
}

func TestAddLeavesEmitSetsAlone(t *testing.T) {
	ns := newNetNS(t)
	a := openIn(t, ns, Options{})
	// Adjacent addresses, which nft's auto-merge makes one interval.
	if err := ns.load(emitted(t, emit.NFTOptions{SetOnly: true}, "192.0.2.10", "192.0.2.11", "192.0.2.12", "2001:db8::a", "2001:db8::b")); err != nil {
		t.Fatal(err)
	}
	before4 := mustList(t, ns, "inet lohibot", SetV4).vals()
	if len(before4) != 1 || !strings.Contains(before4[0], "-") {
		t.Fatalf("emit's file loaded %v, want one merged interval (the test relies on it)", before4)
	}
	before6 := mustList(t, ns, "inet lohibot", SetV6).vals()
	mustAdd(t, a, "192.0.2.11", "2001:db8::b", "192.0.2.12", "192.0.2.99")
	if got := mustList(t, ns, "inet lohibot", SetV4).vals(); !slices.Equal(got, before4) {
		t.Errorf("after adds emit's set holds %v, want %v", got, before4)
	}
	if got := mustList(t, ns, "inet lohibot", SetV6).vals(); !slices.Equal(got, before6) {
		t.Errorf("after adds emit's set holds %v, want %v", got, before6)
	}
	got := mustList(t, ns, "inet lohibot", LiveV4).vals()
	slices.Sort(got)
	if want := []string{"192.0.2.11", "192.0.2.12", "192.0.2.99"}; !slices.Equal(got, want) {
		t.Errorf("live set holds %v, want %v", got, want)
	}
}

func TestBatchOneTransaction(t *testing.T) {
	ns := newNetNS(t)
	a := openIdle(t, ns, Options{})
	// Without the worker, commit can be driven directly: 1,300 requests
	// (v4 and v6, some twice; more than one netlink message holds) go in
	// one transaction.
	var batch []*request
	var want4, want6 []string
	for i := 0; i < 1200; i++ {
		ad := netip.AddrFrom4([4]byte{198, 18, byte(i / 100), byte(2 * (i % 100))})
		batch = append(batch, &request{addr: ad, res: make(chan error, 1)})
		want4 = append(want4, ad.String())
	}
	for i := 0; i < 100; i++ {
		ad := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 15: byte(2 * i)})
		batch = append(batch, &request{addr: ad, res: make(chan error, 1)})
		batch = append(batch, &request{addr: ad, res: make(chan error, 1)})
		want6 = append(want6, ad.String())
	}
	n := a.transactions
	a.commit(batch)
	for _, r := range batch {
		if err := <-r.res; err != nil {
			t.Errorf("Add(%s): %v", r.addr, err)
		}
	}
	if got := a.transactions - n; got != 1 {
		t.Errorf("%d requests took %d transactions, want 1", len(batch), got)
	}
	for _, c := range []struct {
		set  string
		want []string
	}{{LiveV4, want4}, {LiveV6, want6}} {
		got := mustList(t, ns, "inet lohibot", c.set).vals()
		slices.Sort(got)
		slices.Sort(c.want)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s holds %d elements, want %d", c.set, len(got), len(c.want))
		}
	}
}

func TestConcurrentAdds(t *testing.T) {
	ns := newNetNS(t)
	a := openIn(t, ns, Options{MaxBatch: 16})
	var wg sync.WaitGroup
	var want []string
	for i := 0; i < 400; i++ {
		ad := netip.AddrFrom4([4]byte{203, 0, byte(113 + i/200), byte(i % 200)})
		want = append(want, ad.String())
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.Add(ctxT(t), ad); err != nil {
				t.Errorf("Add(%s): %v", ad, err)
			}
		}()
	}
	wg.Wait()
	got := mustList(t, ns, "inet lohibot", LiveV4).vals()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("set holds %d elements, want %d", len(got), len(want))
	}
	if a.transactions > 400 {
		t.Errorf("%d transactions for 400 adds", a.transactions)
	}
}

func TestErrorsPerCall(t *testing.T) {
	ns := newNetNS(t)
	// The user's own table has a spoofed_live_v6 set of the wrong type:
	// every IPv6 add fails, IPv4 adds in the same batch do not.
	if err := ns.load([]byte("table inet fw {\n\tset spoofed_live_v6 { type ipv4_addr; flags timeout; }\n}\n")); err != nil {
		t.Fatal(err)
	}
	a := openIdle(t, ns, Options{NFTOptions: emit.NFTOptions{SetOnly: true, Table: "inet fw"}})
	addrs := []string{"192.0.2.1", "2001:db8::1", "192.0.2.3"}
	var batch []*request
	for _, s := range addrs {
		batch = append(batch, &request{addr: netip.MustParseAddr(s), res: make(chan error, 1)})
	}
	a.commit(batch)
	for _, r := range batch {
		err := <-r.res
		if r.addr.Is4() != (err == nil) {
			t.Errorf("Add(%s) = %v", r.addr, err)
		}
		if err != nil && !strings.Contains(err.Error(), r.addr.String()) {
			t.Errorf("Add(%s) error %q does not name the address", r.addr, err)
		}
	}
	got := mustList(t, ns, "inet fw", LiveV4).vals()
	slices.Sort(got)
	if !slices.Equal(got, []string{"192.0.2.1", "192.0.2.3"}) {
		t.Errorf("v4 set holds %v", got)
	}
}

// TestWithEmittedFile uses emit's file and live adds together, in both
// orders, with and without --set-only.
func TestWithEmittedFile(t *testing.T) {
	for _, v := range []struct {
		name  string
		opts  emit.NFTOptions
		table string
	}{
		{"whole table", emit.NFTOptions{TTL: 24 * time.Hour}, "inet lohibot"},
		{"set-only", emit.NFTOptions{SetOnly: true, TTL: 24 * time.Hour}, "inet lohibot"},
		{"set-only ip filter", emit.NFTOptions{SetOnly: true, Table: "ip filter", TTL: 24 * time.Hour}, "ip filter"},
	} {
		// holds checks what a set holds, in any order.
		holds := func(t *testing.T, ns *netNS, set string, want ...string) {
			t.Helper()
			got := mustList(t, ns, v.table, set).vals()
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s holds %v, want %v", set, got, want)
			}
		}
		t.Run(v.name+"/file first", func(t *testing.T) {
			ns := newNetNS(t)
			file := emitted(t, v.opts, "198.51.100.1", "2001:db8:1::1")
			if err := ns.load(file); err != nil {
				t.Fatal(err)
			}
			a := openIn(t, ns, Options{NFTOptions: v.opts})
			mustAdd(t, a, "198.51.100.1", "198.51.100.77", "2001:db8:1::77")
			holds(t, ns, SetV4, "198.51.100.1")
			holds(t, ns, SetV6, "2001:db8:1::1")
			holds(t, ns, LiveV4, "198.51.100.1", "198.51.100.77")
			holds(t, ns, LiveV6, "2001:db8:1::77")
			// Reloading the file puts emit's sets back to what it says;
			// the whole table goes with the live sets in it, a set-only
			// file leaves the live sets alone.
			if err := ns.load(file); err != nil {
				t.Fatalf("reloading emit's file after live adds: %v", err)
			}
			holds(t, ns, SetV4, "198.51.100.1")
			if v.opts.SetOnly {
				holds(t, ns, LiveV4, "198.51.100.1", "198.51.100.77")
			} else if _, err := ns.listSet(v.table, LiveV4); err == nil {
				t.Errorf("%s outlived the reload of the whole table", LiveV4)
			}
			// Live adds go on working after the reload.
			mustAdd(t, a, "198.51.100.78")
			if v.opts.SetOnly {
				holds(t, ns, LiveV4, "198.51.100.1", "198.51.100.77", "198.51.100.78")
			} else {
				holds(t, ns, LiveV4, "198.51.100.78")
				chain := string(ns.nftRun("list", "chain", "inet", "lohibot", "input"))
				if !strings.Contains(chain, "ip saddr @spoofed_live_v4 counter") || strings.Count(chain, " drop") != 4 {
					t.Errorf("after the reload and a live add the chain is\n%s", chain)
				}
			}
		})
		t.Run(v.name+"/live first", func(t *testing.T) {
			ns := newNetNS(t)
			a := openIn(t, ns, Options{NFTOptions: v.opts})
			mustAdd(t, a, "198.51.100.77", "2001:db8:1::77")
			file := emitted(t, v.opts, "198.51.100.1", "2001:db8:1::1")
			if err := ns.load(file); err != nil {
				t.Fatalf("loading emit's file after live adds: %v", err)
			}
			holds(t, ns, SetV4, "198.51.100.1")
			mustAdd(t, a, "198.51.100.77", "2001:db8:1::77")
			holds(t, ns, SetV6, "2001:db8:1::1")
			holds(t, ns, LiveV6, "2001:db8:1::77")
			if err := ns.load(file); err != nil {
				t.Fatalf("reloading emit's file: %v", err)
			}
			if !v.opts.SetOnly {
				mustAdd(t, a, "198.51.100.79")
				// One chain, four rules: nothing was doubled.
				rules := strings.Count(string(ns.nftRun("list", "chain", "inet", "lohibot", "input")), " drop")
				if rules != 4 {
					t.Errorf("chain input has %d drop rules, want 4", rules)
				}
			}
		})
	}
}

func TestRecreatesAfterFlushRuleset(t *testing.T) {
	ns := newNetNS(t)
	a := openIn(t, ns, Options{})
	mustAdd(t, a, "192.0.2.1")
	ns.nftRun("flush", "ruleset")
	mustAdd(t, a, "192.0.2.2", "2001:db8::2")
	if got := mustList(t, ns, "inet lohibot", LiveV4).vals(); !slices.Equal(got, []string{"192.0.2.2"}) {
		t.Errorf("after flush and add v4 set holds %v", got)
	}
	out := string(ns.nftRun("list", "chain", "inet", "lohibot", "input"))
	for _, rule := range []string{"ip saddr @spoofed_v4 counter", "ip saddr @spoofed_live_v4 counter", "ip6 saddr @spoofed_live_v6 counter"} {
		if !strings.Contains(out, rule) {
			t.Errorf("rule %q not made again:\n%s", rule, out)
		}
	}
}

func TestSetOnlyMakesNoChain(t *testing.T) {
	ns := newNetNS(t)
	a := openIn(t, ns, Options{NFTOptions: emit.NFTOptions{SetOnly: true, Table: "inet filter"}})
	mustAdd(t, a, "192.0.2.1")
	out := string(ns.nftRun("list", "table", "inet", "filter"))
	if strings.Contains(out, "chain") {
		t.Errorf("set-only table:\n%s", out)
	}
	for _, set := range []string{SetV4, SetV6, LiveV4, LiveV6} {
		if !strings.Contains(out, "set "+set+" {") {
			t.Errorf("set-only table lacks %s:\n%s", set, out)
		}
	}
	if got := a.Unreferenced(); !slices.Equal(got, []string{LiveV4, LiveV6}) {
		t.Errorf("Unreferenced() = %v with no rule, want both live sets", got)
	}
	// The user's chain refers to the IPv4 live set, in a rule of their
	// own making, and to emit's sets: only the IPv6 live set is left.
	if err := ns.load([]byte("table inet filter {\n\tchain in {\n\t\ttype filter hook input priority 0;\n" +
		"\t\tip saddr @spoofed_v4 drop\n\t\tip6 saddr @spoofed_v6 drop\n\t\tip saddr @spoofed_live_v4 log prefix \"spoofer \" drop\n\t}\n}\n")); err != nil {
		t.Fatal(err)
	}
	b := openIn(t, ns, Options{NFTOptions: emit.NFTOptions{SetOnly: true, Table: "inet filter"}})
	if got := b.Unreferenced(); !slices.Equal(got, []string{LiveV6}) {
		t.Errorf("Unreferenced() = %v, want [%s]", got, LiveV6)
	}
}

func TestRefusedAndClosed(t *testing.T) {
	ns := newNetNS(t)
	a := openIn(t, ns, Options{})
	if err := a.Add(ctxT(t), netip.MustParseAddr("::ffff:192.0.2.1")); !errors.Is(err, ErrMappedAddr) {
		t.Errorf("mapped address: %v", err)
	}
	if err := a.Add(ctxT(t), netip.Addr{}); !errors.Is(err, ErrInvalidAddr) {
		t.Errorf("zero address: %v", err)
	}
	if got := mustList(t, ns, "inet lohibot", SetV4).vals(); len(got) != 0 {
		t.Errorf("refused adds left %v", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.Add(ctx, netip.MustParseAddr("192.0.2.1")); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	a.Close()
	a.Close()
	if err := a.Add(ctxT(t), netip.MustParseAddr("192.0.2.1")); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

func BenchmarkAdd(b *testing.B) {
	ns := newNetNS(b)
	a := openIn(b, ns, Options{})
	ctx := context.Background()
	b.Run("serial", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			ad := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
			if err := a.Add(ctx, ad); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "adds/s")
	})
	b.Run("parallel", func(b *testing.B) {
		b.SetParallelism(32)
		var mu sync.Mutex
		n := 0
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				mu.Lock()
				n++
				i := n
				mu.Unlock()
				ad := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 12: byte(i >> 24), 13: byte(i >> 16), 14: byte(i >> 8), 15: byte(i)})
				if err := a.Add(ctx, ad); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "adds/s")
	})
}

// BenchmarkAddLargeSets adds to sets that hold 1,000,000 addresses each
// already, emit's interval set and the live set: the cost of an add does
// not grow with them. serial is one add a transaction; parallel, 512
// adders at once, as watch's rounds add.
func BenchmarkAddLargeSets(b *testing.B) {
	ns := newNetNS(b)
	a := openIn(b, ns, Options{})
	var file strings.Builder
	for _, set := range []string{SetV4, LiveV4} {
		for i := range 1_000_000 {
			if i%10_000 == 0 {
				if i > 0 {
					file.WriteString(" }\n")
				}
				file.WriteString("add element inet lohibot " + set + " { ")
			} else {
				file.WriteString(", ")
			}
			n := uint32(1<<24 + 2*i)
			file.WriteString(netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}).String())
		}
		file.WriteString(" }\n")
	}
	if err := ns.load([]byte(file.String())); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var next atomic.Uint32
	addr := func() netip.Addr {
		n := next.Add(1)
		return netip.AddrFrom4([4]byte{10, byte(n >> 16), byte(n >> 8), byte(n)})
	}
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			if err := a.Add(ctx, addr()); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "adds/s")
	})
	b.Run("parallel", func(b *testing.B) {
		b.SetParallelism(256)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := a.Add(ctx, addr()); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "adds/s")
	})
}

// TestRuleDropsPackets sends UDP over the namespace's loopback from an
// added address and from another one: the chain's counter counts the
// first as dropped, the second arrives.
func TestRuleDropsPackets(t *testing.T) {
	ns := newNetNS(t)
	ip := testutil.NeedTool(t, ".ci/install-rule-checkers", "ip")
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"-6", "addr", "add", "2001:db8::2/128", "dev", "lo", "nodad"},
		{"-6", "addr", "add", "2001:db8::3/128", "dev", "lo", "nodad"},
	} {
		if _, err := ns.run(nil, ip, args...); err != nil {
			t.Fatal(err)
		}
	}
	// The kernel adds an IPv6 address's local route after ip returns; a
	// socket connected before it keeps a route to nowhere.
	for hangAt := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		out, err := ns.run(nil, ip, "-6", "route", "show", "table", "local")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), "local 2001:db8::2 ") && strings.Contains(string(out), "local 2001:db8::3 ") {
			break
		}
		if time.Now().After(hangAt) {
			t.Fatalf("the local IPv6 routes never came (hang detector):\n%s", out)
		}
	}
	a := openIn(t, ns, Options{})
	mustAdd(t, a, "127.0.0.2", "2001:db8::2")

	for _, c := range []struct {
		name                       string
		net, dst, blocked, allowed string
		rule                       string
	}{
		{"IPv4", "udp4", "127.0.0.1", "127.0.0.2", "127.0.0.3", "ip saddr @spoofed_live_v4"},
		{"IPv6", "udp6", "[2001:db8::3]", "[2001:db8::2]", "[2001:db8::3]", "ip6 saddr @spoofed_live_v6"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var recv, from1, from2 *net.UDPConn
			err := ns.inside(func() (err error) {
				if recv, err = net.ListenUDP(c.net, net.UDPAddrFromAddrPort(netip.MustParseAddrPort(c.dst+":0"))); err != nil {
					return err
				}
				dst := recv.LocalAddr().(*net.UDPAddr)
				if from1, err = net.DialUDP(c.net, net.UDPAddrFromAddrPort(netip.MustParseAddrPort(c.blocked+":0")), dst); err != nil {
					return err
				}
				from2, err = net.DialUDP(c.net, net.UDPAddrFromAddrPort(netip.MustParseAddrPort(c.allowed+":0")), dst)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			defer recv.Close()
			defer from1.Close()
			defer from2.Close()
			// A fresh namespace's IPv6 may lose the first packets before
			// any hook sees them: both are sent again until the allowed one
			// arrives.
			buf := make([]byte, 64)
			allowed := netip.MustParseAddrPort(c.allowed + ":0").Addr()
			hangAt := time.Now().Add(10 * time.Second)
			for sent := 0; ; sent++ {
				if _, err := from1.Write([]byte("blocked")); err != nil {
					t.Fatal(err)
				}
				if _, err := from2.Write([]byte("allowed")); err != nil {
					t.Fatal(err)
				}
				recv.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
				n, src, err := recv.ReadFromUDPAddrPort(buf)
				if err == nil {
					if string(buf[:n]) != "allowed" || src.Addr().Unmap() != allowed {
						t.Fatalf("received %q from %v, want \"allowed\" from %s", buf[:n], src, c.allowed)
					}
					break
				}
				if time.Now().After(hangAt) {
					t.Fatalf("the allowed packet did not arrive in %d tries (hang detector): %v", sent+1, err)
				}
			}
			// Wait for the drop to be counted (hang detector only).
			re := regexp.MustCompile(regexp.QuoteMeta(c.rule) + ` counter packets ([0-9]+)`)
			for {
				m := re.FindSubmatch(ns.nftRun("list", "chain", "inet", "lohibot", "input"))
				if m == nil {
					t.Fatalf("rule %q not in the chain", c.rule)
				}
				if string(m[1]) != "0" {
					break
				}
				if time.Now().After(hangAt) {
					t.Fatalf("rule %q counted no packet", c.rule)
				}
				time.Sleep(10 * time.Millisecond)
			}
			// Counted means dropped: what else is queued is only the
			// allowed address's.
			recv.SetReadDeadline(time.Now())
			for {
				n, src, err := recv.ReadFromUDPAddrPort(buf)
				if err != nil {
					break
				}
				if string(buf[:n]) != "allowed" || src.Addr().Unmap() != allowed {
					t.Errorf("received %q from %v: the blocked address got through", buf[:n], src)
				}
			}
		})
	}
}
