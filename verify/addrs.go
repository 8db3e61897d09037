package verify

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"

	"github.com/lohisoft/lohibot-audit/parse"
)

// maxBadLines is how many bad lines an *AddrListError names.
const maxBadLines = 5

// AddrListError is the error of ReadAddrList for lines that are not an
// address: the first few, by line number, and how many there were.
type AddrListError struct {
	// Lines are the first bad lines as `line N: "text"`, the text escaped
	// and cut at 60 bytes.
	Lines []string
	// Count is how many lines were bad.
	Count int
}

func (e *AddrListError) Error() string {
	more := ""
	if e.Count > len(e.Lines) {
		more = fmt.Sprintf(" and %d more", e.Count-len(e.Lines))
	}
	return fmt.Sprintf("not an IP address on %s%s", strings.Join(e.Lines, ", "), more)
}

// ReadAddrList reads addresses written one a line, as a list of
// addresses to verify is: blank lines and comments (# to the end of the
// line) are skipped, and an address with a zone is not one. Lines that
// are not an address are an *AddrListError; an error reading r is
// returned as it is. The addresses come as written.
func ReadAddrList(r io.Reader) ([]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	var out []string
	var bad AddrListError
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if a, err := netip.ParseAddr(line); err != nil || a.Zone() != "" {
			bad.Count++
			if len(bad.Lines) < maxBadLines {
				bad.Lines = append(bad.Lines, fmt.Sprintf("line %d: %q", n, parse.EscapeControl(clip(line, 60))))
			}
			continue
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if bad.Count > 0 {
		return nil, &bad
	}
	return out, nil
}

// clip cuts s to at most n bytes, at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// NotAddrError is the error of ParseAddrs for a value that is not an
// address to verify.
type NotAddrError struct{ Value string }

func (e *NotAddrError) Error() string { return fmt.Sprintf("%q is not an IP address", e.Value) }

// ParseAddrs parses addresses to verify: unmapped, without duplicates,
// sorted. A value that is not an address, or has a zone, is a
// *NotAddrError.
func ParseAddrs(values []string) ([]netip.Addr, error) {
	seen := map[netip.Addr]bool{}
	var addrs []netip.Addr
	for _, s := range values {
		a, err := netip.ParseAddr(strings.TrimSpace(s))
		if err != nil || a.Zone() != "" {
			return nil, &NotAddrError{Value: s}
		}
		a = a.Unmap()
		if !seen[a] {
			seen[a] = true
			addrs = append(addrs, a)
		}
	}
	slices.SortFunc(addrs, netip.Addr.Compare)
	return addrs, nil
}
