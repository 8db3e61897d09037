package verify

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/addrset"
	"github.com/lohisoft/lohibot-audit/internal/httpsget"
	"github.com/lohisoft/lohibot-audit/internal/ipfmt"
)

// Errors about the crawler's IP list. Callers match them with errors.Is.
var (
	// ErrIPListInvalid means the list did not parse: it is rejected whole.
	ErrIPListInvalid = errors.New("ip list is not valid")
	// ErrIPListEmpty means the list parsed but names no address.
	ErrIPListEmpty = errors.New("ip list is empty")
	// ErrIPListTooLarge means the list is over IPListMaxBytes.
	ErrIPListTooLarge = errors.New("ip list is too large")
	// ErrIPListRedirect means the server answered with a redirect, which is
	// never followed: the crawler's operator serves the list without one.
	ErrIPListRedirect = errors.New("ip list server redirects")
	// ErrIPListNotHTTPS means a URL other than https:// was given.
	ErrIPListNotHTTPS = errors.New("ip list url is not https")
	// ErrIPListHTTPStatus means the server answered neither 200 nor 304.
	ErrIPListHTTPStatus = errors.New("ip list server answered with an error status")
)

// Limits on the IP list.
const (
	// IPListMaxBytes is the largest list accepted (1 MiB).
	IPListMaxBytes = 1 << 20
	// IPListMaxPrefixes is the most prefixes a list may hold.
	IPListMaxPrefixes = 10000
	// ipListMinBits4 and ipListMinBits6 are the widest prefixes accepted: a
	// crawler's range is never a large part of the Internet, and a list that
	// says otherwise would make every impostor look genuine.
	ipListMinBits4 = 16
	ipListMinBits6 = 32
)

// Sources of an IP list other than a URL or a file path.
const (
	IPListSourceBuiltin = "built-in"
)

// IPList is the set of addresses the crawler's operator publishes. The zero
// value holds no prefix and contains nothing.
type IPList struct {
	// Prefixes are sorted, deduplicated and masked; single addresses are
	// /32 or /128 prefixes. IPv4-mapped IPv6 addresses are stored as IPv4.
	Prefixes []netip.Prefix
	// CreationTime is the list's own creationTime, zero when it has none.
	CreationTime time.Time
	// Source is where the list came from: a URL, a file path, or
	// IPListSourceBuiltin, or IPListSourceNone for no list at all.
	Source string
	// Missing says why there is no list, when Source is
	// IPListSourceNone ("offline and never fetched; run ...").
	Missing string
	// Fetched is when the list was fetched from Source (or last confirmed
	// unchanged with a 304); zero for the built-in list and for files.
	Fetched time.Time
	// Snapshot, for a list from a built-in snapshot (crawler.SnapshotOf:
	// none fetched or cached), is the day it was known to be published
	// so; the oldest of them for a union. Zero otherwise.
	Snapshot time.Time
	// SHA256 is the hex SHA-256 of the list as its source served it (or
	// as the file holds it): evidence that names the very list that
	// decided. Empty for the built-in list.
	SHA256 string
	// Parts are the lists of a union (several sources of one crawler),
	// each with its own source, times and digest; nil for one list.
	Parts []*IPList
}

// Each returns the lists l is made of: its Parts, or l itself.
func (l *IPList) Each() []*IPList {
	if l == nil {
		return nil
	}
	if len(l.Parts) > 0 {
		return l.Parts
	}
	return []*IPList{l}
}

// Contains reports whether a (after unmapping an IPv4-mapped IPv6 address)
// is covered by one of the list's prefixes. A nil list and an invalid
// address contain nothing. Each call builds the list's set of ranges: for
// many lookups, build an addrset.Set of Prefixes once, as a Verifier does.
func (l *IPList) Contains(a netip.Addr) bool {
	if l == nil || !a.IsValid() {
		return false
	}
	return addrset.New(l.Prefixes).Contains(a.Unmap().WithZone(""))
}

// String returns the prefixes, comma separated.
func (l *IPList) String() string {
	if l == nil {
		return ""
	}
	parts := make([]string, len(l.Prefixes))
	for i, p := range l.Prefixes {
		parts[i] = ipfmt.Prefix(p)
	}
	return strings.Join(parts, ", ")
}

// ipListJSON is the object layout of the list: the "prefixes" layout the
// big search engines publish, or {"ips": [...]}.
type ipListJSON struct {
	CreationTime json.RawMessage   `json:"creationTime"`
	Prefixes     []json.RawMessage `json:"prefixes"`
	IPs          []json.RawMessage `json:"ips"`
}

type ipListPrefixJSON struct {
	IPv4Prefix *string `json:"ipv4Prefix"`
	IPv6Prefix *string `json:"ipv6Prefix"`
}

// ParseIPList parses the crawler's IP list. Three layouts are accepted:
//
//	{"creationTime": "…", "prefixes": [{"ipv4Prefix": "79.139.58.98/32"}, {"ipv6Prefix": "2001:db8::/64"}]}
//	["79.139.58.98", "79.139.58.0/24"]
//	{"ips": ["79.139.58.98", "79.139.58.0/24"]}
//
// Entries are addresses or CIDR prefixes without host bits set. The list is
// rejected whole (ErrIPListInvalid) on any bad entry, on a prefix wider than
// /16 (IPv4) or /32 (IPv6), on more than IPListMaxPrefixes entries, or on
// trailing data; ErrIPListEmpty when it names nothing; ErrIPListTooLarge
// over IPListMaxBytes. Unknown object keys are ignored. Source and Fetched
// of the result are left for the caller to fill in.
func ParseIPList(data []byte) (*IPList, error) {
	if len(data) > IPListMaxBytes {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrIPListTooLarge, len(data), IPListMaxBytes)
	}
	sum := sha256.Sum256(data)
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: no JSON at all", ErrIPListInvalid)
	}
	var entries []ipListEntry
	list := &IPList{}
	switch data[0] {
	case '[':
		var arr []json.RawMessage
		if err := ipDecodeStrict(data, &arr); err != nil {
			return nil, err
		}
		if len(arr) > IPListMaxPrefixes {
			return nil, fmt.Errorf("%w: %d entries, the limit is %d", ErrIPListInvalid, len(arr), IPListMaxPrefixes)
		}
		for i, raw := range arr {
			s, err := ipEntryString(raw, fmt.Sprintf("entry %d", i+1))
			if err != nil {
				return nil, err
			}
			entries = append(entries, ipListEntry{text: s, where: fmt.Sprintf("entry %d", i+1)})
		}
	case '{':
		var obj ipListJSON
		if err := ipDecodeStrict(data, &obj); err != nil {
			return nil, err
		}
		if obj.Prefixes == nil && obj.IPs == nil {
			return nil, fmt.Errorf("%w: the object has neither \"prefixes\" nor \"ips\"", ErrIPListInvalid)
		}
		if n := len(obj.Prefixes) + len(obj.IPs); n > IPListMaxPrefixes {
			return nil, fmt.Errorf("%w: %d entries, the limit is %d", ErrIPListInvalid, n, IPListMaxPrefixes)
		}
		if len(obj.CreationTime) > 0 && string(obj.CreationTime) != "null" {
			t, err := ipParseCreationTime(obj.CreationTime)
			if err != nil {
				return nil, err
			}
			list.CreationTime = t
		}
		for i, raw := range obj.Prefixes {
			where := fmt.Sprintf("prefixes[%d]", i)
			var p ipListPrefixJSON
			if err := json.Unmarshal(raw, &p); err != nil || bytes.TrimSpace(raw)[0] != '{' {
				return nil, fmt.Errorf("%w: %s is not an object with ipv4Prefix or ipv6Prefix", ErrIPListInvalid, where)
			}
			switch {
			case p.IPv4Prefix != nil && p.IPv6Prefix != nil:
				return nil, fmt.Errorf("%w: %s has both ipv4Prefix and ipv6Prefix", ErrIPListInvalid, where)
			case p.IPv4Prefix != nil:
				entries = append(entries, ipListEntry{text: *p.IPv4Prefix, where: where, want4: true})
			case p.IPv6Prefix != nil:
				entries = append(entries, ipListEntry{text: *p.IPv6Prefix, where: where, want6: true})
			default:
				return nil, fmt.Errorf("%w: %s has neither ipv4Prefix nor ipv6Prefix", ErrIPListInvalid, where)
			}
		}
		for i, raw := range obj.IPs {
			where := fmt.Sprintf("ips[%d]", i)
			s, err := ipEntryString(raw, where)
			if err != nil {
				return nil, err
			}
			entries = append(entries, ipListEntry{text: s, where: where})
		}
	default:
		return nil, fmt.Errorf("%w: want a JSON object or array", ErrIPListInvalid)
	}
	for _, e := range entries {
		p, err := e.prefix()
		if err != nil {
			return nil, err
		}
		list.Prefixes = append(list.Prefixes, p)
	}
	if len(list.Prefixes) == 0 {
		return nil, ErrIPListEmpty
	}
	slices.SortFunc(list.Prefixes, ipComparePrefix)
	list.Prefixes = slices.Compact(list.Prefixes)
	list.SHA256 = hex.EncodeToString(sum[:])
	return list, nil
}

// ipListEntry is one address or prefix of a list, before it is checked.
type ipListEntry struct {
	text, where  string
	want4, want6 bool
}

func (e ipListEntry) prefix() (netip.Prefix, error) {
	s := strings.TrimSpace(e.text)
	bad := func(why string) error {
		return fmt.Errorf("%w: %s %q %s", ErrIPListInvalid, e.where, httpsget.Shorten(e.text), why)
	}
	var p netip.Prefix
	if strings.Contains(s, "/") {
		var err error
		p, err = netip.ParsePrefix(s)
		if err != nil {
			return p, bad("is not an address or CIDR prefix")
		}
		if p.Addr().Is4In6() {
			return p, bad("is an IPv4-mapped IPv6 prefix: write it as IPv4")
		}
		if p != p.Masked() {
			return p, bad(fmt.Sprintf("has host bits set (the prefix is %s)", p.Masked()))
		}
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return p, bad("is not an address or CIDR prefix")
		}
		a = a.Unmap()
		p = netip.PrefixFrom(a, a.BitLen())
	}
	switch {
	case e.want4 && !p.Addr().Is4():
		return p, bad("is in ipv4Prefix but is not IPv4")
	case e.want6 && !p.Addr().Is6():
		return p, bad("is in ipv6Prefix but is not IPv6")
	case p.Addr().Is4() && p.Bits() < ipListMinBits4:
		return p, bad(fmt.Sprintf("is wider than /%d", ipListMinBits4))
	case p.Addr().Is6() && p.Bits() < ipListMinBits6:
		return p, bad(fmt.Sprintf("is wider than /%d", ipListMinBits6))
	}
	return p, nil
}

func ipComparePrefix(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return a.Bits() - b.Bits()
}

// ipDecodeStrict decodes exactly one JSON value from data into v.
func ipDecodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %s", ErrIPListInvalid, httpsget.Shorten(err.Error()))
	}
	if len(bytes.TrimSpace(data[dec.InputOffset():])) > 0 {
		return fmt.Errorf("%w: data after the JSON value", ErrIPListInvalid)
	}
	return nil
}

func ipEntryString(raw json.RawMessage, where string) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%w: %s is not a string", ErrIPListInvalid, where)
	}
	return s, nil
}

// ipCreationLayouts are the creationTime forms seen in published lists; a
// time without a zone is UTC.
var ipCreationLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
}

func ipParseCreationTime(raw json.RawMessage) (time.Time, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return time.Time{}, fmt.Errorf("%w: creationTime is not a string", ErrIPListInvalid)
	}
	s = strings.TrimSpace(s)
	for _, layout := range ipCreationLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%w: creationTime %q is not an RFC 3339 time", ErrIPListInvalid, httpsget.Shorten(s))
}
