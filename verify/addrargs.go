package verify

import (
	"context"
	"errors"
	"net/netip"

	"github.com/lohisoft/lohibot-audit/internal/aside"
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
