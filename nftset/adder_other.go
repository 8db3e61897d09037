//go:build !linux

package nftset

import (
	"context"
	"net/netip"
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
