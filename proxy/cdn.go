package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/lohisoft/lohibot-audit/internal/httpsget"
)

// Names of the built-in CDNs, as --trusted-proxy takes them.
const (
	Cloudflare = "cloudflare"
	Fastly     = "fastly"
	CloudFront = "cloudfront"
	GoogleLB   = "google-lb"
	Bunny      = "bunny"
)

// Private names the private address ranges (RFC 1918 and unique local
// IPv6, fc00::/7) for --trusted-proxy: a reverse proxy of one's own.
const Private = "private"

// CDN is a content delivery network (or a cloud's load balancers) whose
// edge ranges are built in: requests it forwards come from those ranges,
// with the client in a header.
type CDN struct {
	// Name is how --trusted-proxy names it; Title how messages do.
	Name, Title string
	// Header is the request header that carries the client's address
	// when the CDN forwards a request, as log formats name it
	// (nginx $http_<name>, Apache %{Name}i).
	Header string
	// Sources are the lists its ranges are published in.
	Sources []*Source
}

// Source is one published list of a CDN's ranges.
type Source struct {
	// URL is where the list is fetched from; for a CDN that documents
	// its ranges without a list to fetch, the documentation page.
	URL string
	// Fetch is false when the ranges are only documented: the built-in
	// snapshot is then all there is.
	Fetch bool
	// Layout names how the list is written ("text", "fastly-json",
	// "aws-ip-ranges", "json-array").
	Layout string
	// snapshot is the built-in copy's file under snapshot/.
	snapshot string
}

// cdns are the built-in CDNs. Akamai is not among them: it publishes no
// complete list of its edge addresses (only to its customers, per
// property), so an Akamai edge is named with --trusted-proxy CIDR.
var cdns = []*CDN{
	{Name: Cloudflare, Title: "Cloudflare", Header: "CF-Connecting-IP", Sources: []*Source{
		{URL: "https://www.cloudflare.com/ips-v4", Fetch: true, Layout: layoutText, snapshot: "cloudflare-v4.txt"},
		{URL: "https://www.cloudflare.com/ips-v6", Fetch: true, Layout: layoutText, snapshot: "cloudflare-v6.txt"},
	}},
	{Name: Fastly, Title: "Fastly", Header: "X-Forwarded-For", Sources: []*Source{
		{URL: "https://api.fastly.com/public-ip-list", Fetch: true, Layout: layoutFastly, snapshot: "fastly.txt"},
	}},
	{Name: CloudFront, Title: "Amazon CloudFront", Header: "X-Forwarded-For", Sources: []*Source{
		{URL: "https://ip-ranges.amazonaws.com/ip-ranges.json", Fetch: true, Layout: layoutAWS, snapshot: "cloudfront.txt"},
	}},
	{Name: GoogleLB, Title: "Google Cloud load balancers", Header: "X-Forwarded-For", Sources: []*Source{
		{URL: "https://cloud.google.com/load-balancing/docs/firewall-rules", Fetch: false, snapshot: "google-lb.txt"},
	}},
	{Name: Bunny, Title: "Bunny CDN", Header: "X-Forwarded-For", Sources: []*Source{
		{URL: "https://bunnycdn.com/api/system/edgeserverlist", Fetch: true, Layout: layoutJSONArray, snapshot: "bunny-v4.txt"},
		{URL: "https://bunnycdn.com/api/system/edgeserverlist/ipv6", Fetch: true, Layout: layoutJSONArray, snapshot: "bunny-v6.txt"},
	}},
}

// CDNs returns the built-in CDNs, in a fixed order.
func CDNs() []*CDN { return cdns }

// LookupCDN returns the built-in CDN of that name (any case), or nil.
func LookupCDN(name string) *CDN {
	for _, c := range cdns {
		if strings.EqualFold(c.Name, name) {
			return c
		}
	}
	return nil
}

// Names returns the names --trusted-proxy takes: the CDNs' and Private.
func Names() []string {
	out := make([]string, 0, len(cdns)+1)
	for _, c := range cdns {
		out = append(out, c.Name)
	}
	return append(out, Private)
}

// Layouts of the published lists.
const (
	// layoutText is one prefix or address per line (Cloudflare's
	// ips-v4 and ips-v6); blank lines and '#' comments are skipped.
	layoutText = "text"
	// layoutFastly is {"addresses":[…],"ipv6_addresses":[…]} (Fastly's
	// public-ip-list).
	layoutFastly = "fastly-json"
	// layoutAWS is AWS's ip-ranges.json, of which the prefixes of the
	// services CLOUDFRONT and CLOUDFRONT_ORIGIN_FACING are taken.
	layoutAWS = "aws-ip-ranges"
	// layoutJSONArray is a JSON array of addresses or prefixes (Bunny's
	// edge server lists).
	layoutJSONArray = "json-array"
)

// Limits of a published list.
const (
	// MaxListBytes is the largest list accepted: AWS's ip-ranges.json,
	// which holds every AWS service, is about 2.6 MB.
	MaxListBytes = 8 << 20
	// maxPrefixes is the most prefixes one list may name.
	maxPrefixes = 100_000
	// minBits4 and minBits6 are the widest prefixes a CDN list may hold:
	// a list naming a wider one (0.0.0.0/0, say) would make every client
	// a proxy, and is refused whole.
	minBits4, minBits6 = 8, 16
)

// ErrListInvalid means a published list did not parse, or named a range
// no CDN holds; it is rejected whole.
var ErrListInvalid = errors.New("cdn list is not valid")

// ParseList reads a list written in layout (see Source.Layout).
func ParseList(layout string, data []byte) ([]netip.Prefix, error) {
	var entries []string
	switch layout {
	case layoutText:
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || line[0] == '#' {
				continue
			}
			entries = append(entries, line)
		}
	case layoutFastly:
		var v struct {
			Addresses     *[]string `json:"addresses"`
			IPv6Addresses []string  `json:"ipv6_addresses"`
		}
		if err := strictJSON(data, &v); err != nil {
			return nil, err
		}
		if v.Addresses == nil {
			return nil, fmt.Errorf("%w: no \"addresses\"", ErrListInvalid)
		}
		entries = append(*v.Addresses, v.IPv6Addresses...)
	case layoutAWS:
		var v struct {
			Prefixes *[]struct {
				Prefix  string `json:"ip_prefix"`
				Service string `json:"service"`
			} `json:"prefixes"`
			IPv6Prefixes []struct {
				Prefix  string `json:"ipv6_prefix"`
				Service string `json:"service"`
			} `json:"ipv6_prefixes"`
		}
		if err := strictJSON(data, &v); err != nil {
			return nil, err
		}
		if v.Prefixes == nil {
			return nil, fmt.Errorf("%w: no \"prefixes\"", ErrListInvalid)
		}
		for _, p := range *v.Prefixes {
			if awsCloudFront(p.Service) {
				entries = append(entries, p.Prefix)
			}
		}
		for _, p := range v.IPv6Prefixes {
			if awsCloudFront(p.Service) {
				entries = append(entries, p.Prefix)
			}
		}
	case layoutJSONArray:
		if err := strictJSON(data, &entries); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: unknown layout %q", ErrListInvalid, layout)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("%w: it names no range", ErrListInvalid)
	}
	if len(entries) > maxPrefixes {
		return nil, fmt.Errorf("%w: %d entries, the limit is %d", ErrListInvalid, len(entries), maxPrefixes)
	}
	out := make([]netip.Prefix, 0, len(entries))
	for _, e := range entries {
		p, err := parseEntry(e)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// awsCloudFront reports whether an ip-ranges.json service is CloudFront's:
// its edges (CLOUDFRONT) and the addresses it reaches origins from
// (CLOUDFRONT_ORIGIN_FACING).
func awsCloudFront(service string) bool {
	return service == "CLOUDFRONT" || service == "CLOUDFRONT_ORIGIN_FACING"
}

// strictJSON decodes data into v, allowing nothing after the value.
func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %s", ErrListInvalid, httpsget.Shorten(err.Error()))
	}
	if dec.More() {
		return fmt.Errorf("%w: text after the JSON value", ErrListInvalid)
	}
	return nil
}

// parseEntry reads one entry: a prefix, or an address standing for a
// single-address prefix.
func parseEntry(e string) (netip.Prefix, error) {
	s := strings.TrimSpace(e)
	var p netip.Prefix
	if strings.Contains(s, "/") {
		q, err := netip.ParsePrefix(s)
		if err != nil {
			return p, fmt.Errorf("%w: %q is not an address range", ErrListInvalid, httpsget.Shorten(e))
		}
		p = q
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return p, fmt.Errorf("%w: %q is not an address", ErrListInvalid, httpsget.Shorten(e))
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if p.Masked() != p {
		return p, fmt.Errorf("%w: %q has host bits set", ErrListInvalid, httpsget.Shorten(e))
	}
	q, ok := normPrefix(p)
	if !ok || q.Addr().Is4() && q.Bits() < minBits4 || q.Addr().Is6() && q.Bits() < minBits6 {
		return p, fmt.Errorf("%w: %q is wider than any CDN's range (/%d for IPv4, /%d for IPv6)", ErrListInvalid, httpsget.Shorten(e), minBits4, minBits6)
	}
	return q, nil
}
