package parse

import "strconv"

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
// ":digits": "192.0.2.1:80", "[2001:db8::1]:443", "example.com:8080".
func hasPort(b []byte) bool {
	i := len(b) - 1
	for i >= 0 && b[i] >= '0' && b[i] <= '9' {
		i--
	}
	if i <= 0 || i == len(b)-1 || b[i] != ':' || len(b)-i-1 > 5 {
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
