// Package nftset adds addresses to the nftables sets that emit's nftables
// output declares, live, through netlink: no nft process runs per address.
//
// An Adder creates the table, the two sets (spoofed_v4 and spoofed_v6) and,
// unless Options.SetOnly, the drop chain when they are missing, with the
// same names, types and flags as the file that emit.NFTables writes, so the
// file can be loaded before or after the Adder starts. Each added address
// becomes a single-address interval with the configured timeout; adding it
// again starts its timeout anew.
//
// The package decides nothing about which addresses may be blocked: it
// refuses only values that cannot be an element (see Adder.Add). What may
// never be blocked is emit.Plan's decision, which the caller applies first.
package nftset

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	"github.com/lohisoft/lohibot-audit/emit"
)

// Errors returned by the package, matched with errors.Is.
var (
	// ErrInvalidAddr means the address is not one a set can hold: the zero
	// netip.Addr, an unspecified address (0.0.0.0, ::) or one with a zone.
	ErrInvalidAddr = errors.New("not an address a set can hold")
	// ErrMappedAddr means an IPv4-mapped IPv6 address (::ffff:a.b.c.d); the
	// caller unmaps it first, so that it lands in the IPv4 set where the
	// IPv4 rule matches it.
	ErrMappedAddr = errors.New("IPv4-mapped IPv6 address")
	// ErrBadOption means Options do not describe a usable table.
	ErrBadOption = errors.New("invalid nftables option")
	// ErrClosed means the Adder was closed.
	ErrClosed = errors.New("nftables adder closed")
)

// The names of the sets, as emit's nftables output (mode block-spoofed)
// declares them.
const (
	SetV4 = "spoofed_v4"
	SetV6 = "spoofed_v6"
)

// DefaultMaxBatch is how many addresses one transaction carries at most.
const DefaultMaxBatch = 512

// Options configure an Adder. The zero value gives emit's defaults: table
// inet lohibot, a chain on the input hook at priority filter - 10, elements
// that live 7 days.
type Options struct {
	// NFTOptions are read as emit.NFTables reads them (TTL, Table, SetOnly,
	// Hook, Priority), so the same values give the same table.
	emit.NFTOptions
	// NetNS is a file descriptor of the network namespace to work in; zero
	// means the caller's.
	NetNS int
	// MaxBatch caps the addresses of one transaction; zero means
	// DefaultMaxBatch.
	MaxBatch int
}

// config is Options checked and filled in.
type config struct {
	family   nftables.TableFamily
	table    string
	ttl      time.Duration
	setOnly  bool
	hook     string
	hooknum  nftables.ChainHook
	priority nftables.ChainPriority
	netns    int
	maxBatch int
}

var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// standard priorities of the ip, ip6 and inet families, by name.
var priorityNames = map[string]int{"raw": -300, "mangle": -150, "filter": 0, "security": 50}

func (o Options) config() (config, error) {
	c := config{setOnly: o.SetOnly, netns: o.NetNS, maxBatch: o.MaxBatch}
	if c.maxBatch <= 0 {
		c.maxBatch = DefaultMaxBatch
	}
	c.ttl = o.TTL
	if c.ttl == 0 {
		c.ttl = emit.DefaultTTL
	}
	if _, err := emit.FormatNFTDuration(c.ttl); err != nil {
		return c, fmt.Errorf("%w: %v", ErrBadOption, err)
	}

	table := strings.TrimSpace(o.Table)
	if table == "" {
		table = emit.DefaultNFTTable
	}
	f := strings.Fields(table)
	family := "inet"
	switch len(f) {
	case 1:
		c.table = f[0]
	case 2:
		family, c.table = f[0], f[1]
	default:
		return c, fmt.Errorf("%w: table %q: want FAMILY NAME, such as \"inet lohibot\"", ErrBadOption, o.Table)
	}
	switch family {
	case "inet":
		c.family = nftables.TableFamilyINet
	case "ip":
		c.family = nftables.TableFamilyIPv4
	case "ip6":
		c.family = nftables.TableFamilyIPv6
	default:
		return c, fmt.Errorf("%w: table family %q: use inet, ip or ip6", ErrBadOption, family)
	}
	if !tableName.MatchString(c.table) {
		return c, fmt.Errorf("%w: table name %q: use letters, digits and _", ErrBadOption, c.table)
	}
	if c.setOnly {
		return c, nil
	}
	if c.family != nftables.TableFamilyINet {
		return c, fmt.Errorf("%w: table %q: the drop chain needs family inet; keep only the sets in it instead", ErrBadOption, table)
	}

	c.hook = o.Hook
	switch c.hook {
	case "", "input":
		c.hook, c.hooknum = "input", *nftables.ChainHookInput
	case "prerouting":
		c.hooknum = *nftables.ChainHookPrerouting
	case "forward":
		c.hooknum = *nftables.ChainHookForward
	default:
		return c, fmt.Errorf("%w: hook %q: use input, prerouting or forward", ErrBadOption, o.Hook)
	}
	p, err := emit.ParseNFTPriority(o.Priority)
	if err != nil {
		return c, fmt.Errorf("%w: %v", ErrBadOption, err)
	}
	n, err := priorityNumber(p)
	if err != nil {
		return c, err
	}
	c.priority = nftables.ChainPriority(n)
	return c, nil
}

// priorityNumber turns emit.ParseNFTPriority's result ("-10", "filter",
// "filter - 10") into a number.
func priorityNumber(p string) (int32, error) {
	f := strings.Fields(p)
	bad := fmt.Errorf("%w: priority %q", ErrBadOption, p)
	if len(f) == 1 {
		if n, ok := priorityNames[f[0]]; ok {
			return int32(n), nil
		}
		n, err := strconv.ParseInt(f[0], 10, 32)
		if err != nil {
			return 0, bad
		}
		return int32(n), nil
	}
	if len(f) != 3 {
		return 0, bad
	}
	base, ok := priorityNames[f[0]]
	n, err := strconv.Atoi(f[2])
	if !ok || err != nil {
		return 0, bad
	}
	switch f[1] {
	case "+":
		return int32(base + n), nil
	case "-":
		return int32(base - n), nil
	}
	return 0, bad
}

// CheckAddr reports whether a can go into a set as it is: nil, or an error
// matching ErrInvalidAddr or ErrMappedAddr. It says nothing about whether a
// should be blocked.
func CheckAddr(a netip.Addr) error {
	switch {
	case !a.IsValid():
		return fmt.Errorf("%w: the zero address value", ErrInvalidAddr)
	case a.Zone() != "":
		return fmt.Errorf("%w: %s has a zone", ErrInvalidAddr, a)
	case a.IsUnspecified():
		return fmt.Errorf("%w: %s is unspecified", ErrInvalidAddr, a)
	case a.Is4In6():
		return fmt.Errorf("%w: %s: unmap it to %s first", ErrMappedAddr, a, a.Unmap())
	}
	return nil
}

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
		table:  &nftables.Table{Family: c.family, Name: c.table},
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
		Timeout:    a.cfg.ttl,
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

func (a *Adder) tableRef() string {
	fam := map[nftables.TableFamily]string{nftables.TableFamilyINet: "inet", nftables.TableFamilyIPv4: "ip", nftables.TableFamilyIPv6: "ip6"}[a.cfg.family]
	return fam + " " + a.cfg.table
}

// ensure creates the table, sets and chain where missing, in one
// transaction.
func (a *Adder) ensure() error {
	tables, err := a.conn.ListTablesOfFamily(a.cfg.family)
	if err != nil {
		return fmt.Errorf("list nftables tables: %w", err)
	}
	haveTable := slices.ContainsFunc(tables, func(t *nftables.Table) bool { return t.Name == a.cfg.table })
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
		if !a.cfg.setOnly {
			_, err := a.conn.ListChain(a.table, a.cfg.hook)
			haveChain = err == nil
		}
	}
	if haveTable && haveSet[SetV4] && haveSet[SetV6] && (a.cfg.setOnly || haveChain) {
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
	if !a.cfg.setOnly && !haveChain {
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
		Name:     a.cfg.hook,
		Table:    a.table,
		Type:     nftables.ChainTypeFilter,
		Hooknum:  &a.cfg.hooknum,
		Priority: &a.cfg.priority,
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
		els := elements(ad, a.cfg.ttl)
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
	return intervalsHold(els, addr), nil
}

// intervalsHold reports whether the interval set elements els (start keys
// and end keys, in any order) hold addr: the nearest key at or below addr
// is a start. At one key an end sorts before a start, as [a, b) and [b, c)
// meet there.
func intervalsHold(els []nftables.SetElement, addr netip.Addr) bool {
	type key struct {
		addr netip.Addr
		end  bool
	}
	keys := make([]key, 0, len(els))
	for _, e := range els {
		k, ok := netip.AddrFromSlice(e.Key)
		if !ok || k.BitLen() != addr.BitLen() {
			continue
		}
		keys = append(keys, key{k, e.IntervalEnd})
	}
	slices.SortFunc(keys, func(x, y key) int {
		if c := x.addr.Compare(y.addr); c != 0 {
			return c
		}
		// end (true) before start (false)
		return -cmp.Compare(b2i(x.end), b2i(y.end))
	})
	held := false
	for _, k := range keys {
		if k.addr.Compare(addr) > 0 {
			break
		}
		held = !k.end
	}
	return held
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
