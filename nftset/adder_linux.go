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
	set4, set6   *nftables.Set // emit's interval sets
	live4, live6 *nftables.Set // the hash sets adds go to
	unreferenced []string      // as Open found them
}

type request struct {
	addr netip.Addr
	ttl  time.Duration // zero: the configured one
	res  chan error
}

// Open checks o, connects to nftables and creates what is missing of the
// table, the four sets and (unless o.SetOnly) the chain with its four drop
// rules. An existing table, set, chain or rule is left as it is. Errors
// wrap the kernel's (errors.Is(err, os.ErrPermission) without
// CAP_NET_ADMIN).
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
	a.live4 = a.newLiveSet(LiveV4, nftables.TypeIPAddr)
	a.live6 = a.newLiveSet(LiveV6, nftables.TypeIP6Addr)
	if err := a.dial(); err != nil {
		return nil, err
	}
	if err := a.ensure(); err != nil {
		a.conn.CloseLasting()
		return nil, err
	}
	if a.unreferenced, err = a.findUnreferenced(); err != nil {
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

// newLiveSet is a set of single addresses with a timeout, as nft makes
// "type ipv4_addr; flags timeout; timeout 7d": no interval flag, so the
// kernel keeps it as a hash table.
func (a *Adder) newLiveSet(name string, t nftables.SetDatatype) *nftables.Set {
	return &nftables.Set{
		Table:      a.table,
		Name:       name,
		KeyType:    t,
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

// ensure creates the table, sets, chain and rules where missing, in one
// transaction.
func (a *Adder) ensure() error {
	tables, err := a.conn.ListTablesOfFamily(a.table.Family)
	if err != nil {
		return fmt.Errorf("list nftables tables: %w", err)
	}
	haveTable := slices.ContainsFunc(tables, func(t *nftables.Table) bool { return t.Name == a.cfg.Table })
	haveSet := map[string]bool{}
	var chain *nftables.Chain
	haveRule := map[string]bool{}
	if haveTable {
		sets, err := a.conn.GetSets(a.table)
		if err != nil {
			return fmt.Errorf("list sets of table %s: %w", a.tableRef(), err)
		}
		for _, s := range sets {
			haveSet[s.Name] = true
		}
		if !a.cfg.SetOnly {
			if ch, err := a.conn.ListChain(a.table, a.cfg.Hook); err == nil {
				chain = ch
				if haveRule, err = a.lookups(ch); err != nil {
					return err
				}
			}
		}
	}
	missing := false
	for _, s := range a.sets() {
		missing = missing || !haveSet[s.Name] || (!a.cfg.SetOnly && !haveRule[s.Name])
	}
	if haveTable && !missing && (a.cfg.SetOnly || chain != nil) {
		return nil
	}
	a.conn.AddTable(a.table)
	for _, s := range a.sets() {
		if haveSet[s.Name] {
			continue
		}
		if err := a.conn.AddSet(s, nil); err != nil {
			return fmt.Errorf("add set %s to table %s: %w", s.Name, a.tableRef(), err)
		}
	}
	if !a.cfg.SetOnly {
		if chain == nil {
			chain = a.addChain()
		} else {
			chain.Table = a.table
		}
		a.addRules(chain, haveRule)
	}
	if err := a.conn.Flush(); err != nil {
		a.redial()
		return fmt.Errorf("create table %s and its sets: %w", a.tableRef(), err)
	}
	return nil
}

// sets are the four sets, emit's first.
func (a *Adder) sets() []*nftables.Set { return []*nftables.Set{a.set4, a.set6, a.live4, a.live6} }

// lookups returns the names of the sets that rules of ch look addresses
// up in.
func (a *Adder) lookups(ch *nftables.Chain) (map[string]bool, error) {
	rules, err := a.conn.GetRules(a.table, ch)
	if err != nil {
		return nil, fmt.Errorf("list rules of chain %s in table %s: %w", ch.Name, a.tableRef(), err)
	}
	out := map[string]bool{}
	for _, r := range rules {
		for _, e := range r.Exprs {
			if l, ok := e.(*expr.Lookup); ok && !l.Invert {
				out[l.SetName] = true
			}
		}
	}
	return out, nil
}

// Unreferenced returns the names of the sets the Adder adds to
// (spoofed_live_v4, spoofed_live_v6) that no rule of the table looked
// addresses up in when Open returned: with Options.SetOnly the rules are
// the user's, and an address in a set no rule refers to is not blocked.
// Without SetOnly, Open adds the rules and Unreferenced returns nil.
func (a *Adder) Unreferenced() []string { return a.unreferenced }

// findUnreferenced finds what Unreferenced returns.
func (a *Adder) findUnreferenced() ([]string, error) {
	chains, err := a.conn.ListChainsOfTableFamily(a.table.Family)
	if err != nil {
		return nil, fmt.Errorf("list chains of table %s: %w", a.tableRef(), err)
	}
	used := map[string]bool{}
	for _, ch := range chains {
		if ch.Table == nil || ch.Table.Name != a.cfg.Table {
			continue
		}
		l, err := a.lookups(ch)
		if err != nil {
			return nil, err
		}
		for name := range l {
			used[name] = true
		}
	}
	var out []string
	for _, s := range []*nftables.Set{a.live4, a.live6} {
		if !used[s.Name] {
			out = append(out, s.Name)
		}
	}
	return out, nil
}

// addChain queues the base chain of emit's file and returns it:
//
//	chain input {
//		type filter hook input priority filter - 10; policy accept;
//	}
func (a *Adder) addChain() *nftables.Chain {
	accept := nftables.ChainPolicyAccept
	return a.conn.AddChain(&nftables.Chain{
		Name:     a.cfg.Hook,
		Table:    a.table,
		Type:     nftables.ChainTypeFilter,
		Hooknum:  hooks[a.cfg.Hook],
		Priority: nftables.ChainPriorityRef(nftables.ChainPriority(a.cfg.priority)),
		Policy:   &accept,
	})
}

// addRules queues the drop rules that ch lacks (have names the sets its
// rules refer to): emit's two, then one for each live set.
//
//	ip saddr @spoofed_v4 counter drop
//	ip6 saddr @spoofed_v6 counter drop
//	ip saddr @spoofed_live_v4 counter drop
//	ip6 saddr @spoofed_live_v6 counter drop
func (a *Adder) addRules(ch *nftables.Chain, have map[string]bool) {
	for _, s := range a.sets() {
		if have[s.Name] {
			continue
		}
		proto, offset, n := byte(unix.NFPROTO_IPV4), uint32(12), uint32(4)
		if s.KeyType.Name == nftables.TypeIP6Addr.Name {
			proto, offset, n = unix.NFPROTO_IPV6, 8, 16
		}
		a.conn.AddRule(&nftables.Rule{
			Table: a.table,
			Chain: ch,
			Exprs: []expr.Any{
				&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
				&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{proto}},
				&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: offset, Len: n},
				&expr.Lookup{SourceRegister: 1, SetName: s.Name, SetID: s.ID},
				&expr.Counter{},
				&expr.Verdict{Kind: expr.VerdictDrop},
			},
		})
	}
}

// Add puts addr into the live IPv4 or IPv6 set with the configured
// timeout and returns when the kernel has taken it, or with an error for
// this address alone. An address already in the set gets its timeout
// started anew; what emit's interval sets hold is neither looked at nor
// changed. The table, sets, chain and rules are created again when they
// have gone (nft flush ruleset, or emit's file loaded, say).
//
// Add refuses what CheckAddr refuses. When ctx ends first, Add returns
// ctx.Err(); the address may still be added.
func (a *Adder) Add(ctx context.Context, addr netip.Addr) error {
	return a.AddFor(ctx, addr, 0)
}

// AddFor is Add with the element living ttl instead of the configured
// timeout (zero: the configured one): a block made again after a restart
// lasts what it had left. ttl is cut to whole milliseconds, the kernel's
// unit, and is at least one.
func (a *Adder) AddFor(ctx context.Context, addr netip.Addr, ttl time.Duration) error {
	if err := CheckAddr(addr); err != nil {
		return err
	}
	if ttl < 0 {
		ttl = 0
	}
	if ttl > 0 {
		ttl = max(ttl.Truncate(time.Millisecond), time.Millisecond)
	}
	r := &request{addr: addr, ttl: ttl, res: make(chan error, 1)}
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
	addrs := make([]element, 0, len(batch))
	for _, r := range batch {
		ttl := r.ttl
		if ttl == 0 {
			ttl = a.cfg.TTL
		}
		addrs = append(addrs, element{r.addr, ttl})
	}
	// One element per address, with the longest timeout asked.
	slices.SortFunc(addrs, func(x, y element) int {
		if c := x.addr.Compare(y.addr); c != 0 {
			return c
		}
		return int(y.ttl - x.ttl)
	})
	addrs = slices.CompactFunc(addrs, func(x, y element) bool { return x.addr == y.addr })
	err := a.add(addrs)
	if err != nil && len(addrs) > 1 {
		errs := make(map[netip.Addr]error, len(addrs))
		for _, ad := range addrs {
			errs[ad.addr] = a.add([]element{ad})
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

// element is an address to add and the timeout it gets.
type element struct {
	addr netip.Addr
	ttl  time.Duration
}

// add adds addrs in one transaction, creating the table and sets again
// when they have gone.
func (a *Adder) add(addrs []element) error {
	err := a.send(addrs)
	if errors.Is(err, syscall.ENOENT) {
		if e := a.ensure(); e != nil {
			return e
		}
		err = a.send(addrs)
	}
	if err != nil {
		what := addrs[0].addr.String()
		if len(addrs) > 1 {
			what = strconv.Itoa(len(addrs)) + " addresses"
		}
		return fmt.Errorf("add %s to table %s: %w", what, a.tableRef(), err)
	}
	return nil
}

func (a *Adder) send(addrs []element) error {
	var v4, v6 []nftables.SetElement
	for _, ad := range addrs {
		el := nftables.SetElement{Key: ad.addr.AsSlice(), Timeout: ad.ttl}
		if ad.addr.Is4() {
			v4 = append(v4, el)
		} else {
			v6 = append(v6, el)
		}
	}
	for _, s := range []struct {
		set *nftables.Set
		els []nftables.SetElement
	}{{a.live4, v4}, {a.live6, v6}} {
		for els := s.els; len(els) > 0; {
			n := min(len(els), maxMessage)
			if err := a.conn.SetAddElements(s.set, els[:n]); err != nil {
				return err
			}
			els = els[n:]
		}
	}
	a.transactions++
	if err := a.conn.Flush(); err != nil {
		a.redial()
		return err
	}
	return nil
}
