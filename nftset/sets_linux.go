//go:build linux

package nftset

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"syscall"
	"time"

	"github.com/google/nftables"
)

// Sets reads and takes addresses out of the sets of a table, each call on
// a netlink connection of its own; it never creates anything. An Adder
// may add to the same table meanwhile. The zero value works on emit's
// default table.
type Sets struct {
	Options
}

// connect opens a connection to the table's namespace.
func (s Sets) connect() (*nftables.Conn, config, *nftables.Table, error) {
	c, err := s.Options.config()
	if err != nil {
		return nil, c, nil, err
	}
	var opts []nftables.ConnOption
	if c.netns != 0 {
		opts = append(opts, nftables.WithNetNSFd(c.netns))
	}
	conn, err := nftables.New(opts...)
	if err != nil {
		return nil, c, nil, fmt.Errorf("connect to nftables: %w", err)
	}
	return conn, c, &nftables.Table{Family: families[c.Family], Name: c.Table}, nil
}

// Members returns the addresses the live sets (spoofed_live_v4,
// spoofed_live_v6) hold, with the time each has left; none when the table
// or the sets do not exist.
func (s Sets) Members(ctx context.Context) (map[netip.Addr]time.Duration, error) {
	conn, c, table, err := s.connect()
	if err != nil {
		return nil, err
	}
	out := map[netip.Addr]time.Duration{}
	for _, name := range []string{LiveV4, LiveV6} {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		els, err := elements(conn, table, name)
		if err != nil {
			return nil, fmt.Errorf("list set %s of table %s: %w", name, c.TableRef(), err)
		}
		for _, e := range els {
			if a, ok := netip.AddrFromSlice(e.Key); ok {
				out[a.Unmap()] = e.Expires
			}
		}
	}
	return out, nil
}

// Remove takes each address out of the table's sets: the live set of its
// family, and emit's interval set where that holds the address alone (an
// interval from the address to the next). It returns what it did to each
// address; an address in a set nowhere gets an empty Removed. An address
// that a wider range of emit's set holds stays there: its Removed names
// the range (emit's file put it there; --never-block keeps the address
// out of the next one). The error is for what could not be asked.
func (s Sets) Remove(ctx context.Context, addrs []netip.Addr) (map[netip.Addr]Removed, error) {
	conn, c, table, err := s.connect()
	if err != nil {
		return nil, err
	}
	out := make(map[netip.Addr]Removed, len(addrs))
	// del deletes elements of one set in a transaction of their own:
	// false when the set does not hold them (or does not exist).
	del := func(set *nftables.Set, els []nftables.SetElement) (bool, error) {
		if err := conn.SetDeleteElements(set, els); err != nil {
			return false, err
		}
		if err := conn.Flush(); err != nil {
			if errors.Is(err, syscall.ENOENT) {
				return false, nil
			}
			return false, fmt.Errorf("delete from set %s of table %s: %w", set.Name, c.TableRef(), err)
		}
		return true, nil
	}
	var ranges map[string][]span // emit's sets' intervals, read when needed
	for _, a := range addrs {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		var r Removed
		if CheckAddr(a) != nil {
			out[a] = r
			continue
		}
		live, interval, keyType := LiveV4, SetV4, nftables.TypeIPAddr
		if a.Is6() {
			live, interval, keyType = LiveV6, SetV6, nftables.TypeIP6Addr
		}
		ok, err := del(&nftables.Set{Table: table, Name: live, KeyType: keyType}, []nftables.SetElement{{Key: a.AsSlice()}})
		if err != nil {
			return out, err
		}
		if ok {
			r.Sets = append(r.Sets, live)
		}
		if next := a.Next(); next.IsValid() {
			ok, err := del(&nftables.Set{Table: table, Name: interval, KeyType: keyType, Interval: true},
				[]nftables.SetElement{{Key: a.AsSlice()}, {Key: next.AsSlice(), IntervalEnd: true}})
			if err != nil {
				return out, err
			}
			if ok {
				r.Sets = append(r.Sets, interval)
			} else {
				if ranges == nil {
					ranges = map[string][]span{}
				}
				spans, seen := ranges[interval]
				if !seen {
					els, err := elements(conn, table, interval)
					if err != nil {
						return out, fmt.Errorf("list set %s of table %s: %w", interval, c.TableRef(), err)
					}
					spans = spansOf(els)
					ranges[interval] = spans
				}
				for _, sp := range spans {
					if sp.from.Compare(a) <= 0 && (!sp.to.IsValid() || a.Less(sp.to)) {
						r.Covered = sp.String()
						break
					}
				}
			}
		}
		out[a] = r
	}
	return out, nil
}

// elements returns the elements of the set name of table; none when the
// table or the set does not exist.
func elements(conn *nftables.Conn, table *nftables.Table, name string) ([]nftables.SetElement, error) {
	// GetSetElements does not keep the kernel's error; GetSetByName does.
	set, err := conn.GetSetByName(table, name)
	if errors.Is(err, syscall.ENOENT) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return conn.GetSetElements(set)
}

// span is an interval of an interval set: from, up to but not including
// to (invalid: to the end of the address space).
type span struct {
	from, to netip.Addr
}

// String is the span as a prefix when it is one, else FROM-LAST.
func (s span) String() string {
	last := s.to.Prev()
	if !s.to.IsValid() {
		last = lastOf(netip.PrefixFrom(s.from, 0))
	}
	for bits := 0; bits <= s.from.BitLen(); bits++ {
		p := netip.PrefixFrom(s.from, bits)
		if p.Masked().Addr() != s.from {
			continue
		}
		if lastOf(p) == last {
			return p.String()
		}
	}
	return s.from.String() + "-" + last.String()
}

// lastOf is the last address of p.
func lastOf(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// spansOf reads the intervals of an interval set's elements: each start
// key, up to the next end key (IntervalEnd).
func spansOf(els []nftables.SetElement) []span {
	type key struct {
		a   netip.Addr
		end bool
	}
	keys := make([]key, 0, len(els))
	for _, e := range els {
		if a, ok := netip.AddrFromSlice(e.Key); ok {
			keys = append(keys, key{a, e.IntervalEnd})
		}
	}
	// Where one interval ends and the next begins, the end first.
	slices.SortFunc(keys, func(x, y key) int {
		if c := x.a.Compare(y.a); c != 0 {
			return c
		}
		switch {
		case x.end == y.end:
			return 0
		case x.end:
			return -1
		}
		return 1
	})
	var out []span
	for i := 0; i < len(keys); i++ {
		if keys[i].end {
			continue
		}
		sp := span{from: keys[i].a}
		if i+1 < len(keys) && keys[i+1].end {
			sp.to = keys[i+1].a
			i++
		}
		out = append(out, sp)
	}
	return out
}
