// Package nftset adds addresses to nftables sets live, through netlink: no
// nft process runs per address.
//
// An Adder creates what is missing of the table that emit's nftables
// output declares, with the same names, types and flags, so that the file
// can be loaded before or after the Adder starts: the interval sets
// spoofed_v4 and spoofed_v6 that the file fills with prefixes and, unless
// Options.SetOnly, the drop chain. To these it adds two sets of its own,
// spoofed_live_v4 and spoofed_live_v6, and (unless SetOnly) a drop rule
// for each in the same chain. The Adder puts every address into these.
//
// Why sets of its own: the kernel keeps an interval set as a tree that
// each transaction's commit walks whole (Linux 6.18 rebuilds its lookup
// array from it), so adding one address to an interval set of a million
// takes about 0.2 s, however few it adds; and a set that emit's file fills
// with prefixes must be an interval set. The live sets hold single
// addresses only: without the interval flag the kernel makes them hash
// tables, where adding costs the same whatever the set holds (tens of
// microseconds a transaction). Each element has the configured timeout;
// adding it again starts the timeout anew. With SetOnly the rules are
// yours: refer to all four sets (Adder.Unreferenced says which no rule
// refers to).
//
// Loading emit's file without SetOnly replaces the whole table, live sets
// and their elements with it; the Adder makes the live sets and their
// rules again at its next add.
//
// The package decides nothing about which addresses may be blocked: it
// refuses only values that cannot be an element (see Adder.Add). What may
// never be blocked is emit.Plan's decision, which the caller applies first.
package nftset

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

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
	// ErrUnsupported means the system has no nftables (not Linux).
	ErrUnsupported = errors.New("nftables is only on Linux")
)

// The names of the sets: the interval sets of emit's nftables output (mode
// block-spoofed), and the hash sets the Adder adds addresses to.
const (
	SetV4  = "spoofed_v4"
	SetV6  = "spoofed_v6"
	LiveV4 = "spoofed_live_v4"
	LiveV6 = "spoofed_live_v6"
)

// Removed is what Sets.Remove did to one address.
type Removed struct {
	// Sets names the sets the address was taken out of.
	Sets []string
	// Covered is a wider range of emit's interval set that holds the
	// address ("192.0.2.0/24", "192.0.2.5-192.0.2.9"); it is left there.
	Covered string
}

// DefaultMaxBatch is how many addresses one transaction carries at most.
const DefaultMaxBatch = 2048

// maxMessage is how many elements one netlink message carries at most: a
// message's element list is one attribute, whose length has 16 bits.
const maxMessage = 512

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

// config is Options checked and filled in: emit's NFTConfig, the same
// table, sets and chain as the file of emit.NFTables, and the Adder's own.
type config struct {
	emit.NFTConfig
	priority int32 // NFTConfig.Priority as a number
	netns    int
	maxBatch int
}

// standard priorities of the ip, ip6 and inet families, by name.
var priorityNames = map[string]int{"raw": -300, "mangle": -150, "filter": 0, "security": 50}

func (o Options) config() (config, error) {
	c := config{netns: o.NetNS, maxBatch: o.MaxBatch}
	if c.maxBatch <= 0 {
		c.maxBatch = DefaultMaxBatch
	}
	nc, err := o.NFTOptions.Config()
	if err != nil {
		return c, fmt.Errorf("%w: %v", ErrBadOption, strings.TrimPrefix(err.Error(), emit.ErrBadOption.Error()+": "))
	}
	c.NFTConfig = nc
	if c.SetOnly {
		return c, nil
	}
	n, err := priorityNumber(nc.Priority)
	if err != nil {
		return c, err
	}
	c.priority = n
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
