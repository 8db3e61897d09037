package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"

	"github.com/lohisoft/lohibot-audit/internal/aside"
	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// ErrNoAddrs is AddrArgs' error for a standard input that holds no
// address.
var ErrNoAddrs = errors.New("no addresses on stdin")

// StdinError is AddrArgs' error for a standard input that cannot be read,
// or holds a line that is not an address (Err is then an *AddrListError).
type StdinError struct{ Err error }

func (e *StdinError) Error() string { return e.Err.Error() }
func (e *StdinError) Unwrap() error { return e.Err }

// AddrArgs parses the addresses of args, "-" standing for those of stdin,
// one a line (ReadAddrList): unmapped, deduplicated and sorted
// (ParseAddrs, whose error it returns). Stdin is read aside: when ctx ends
// first, AddrArgs returns ctx's error without waiting for a pipe that
// never ends.
func AddrArgs(ctx context.Context, args []string, stdin func() ([]string, error)) ([]netip.Addr, error) {
	var all []string
	for _, s := range args {
		if s != "-" {
			all = append(all, s)
			continue
		}
		type read struct {
			lines []string
			err   error
		}
		got, err := aside.Do(ctx, func() read {
			lines, err := stdin()
			return read{lines, err}
		})
		if err != nil {
			return nil, err
		}
		if got.err != nil {
			return nil, &StdinError{Err: got.err}
		}
		all = append(all, got.lines...)
	}
	if len(all) == 0 {
		return nil, ErrNoAddrs
	}
	return ParseAddrs(all)
}

// ReadAddrArgs is AddrArgs for a command line whose "-" is stdin, read
// one address a line (ReadAddrList), with its errors worded for the user:
// a bad line of stdin, no address on it, or a bad argument is a usage
// error (fail.Usage) with what to give instead; stdin that cannot be read
// is fail.Incomplete. When ctx ends first, the error is ctx's.
func ReadAddrArgs(ctx context.Context, args []string, stdin io.Reader) ([]netip.Addr, error) {
	addrs, err := AddrArgs(ctx, args, func() ([]string, error) { return ReadAddrList(stdin) })
	var se *StdinError
	var bad *AddrListError
	switch {
	case err == nil:
		return addrs, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.As(err, &se) && errors.As(se.Err, &bad):
		return nil, fail.Hinted(fmt.Errorf("stdin: %w", se.Err),
			"give one IPv4 or IPv6 address a line, without port or zone; # starts a comment")
	case errors.As(err, &se):
		return nil, fail.New(fail.Incomplete, fmt.Errorf("cannot read addresses from stdin: %w", se.Err), "")
	case errors.Is(err, ErrNoAddrs):
		return nil, fail.Usagef("no addresses on stdin: give one IP address a line")
	}
	return nil, fail.Hinted(err,
		"give IPv4 or IPv6 addresses without port or zone, such as 79.139.58.98 or 2001:db8::1")
}
