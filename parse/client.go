package parse

import (
	"net/netip"
	"strconv"

	"github.com/lohisoft/lohibot-audit/proxy"
)

// ClientSource says which field of a log line gave a record's client.
type ClientSource uint8

// The fields a client is read from. The real-client headers are read
// only when the connecting address is a proxy the reader trusts, and in
// this order: the first one the format logs and the request carries
// decides (X-Forwarded-For first: walked from the right, it cannot be
// forged past a trusted proxy that appends to it).
const (
	FromAddress        ClientSource = iota // the connecting address ($remote_addr, %h, %a)
	FromXForwardedFor                      // X-Forwarded-For, walked from the right past trusted proxies
	FromCFConnectingIP                     // CF-Connecting-IP
	FromTrueClientIP                       // True-Client-IP
	FromXRealIP                            // X-Real-IP
	numClientSources
)

var clientSourceNames = [numClientSources]string{"address", "x-forwarded-for", "cf-connecting-ip", "true-client-ip", "x-real-ip"}

// String names the field as reports do: "address", "x-forwarded-for",
// "cf-connecting-ip", "true-client-ip", "x-real-ip".
func (c ClientSource) String() string {
	if c < numClientSources {
		return clientSourceNames[c]
	}
	return "unknown"
}

// clientSourceOf is the source a field gives, or FromAddress for a field
// that is no real-client header.
func clientSourceOf(f field) ClientSource {
	switch f {
	case fXFF, fXFFClient:
		return FromXForwardedFor
	case fCFConnectingIP:
		return FromCFConnectingIP
	case fTrueClientIP:
		return FromTrueClientIP
	case fXRealIP:
		return FromXRealIP
	}
	return FromAddress
}

// RealClientFields returns the real-client headers the format logs, in
// the order they are read.
func (f *Format) RealClientFields() []ClientSource {
	var out []ClientSource
	for c, fl := range [...]field{fXFF, fCFConnectingIP, fTrueClientIP, fXRealIP} {
		if f.json || f.has[fl] || fl == fXFF && f.has[fXFFClient] {
			out = append(out, ClientSource(c+1))
		}
	}
	return out
}

// headerClient walks a real-client header's value as nginx's realip
// module does with real_ip_recursive on: from the right, past the
// addresses trust names as proxies; the first one that is not is the
// client. A single-valued header (CF-Connecting-IP) is a list of one. An
// element that is no address (a forged "unknown", an escape, a host name)
// ends the walk without a client, and so does a list of trusted proxies
// only: the request is then a proxy's, never judged. An element may carry
// a port ("192.0.2.7:51234", "[2001:db8::7]:443"), as some proxies write
// it.
func headerClient[T string | []byte](trust *proxy.Set, v T) (netip.Addr, bool) {
	end := len(v)
	for end > 0 {
		start := end - 1
		for start >= 0 && v[start] != ',' {
			start--
		}
		a, ok := headerAddr(v[start+1 : end])
		if !ok {
			return netip.Addr{}, false
		}
		if !trust.InTrusted(a) {
			return a, true
		}
		end = start
	}
	return netip.Addr{}, false
}

// headerAddr reads one element of a real-client header: an address, with
// spaces around it and an optional port; IPv4-mapped addresses unmapped.
func headerAddr[T string | []byte](e T) (netip.Addr, bool) {
	i, j := 0, len(e)
	for i < j && (e[i] == ' ' || e[i] == '\t') {
		i++
	}
	for j > i && (e[j-1] == ' ' || e[j-1] == '\t') {
		j--
	}
	e = e[i:j]
	if len(e) == 0 {
		return netip.Addr{}, false
	}
	if e[0] == '[' {
		// [v6] or [v6]:port
		k := 1
		for k < len(e) && e[k] != ']' {
			k++
		}
		if k == len(e) || k+1 < len(e) && (e[k+1] != ':' || !allDigitsT(e[k+2:])) {
			return netip.Addr{}, false
		}
		e = e[1:k]
	} else if n := countByte(e, ':'); n == 1 {
		// v4:port
		k := 0
		for e[k] != ':' {
			k++
		}
		if !allDigitsT(e[k+1:]) {
			return netip.Addr{}, false
		}
		e = e[:k]
	}
	var a netip.Addr
	if b, ok := any(e).([]byte); ok {
		if x, ok := parseIPv4(b); ok {
			return x, true
		}
		if countByte(b, ':') < 2 {
			return netip.Addr{}, false
		}
		var err error
		if a, err = netip.ParseAddr(string(b)); err != nil {
			return netip.Addr{}, false
		}
	} else {
		var err error
		if a, err = netip.ParseAddr(string(e)); err != nil {
			return netip.Addr{}, false
		}
	}
	if a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

func countByte[T string | []byte](e T, c byte) int {
	n := 0
	for i := 0; i < len(e); i++ {
		if e[i] == c {
			n++
		}
	}
	return n
}

func allDigitsT[T string | []byte](e T) bool {
	if len(e) == 0 || len(e) > 5 {
		return false
	}
	for i := 0; i < len(e); i++ {
		if e[i] < '0' || e[i] > '9' {
			return false
		}
	}
	return true
}

// realClient applies the trust walk to a record whose connecting address
// (rec.Client) is a trusted proxy: the first real-client header the
// format logs and the request carries gives the client (Peer keeps the
// proxy); when none gives one, the record is a proxy's (Proxy).
func (p *lineParser) realClient(rec *Record) {
	peer := rec.Client
	for c, v := range [...]string{rec.XFF, rec.CFConnectingIP, rec.TrueClientIP, rec.XRealIP} {
		if v == "" {
			continue
		}
		rec.ClientFrom = ClientSource(c + 1)
		if a, ok := headerClient(p.trust, v); ok {
			rec.Client, rec.ClientRaw, rec.Peer = a, a.String(), peer
			return
		}
		rec.Proxy = true
		return
	}
	rec.Proxy = true
	if fs := p.f.RealClientFields(); len(fs) > 0 {
		rec.ClientFrom = fs[0]
	}
}

// What a client field holds.
type clientKind uint8

const (
	clientBad  clientKind = iota // neither an address nor a host name
	clientIP                     // an IP address literal, as netip.ParseAddr reads it
	clientName                   // a host name (Apache's HostnameLookups On)
	clientPort                   // an address or a name followed by ":port"
)

// classifyClient tells what a client field holds, without allocating. An
// IP literal is exactly what netip.ParseAddr accepts (dotted quads without
// leading zeros, IPv6 in any of its forms, a zone after '%'); a host name
// is a fully qualified DNS name, or "localhost"; anything with a port, in
// brackets or not, is not a client.
func classifyClient(b []byte) clientKind {
	if len(b) == 0 {
		return clientBad
	}
	if validIPv4(b) {
		return clientIP
	}
	if validIPv6Text(b) {
		return clientIP
	}
	if validHostName(b) {
		return clientName
	}
	if hasPort(b) {
		return clientPort
	}
	return clientBad
}

// clientReason returns why b is not a client field, or "" when it is one.
// ipOnly refuses host names.
func clientReason(b []byte, ipOnly bool) string {
	switch classifyClient(b) {
	case clientIP:
		return ""
	case clientName:
		if !ipOnly {
			return ""
		}
		return "client " + strconv.Quote(clip(b)) + " is a host name, not an IP address (host names are read only with a given log format)"
	case clientPort:
		return "client address " + strconv.Quote(clip(b)) + " has a port; no log format writes one there (a virtual host before the client?)"
	}
	return "bad client address " + strconv.Quote(clip(b))
}

// validIPv4 reports whether b is a dotted quad as netip.ParseAddr reads
// it (no leading zeros), without building the address.
func validIPv4(b []byte) bool {
	i := 0
	for part := 0; part < 4; part++ {
		if part > 0 {
			if i >= len(b) || b[i] != '.' {
				return false
			}
			i++
		}
		if i >= len(b) || b[i]-'0' > 9 {
			return false
		}
		first := b[i] - '0'
		i++
		if i < len(b) && b[i]-'0' <= 9 {
			if first == 0 {
				return false // a leading zero
			}
			v := int(first)*10 + int(b[i]-'0')
			i++
			if i < len(b) && b[i]-'0' <= 9 {
				if v*10+int(b[i]-'0') > 255 {
					return false
				}
				i++
			}
		}
	}
	return i == len(b)
}

// hasPort reports whether b is an address or a host name followed by
// ":port", a port being up to 65535: "192.0.2.1:80", "[2001:db8::1]:443",
// "example.com:8080".
func hasPort(b []byte) bool {
	i := len(b) - 1
	for i >= 0 && b[i] >= '0' && b[i] <= '9' {
		i--
	}
	if i <= 0 || i == len(b)-1 || b[i] != ':' || len(b)-i-1 > 5 {
		return false
	}
	port := 0
	for _, c := range b[i+1:] {
		port = port*10 + int(c-'0')
	}
	if port > 65535 {
		return false
	}
	host := b[:i]
	if host[0] == '[' && host[len(host)-1] == ']' {
		return validIPv6Text(host[1 : len(host)-1])
	}
	_, ok := parseIPv4(host)
	return ok || validHostName(host)
}

// validHostName accepts a fully qualified host name as a resolver returns
// it: labels of letters, digits, '-' and '_' (1 to 63 bytes, not starting
// or ending with '-'), at least two of them, the last one not all digits,
// at most 253 bytes, an optional trailing dot; or "localhost". A single
// word (a syslog month, a tag) is not taken for a client.
func validHostName(b []byte) bool {
	if len(b) > 0 && b[len(b)-1] == '.' {
		b = b[:len(b)-1]
	}
	if len(b) == 0 || len(b) > 253 {
		return false
	}
	if equalFoldASCII(b, "localhost") {
		return true
	}
	labels, start, letterInLast := 0, 0, false
	for i := 0; i <= len(b); i++ {
		if i < len(b) && b[i] != '.' {
			c := b[i]
			switch {
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
				letterInLast = true
			case c >= '0' && c <= '9', c == '-':
			default:
				return false
			}
			continue
		}
		n := i - start
		if n == 0 || n > 63 || b[start] == '-' || b[i-1] == '-' {
			return false
		}
		labels++
		if i < len(b) {
			start, letterInLast = i+1, false
		}
	}
	return labels >= 2 && letterInLast
}

// equalFoldASCII reports whether b is lower, in any mix of ASCII case.
func equalFoldASCII(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range b {
		if lowerASCII(b[i]) != lower[i] {
			return false
		}
	}
	return true
}

// validIPv6Text reports whether netip.ParseAddr reads b as an IPv6
// address: hex groups of at most four digits, at most one "::" standing
// for at least one group, an optional dotted quad in place of the last two
// groups, and an optional non-empty zone after '%'. The zone may hold
// letters, digits, '-', '_' and '.' (interface names and numbers) only.
func validIPv6Text(b []byte) bool {
	for i, c := range b {
		if c == '%' {
			zone := b[i+1:]
			if len(zone) == 0 {
				return false
			}
			for _, z := range zone {
				if !(z >= 'a' && z <= 'z' || z >= 'A' && z <= 'Z' || z >= '0' && z <= '9' || z == '-' || z == '_' || z == '.') {
					return false
				}
			}
			b = b[:i]
			break
		}
	}
	groups := 0 // 16-bit groups read, a dotted quad counting two
	ellipsis := false
	s := b
	if len(s) >= 2 && s[0] == ':' && s[1] == ':' {
		ellipsis = true
		s = s[2:]
		if len(s) == 0 {
			return true // "::"
		}
	}
	for groups < 8 {
		n := 0
		for n < len(s) && n < 5 && isHex(s[n]) {
			n++
		}
		if n == 0 || n > 4 {
			return false
		}
		if n < len(s) && s[n] == '.' {
			// An embedded IPv4 address ends the text and fills two groups.
			if !ellipsis && groups != 6 || groups > 6 {
				return false
			}
			if _, ok := parseIPv4(s); !ok {
				return false
			}
			groups += 2
			s = nil
			break
		}
		groups++
		s = s[n:]
		if len(s) == 0 {
			break
		}
		if s[0] != ':' || len(s) == 1 {
			return false
		}
		s = s[1:]
		if s[0] == ':' {
			if ellipsis {
				return false
			}
			ellipsis = true
			s = s[1:]
			if len(s) == 0 {
				break
			}
		}
	}
	if len(s) != 0 {
		return false
	}
	if ellipsis {
		return groups < 8 // "::" stands for at least one group of zeros
	}
	return groups == 8
}
