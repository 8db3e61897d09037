//go:build linux

package nftset

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// An Adder adds addresses to the sets. It is safe for concurrent use: adds
// that arrive while a transaction is in flight go together in the next one.
type Adder struct {
	cfg    config
	reqs   chan *request
	quit   chan struct{}
	exited chan struct{}
	once   sync.Once

	// Owned by the worker goroutine after Open returns.
	conn         *nftables.Conn
	transactions int // element transactions sent, for tests
	table        *nftables.Table
	set4, set6   *nftables.Set
}

type request struct {
	addr netip.Addr
	res  chan error
}

// Open checks o, connects to nftables and creates what is missing of the
// table, the sets and (unless o.SetOnly) the chain with its two drop
// rules. An existing table, set or chain is left as it is. Errors wrap the
// kernel's (errors.Is(err, os.ErrPermission) without CAP_NET_ADMIN).
func Open(o Options) (*Adder, error) {
	a, err := open(o)
	if err != nil {
		return nil, err
	}
	go a.run()
	return a, nil
}

// open is Open without the worker goroutine.
func open(o Options) (*Adder, error) {
	c, err := o.config()
	if err != nil {
		return nil, err
	}
	a := &Adder{
		cfg:    c,
		reqs:   make(chan *request),
		quit:   make(chan struct{}),
		exited: make(chan struct{}),
		table:  &nftables.Table{Family: families[c.Family], Name: c.Table},
	}
	a.set4 = a.newSet(SetV4, nftables.TypeIPAddr)
	a.set6 = a.newSet(SetV6, nftables.TypeIP6Addr)
	if err := a.dial(); err != nil {
		return nil, err
	}
	if err := a.ensure(); err != nil {
		a.conn.CloseLasting()
		return nil, err
	}
	return a, nil
}

func (a *Adder) newSet(name string, t nftables.SetDatatype) *nftables.Set {
	// The flags and user data of nft's "flags interval,timeout; auto-merge":
	// the kernel accepts a second creation only when the flags match.
	return &nftables.Set{
		Table:      a.table,
		Name:       name,
		KeyType:    t,
		Interval:   true,
		AutoMerge:  true,
		HasTimeout: true,
		Timeout:    a.cfg.TTL,
	}
}

func (a *Adder) dial() error {
	opts := []nftables.ConnOption{nftables.AsLasting()}
	if a.cfg.netns != 0 {
		opts = append(opts, nftables.WithNetNSFd(a.cfg.netns))
	}
	c, err := nftables.New(opts...)
	if err != nil {
		return fmt.Errorf("connect to nftables: %w", err)
	}
	a.conn = c
	return nil
}

// redial replaces the connection after a failed transaction, so that no
// unread answer of the failed one is taken for the next one's.
func (a *Adder) redial() {
	a.conn.CloseLasting()
	if err := a.dial(); err != nil {
		// The next transaction reports it: a Conn without a lasting socket
		// opens one per call.
		a.conn = &nftables.Conn{NetNS: a.cfg.netns}
	}
}

func (a *Adder) tableRef() string { return a.cfg.TableRef() }

var families = map[string]nftables.TableFamily{
	"inet": nftables.TableFamilyINet,
	"ip":   nftables.TableFamilyIPv4,
	"ip6":  nftables.TableFamilyIPv6,
}

var hooks = map[string]*nftables.ChainHook{
	"input":      nftables.ChainHookInput,
	"prerouting": nftables.ChainHookPrerouting,
	"forward":    nftables.ChainHookForward,
}

// ensure creates the table, sets and chain where missing, in one
// transaction.
func (a *Adder) ensure() error {
	tables, err := a.conn.ListTablesOfFamily(a.table.Family)
	if err != nil {
		return fmt.Errorf("list nftables tables: %w", err)
	}
	haveTable := slices.ContainsFunc(tables, func(t *nftables.Table) bool { return t.Name == a.cfg.Table })
	haveSet := map[string]bool{}
	haveChain := false
	if haveTable {
		sets, err := a.conn.GetSets(a.table)
		if err != nil {
			return fmt.Errorf("list sets of table %s: %w", a.tableRef(), err)
		}
		for _, s := range sets {
			haveSet[s.Name] = true
		}
		if !a.cfg.SetOnly {
			_, err := a.conn.ListChain(a.table, a.cfg.Hook)
			haveChain = err == nil
		}
	}
	if haveTable && haveSet[SetV4] && haveSet[SetV6] && (a.cfg.SetOnly || haveChain) {
		return nil
	}
	a.conn.AddTable(a.table)
	for _, s := range []*nftables.Set{a.set4, a.set6} {
		if haveSet[s.Name] {
			continue
		}
		if err := a.conn.AddSet(s, nil); err != nil {
			return fmt.Errorf("add set %s to table %s: %w", s.Name, a.tableRef(), err)
		}
	}
	if !a.cfg.SetOnly && !haveChain {
		a.addChain()
	}
	if err := a.conn.Flush(); err != nil {
		a.redial()
		return fmt.Errorf("create table %s and its sets: %w", a.tableRef(), err)
	}
	return nil
}

// addChain queues the chain and rules of emit's file:
//
//	chain input {
//		type filter hook input priority filter - 10; policy accept;
//		ip saddr @spoofed_v4 counter drop
//		ip6 saddr @spoofed_v6 counter drop
//	}
func (a *Adder) addChain() {
	accept := nftables.ChainPolicyAccept
	ch := a.conn.AddChain(&nftables.Chain{
		Name:     a.cfg.Hook,
		Table:    a.table,
		Type:     nftables.ChainTypeFilter,
		Hooknum:  hooks[a.cfg.Hook],
		Priority: nftables.ChainPriorityRef(nftables.ChainPriority(a.cfg.priority)),
		Policy:   &accept,
	})
	for _, r := range []struct {
		set         *nftables.Set
		proto       byte
		offset, len uint32
	}{{a.set4, unix.NFPROTO_IPV4, 12, 4}, {a.set6, unix.NFPROTO_IPV6, 8, 16}} {
		a.conn.AddRule(&nftables.Rule{
			Table: a.table,
			Chain: ch,
			Exprs: []expr.Any{
				&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
				&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{r.proto}},
				&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: r.offset, Len: r.len},
				&expr.Lookup{SourceRegister: 1, SetName: r.set.Name, SetID: r.set.ID},
				&expr.Counter{},
				&expr.Verdict{Kind: expr.VerdictDrop},
			},
		})
	}
}

// Add puts addr into the IPv4 or IPv6 set with the configured timeout and
// returns when the kernel has taken it, or with an error for this address
// alone. An address already in the set gets its timeout started anew; one
// already inside a wider interval of the set (loaded from a file) is left
// as it is, without error. The table, sets and chain are created again
// when they have gone (nft flush ruleset, say).
//
// Add refuses what CheckAddr refuses. When ctx ends first, Add returns
// ctx.Err(); the address may still be added.
func (a *Adder) Add(ctx context.Context, addr netip.Addr) error {
	if err := CheckAddr(addr); err != nil {
		return err
	}
	r := &request{addr: addr, res: make(chan error, 1)}
	select {
	case a.reqs <- r:
	case <-a.quit:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-r.res:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the Adder after the transaction in flight, and closes the
// netlink connection. Elements stay in the sets until they time out. Add
// after Close returns ErrClosed.
func (a *Adder) Close() error {
	a.once.Do(func() { close(a.quit) })
	<-a.exited
	return nil
}

func (a *Adder) run() {
	defer close(a.exited)
	defer func() { a.conn.CloseLasting() }()
	batch := make([]*request, 0, a.cfg.maxBatch)
	for {
		select {
		case r := <-a.reqs:
			batch = append(batch[:0], r)
		case <-a.quit:
			return
		}
	more:
		for len(batch) < a.cfg.maxBatch {
			select {
			case r := <-a.reqs:
				batch = append(batch, r)
			default:
				break more
			}
		}
		a.commit(batch)
		clear(batch)
	}
}

// commit adds a batch in one transaction and answers every request. A
// failed transaction is retried address by address, so that each request
// gets its own answer.
func (a *Adder) commit(batch []*request) {
	addrs := make([]netip.Addr, 0, len(batch))
	for _, r := range batch {
		addrs = append(addrs, r.addr)
	}
	slices.SortFunc(addrs, netip.Addr.Compare)
	addrs = slices.Compact(addrs)
	err := a.add(addrs)
	if err != nil && len(addrs) > 1 {
		errs := make(map[netip.Addr]error, len(addrs))
		for _, ad := range addrs {
			errs[ad] = a.add([]netip.Addr{ad})
		}
		for _, r := range batch {
			r.res <- errs[r.addr]
		}
		return
	}
	for _, r := range batch {
		r.res <- err
	}
}

// add adds addrs in one transaction, creating the table and sets again
// when they have gone, and accepting a single address that a wider
// interval already holds.
func (a *Adder) add(addrs []netip.Addr) error {
	err := a.send(addrs)
	if errors.Is(err, syscall.ENOENT) {
		if e := a.ensure(); e != nil {
			return e
		}
		err = a.send(addrs)
	}
	if err != nil && len(addrs) == 1 && (errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOTEMPTY)) {
		if covered, e := a.covered(addrs[0]); e == nil && covered {
			return nil
		}
	}
	if err != nil {
		what := addrs[0].String()
		if len(addrs) > 1 {
			what = strconv.Itoa(len(addrs)) + " addresses"
		}
		return fmt.Errorf("add %s to table %s: %w", what, a.tableRef(), err)
	}
	return nil
}

func (a *Adder) send(addrs []netip.Addr) error {
	var v4, v6 []nftables.SetElement
	for _, ad := range addrs {
		els := elements(ad, a.cfg.TTL)
		if ad.Is4() {
			v4 = append(v4, els...)
		} else {
			v6 = append(v6, els...)
		}
	}
	for _, s := range []struct {
		set *nftables.Set
		els []nftables.SetElement
	}{{a.set4, v4}, {a.set6, v6}} {
		if len(s.els) == 0 {
			continue
		}
		if err := a.conn.SetAddElements(s.set, s.els); err != nil {
			return err
		}
	}
	a.transactions++
	if err := a.conn.Flush(); err != nil {
		a.redial()
		return err
	}
	return nil
}

// elements returns the interval [addr, addr+1) as nft writes a single
// address into an interval set: a start element with the timeout and an
// end element, left out when addr is the last of its family.
func elements(addr netip.Addr, ttl time.Duration) []nftables.SetElement {
	els := []nftables.SetElement{{Key: addr.AsSlice(), Timeout: ttl}}
	if next := addr.Next(); next.IsValid() {
		els = append(els, nftables.SetElement{Key: next.AsSlice(), IntervalEnd: true})
	}
	return els
}

// covered reports whether an interval of the set already holds addr.
func (a *Adder) covered(addr netip.Addr) (bool, error) {
	s := a.set6
	if addr.Is4() {
		s = a.set4
	}
	els, err := a.conn.GetSetElements(s)
	if err != nil {
		a.redial()
		return false, err
	}
	keys := make([]intervalKey, 0, len(els))
	for _, e := range els {
		if k, ok := netip.AddrFromSlice(e.Key); ok {
			keys = append(keys, intervalKey{k, e.IntervalEnd})
		}
	}
	return intervalsHold(keys, addr), nil
}
