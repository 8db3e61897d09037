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
	"errors"
	"fmt"
	"net/netip"
	"slices"
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

// intervalKey is a key of an interval set: the start of an interval, or
// the first address past its end.
type intervalKey struct {
	addr netip.Addr
	end  bool
}

// intervalsHold reports whether the interval set keys (in any order) hold
// addr: the nearest key at or below addr is a start. At one key an end
// sorts before a start, as [a, b) and [b, c) meet there. Keys of the other
// IP version are ignored.
func intervalsHold(keys []intervalKey, addr netip.Addr) bool {
	keys = slices.DeleteFunc(slices.Clone(keys), func(k intervalKey) bool { return k.addr.BitLen() != addr.BitLen() })
	slices.SortFunc(keys, func(x, y intervalKey) int {
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
