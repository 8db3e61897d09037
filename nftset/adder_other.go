//go:build !linux

package nftset

import (
	"context"
	"net/netip"
	"time"
)

// An Adder adds addresses to the sets; on this system there are none.
type Adder struct{}

// Open checks o and returns ErrUnsupported: nftables is Linux's.
func Open(o Options) (*Adder, error) {
	if _, err := o.config(); err != nil {
		return nil, err
	}
	return nil, ErrUnsupported
}

// Add returns ErrUnsupported, or what CheckAddr refuses.
func (a *Adder) Add(ctx context.Context, addr netip.Addr) error {
	if err := CheckAddr(addr); err != nil {
		return err
	}
	return ErrUnsupported
}

// Close does nothing.
func (a *Adder) Close() error { return nil }

// Unreferenced returns nil.
func (a *Adder) Unreferenced() []string { return nil }

// AddFor returns ErrUnsupported, or what CheckAddr refuses.
func (a *Adder) AddFor(ctx context.Context, addr netip.Addr, ttl time.Duration) error {
	return a.Add(ctx, addr)
}

// Sets reads and takes addresses out of a table's sets; on this system
// there are none.
type Sets struct {
	Options
}

// Members returns ErrUnsupported.
func (s Sets) Members(context.Context) (map[netip.Addr]time.Duration, error) {
	return nil, ErrUnsupported
}

// Remove returns ErrUnsupported.
func (s Sets) Remove(context.Context, []netip.Addr) (map[netip.Addr]Removed, error) {
	return nil, ErrUnsupported
}
