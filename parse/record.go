// Package parse reads web server access logs: the first step of the
// pipeline, before anything knows which crawlers are audited.
//
// The log reader is built for speed: a log format is compiled once into a
// field plan ([Format]), every line is checked against it so that the count
// of malformed lines is exact, and only the lines a caller is interested in
// (those whose User-Agent carries one of the product tokens the caller
// gives, see [TokenSet], or whose client is in the caller's set of listed
// addresses) are
// turned into [Record] values. All other lines are validated without
// allocating.
package parse

import (
	"net/netip"
	"time"
)

// Record is one request read from an access log. Only the fields the log
// format records are set; the others keep their zero value.
type Record struct {
	// File and Line locate the request in its input (Line counts from 1).
	File string
	Line int64

	// Client is the client address the server logged: exactly what
	// net/netip reads from the field, IPv4-mapped addresses unmapped. When
	// the connecting address is a proxy the reader trusts
	// (Options.Trust), Client is the real client read from the logged
	// header instead (ClientFrom says which), and Peer the connecting
	// address. It is the zero Addr only when the field held a host name
	// (Apache's HostnameLookups On), which a reader accepts with a given
	// format only; ClientRaw then keeps the name as logged.
	Client    netip.Addr
	ClientRaw string
	// Peer is the connecting address as logged when Client came from a
	// real-client header; the zero Addr otherwise.
	Peer netip.Addr
	// ClientFrom says which field gave Client: FromAddress (the
	// connecting address), or the real-client header read behind a
	// trusted proxy.
	ClientFrom ClientSource
	// Proxy is true when the connecting address is a trusted proxy but
	// the logged header gave no usable client (absent, not an address, or
	// trusted itself): Client is then the proxy's address, which says
	// nothing of the claimant; such a hit is never judged (verdict
	// unverified, reason proxy). ClientFrom names the header consulted.
	Proxy bool

	// Time is the timestamp as logged. Start and End are when the request
	// began and ended, as far as the log tells: Apache's %t is the start,
	// nginx's $time_local the end, and with a duration field the other end
	// is derived. Without a duration Start and End are both Time.
	Time        time.Time
	Start, End  time.Time
	Duration    time.Duration
	HasDuration bool
	// Resolution is how precise Time is: time.Second for the usual log
	// timestamps, time.Millisecond for nginx's $msec, and so on.
	Resolution time.Duration

	RemoteUser string // "" when logged as "-"

	// Request is the raw request line; Method, Target and Proto are set
	// when it has the usual three parts.
	Request string
	Method  string
	Target  string
	Proto   string

	Status     int   // 0 when not logged
	Bytes      int64 // -1 when logged as "-" or not logged
	Referer    string
	UserAgent  string
	Host       string // the site: virtual host in lower case, port removed
	RetryAfter string // the Retry-After response header, when logged
	// The real-client request headers, when logged ("" for "-").
	XFF            string // X-Forwarded-For
	CFConnectingIP string // CF-Connecting-IP
	TrueClientIP   string // True-Client-IP
	XRealIP        string // X-Real-IP

	// Claims says which crawlers the User-Agent claims to be: bit i is
	// set when it carries a token of group i of the reader's
	// Options.Claims.
	Claims uint64
	// Claimed is true when UserAgent carries a crawler's token (Claims is
	// not 0).
	Claimed bool
}

// Path returns the request target without the scheme and host of an
// absolute-form target (RFC 9112 §3.2.2), or "" when the request line
// could not be split.
func (r *Record) Path() string {
	t := r.Target
	if len(t) > 0 && t[0] != '/' {
		// absolute-form: scheme://host/path
		for i := 0; i+2 < len(t); i++ {
			if t[i] == ':' && t[i+1] == '/' && t[i+2] == '/' {
				rest := t[i+3:]
				for j := 0; j < len(rest); j++ {
					if rest[j] == '/' || rest[j] == '?' {
						if rest[j] == '?' {
							return "/" + rest[j:]
						}
						return rest[j:]
					}
				}
				return "/"
			}
		}
	}
	return t
}
