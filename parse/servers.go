package parse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The formats of servers beyond nginx and Apache, as each documents its
// default: HAProxy's "option httplog", Traefik's common log format,
// Envoy's default access log (and Istio's), AWS Application Load
// Balancer logs, W3C extended logs with their #Fields: header (IIS,
// Amazon CloudFront); Caddy's JSON log is read by the JSON reader.

// specFields names the fields of compileSpec.
var specFields = map[string]field{
	"-": fIgnore, "addr": fAddr, "addrport": fAddrPort, "xffclient": fXFFClient, "user": fUser, "ident": fIdent,
	"clf": fTimeCLF, "iso": fTimeISO, "request": fRequest, "method": fMethod, "uri": fURI, "proto": fProto,
	"status": fStatus, "statusopt": fStatusOpt, "bytes": fBytes, "referer": fReferer, "ua": fUA, "host": fHost, "hosthdr": fHostHeader,
	"dur_s": fDurSec, "dur_ms": fDurMsec, "dur_us": fDurUsec, "timer": fDurTimer, "captures": fCaptures, "xff": fXFF,
}

// compileSpec compiles a built-in format written as literals and {name}
// fields (specFields; {-:what} is a field read and ignored, named for
// format test), {t:LAYOUT} for a time in a strftime layout (in
// the reader's zone), or {tutc:LAYOUT} for one in UTC.
func compileSpec(name, src string) *Format {
	f := &Format{name: name}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			f.items = append(f.items, item{isLit: true, lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(src); i++ {
		if src[i] != '{' {
			lit.WriteByte(src[i])
			continue
		}
		end := strings.IndexByte(src[i:], '}')
		if end < 0 {
			panic("parse: built-in format " + name + ": unterminated {")
		}
		spec := src[i+1 : i+end]
		i += end
		flush()
		if l, ok := strings.CutPrefix(spec, "t:"); ok {
			f.items = append(f.items, item{field: fTimeStrf, tl: mustLayout(l, false)})
			continue
		}
		if l, ok := strings.CutPrefix(spec, "tutc:"); ok {
			f.items = append(f.items, item{field: fTimeStrf, tl: mustLayout(l, true)})
			continue
		}
		spec, label, _ := strings.Cut(spec, ":")
		fl, ok := specFields[spec]
		if !ok {
			panic("parse: built-in format " + name + ": unknown field " + spec)
		}
		f.items = append(f.items, item{field: fl, label: label})
	}
	flush()
	if err := f.finish(src); err != nil {
		panic("parse: built-in format " + name + ": " + err.Error())
	}
	f.strictHost = true
	for i := range f.items {
		if it := &f.items[i]; it.field == fHost && it.check == checkNone {
			it.check = checkVhost
		}
	}
	return f
}

var (
	// HAProxy is HAProxy's "option httplog": %ci:%cp [%tr] %ft %b/%s
	// %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC %CS %tsc %ac/%fc/%bc/%sc/%rc %sq/%bq
	// %hr %hs %{+Q}r, where %hr and %hs ("{…}") appear only for the
	// headers "capture request header" and "capture response header"
	// name. The client is %ci; the time (%tr, when the request was
	// received, without an offset) is read in the reader's zone; the
	// duration is %Ta (%Tt before 1.5). The User-Agent is read from the
	// captured headers when one of them starts with a product token: the
	// log does not say which header is which. Usually after a syslog
	// header.
	HAProxy = func() *Format {
		f := compileSpec("haproxy", `{addrport} [{t:%d/%b/%Y:%H:%M:%S%L}] {-:frontend} {-:backend}/{-:server} {-:TR}/{-:Tw}/{-:Tc}/{-:Tr}/{timer} {statusopt} {-:bytes read} {-:request cookie} {-:response cookie} {-:termination state} {-:actconn}/{-:feconn}/{-:beconn}/{-:srv_conn}/{-:retries} {-:srv_queue}/{-:backend_queue} {captures}"{request}"`)
		f.server = "HAProxy"
		return f
	}()

	// Traefik is Traefik's common log format: combined, then the number
	// of requests since it started, the router's name, the server's URL
	// and the duration in milliseconds ("12ms"). The time is when the
	// request started.
	Traefik = func() *Format {
		f := compileSpec("traefik", `{addr} - {user} [{clf}] "{request}" {statusopt} {bytes} "{referer}" "{ua}" {-:requests so far} "{-:router}" "{-:server URL}" {dur_ms}ms`)
		f.server = "Traefik"
		return f
	}()

	// Envoy is Envoy's default access log format:
	// [%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%
	// %PROTOCOL%" %RESPONSE_CODE% %RESPONSE_FLAGS% %BYTES_RECEIVED%
	// %BYTES_SENT% %DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%
	// "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%"
	// "%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%". It logs no connecting
	// address: the client is the last address of X-Forwarded-For, the
	// one Envoy appends at the edge (use_remote_address: true) or the
	// proxy before it appended; without X-Forwarded-For ("-") the
	// request's client is not known.
	Envoy = func() *Format {
		f := compileSpec("envoy", `[{iso}] "{request}" {statusopt} {-:response flags} {-:bytes received} {bytes} {dur_ms} {-:upstream service time} "{xffclient}" "{ua}" "{-:request id}" "{hosthdr}" "{-:upstream host}"`)
		f.server = "Envoy"
		f.note = "Envoy's default format logs no connecting address: each client is the last X-Forwarded-For address, which Envoy appends at the edge (use_remote_address: true); if Envoy is not the edge and the proxy before it is not yours, log %DOWNSTREAM_REMOTE_ADDRESS% instead"
		return f
	}()

	// Istio is the access log of Istio's Envoy sidecars and gateways:
	// Envoy's default with, among others, the downstream remote address
	// (the connecting client, with its port).
	Istio = func() *Format {
		f := compileSpec("istio", `[{iso}] "{request}" {statusopt} {-:response flags} {-:response code details} {-:connection termination details} "{-:upstream transport failure reason}" {-:bytes received} {bytes} {dur_ms} {-:upstream service time} "{xff}" "{ua}" "{-:request id}" "{hosthdr}" "{-:upstream host}" {-:upstream cluster} {-:upstream local address} {-:downstream local address} {addrport} {-:requested server name and route}`)
		f.server = "Istio"
		return f
	}()

	// ALB is the access log of an AWS Application Load Balancer: type,
	// time (when the response was sent), the load balancer, client:port,
	// target:port, three processing times, the two status codes, bytes
	// received and sent, "request", "user agent", then fields AWS adds
	// over time, read and ignored. The site is the host of the request's
	// absolute target.
	ALB = func() *Format {
		f := compileSpec("alb", `{-:type} {iso} {-:elb} {addrport} {-:target:port} {-:request processing time} {-:target processing time} {-:response processing time} {statusopt} {-:target status} {-:received bytes} {bytes} "{request}" "{ua}" {-:ssl cipher, protocol and the fields AWS added}`)
		f.server, f.timeIsEnd, f.hostFromTarget = "AWS ALB", true, true
		return f
	}()
)

// w3cInfo says how a W3C extended log writes its entries.
type w3cInfo struct {
	// fields is the #Fields: line's list; sep the byte between fields.
	fields string
	sep    byte
}

// W3C is a W3C extended log (IIS, Amazon CloudFront): its #Fields:
// directive names the fields of the entries after it, and a reader takes
// them from the input (the first lines, and each later #Fields: line).
var W3C = &Format{name: "w3c", w3c: &w3cInfo{}, timeIsEnd: true}

// w3cField maps a W3C field name (lower case) to a field and how its
// text is encoded.
func w3cField(name string, cloudfront bool) (field, uint8) {
	dec := uint8(decPlus)
	if cloudfront {
		dec = decPercent
	}
	switch name {
	case "c-ip":
		return fAddr, decLog
	case "cs-username":
		return fUser, decLog
	case "cs-method":
		return fMethod, decLog
	case "cs-uri-stem":
		return fPath, decLog
	case "cs-uri-query":
		return fQuery, decLog
	case "cs-uri":
		return fURI, decLog
	case "sc-status":
		return fStatus, decLog
	case "sc-bytes":
		return fBytes, decLog
	case "cs(user-agent)":
		return fUA, dec
	case "cs(referer)", "cs(referrer)":
		return fReferer, dec
	case "x-host-header":
		return fHost, decLog
	case "cs-host", "cs(host)":
		return fHostHeader, decLog
	case "time-taken":
		return fDurAuto, decLog
	case "cs-version", "cs-protocol-version":
		return fProto, decLog
	case "x-forwarded-for", "cs(x-forwarded-for)":
		return fXFF, dec
	case "cs(cf-connecting-ip)":
		return fCFConnectingIP, dec
	case "cs(true-client-ip)":
		return fTrueClientIP, dec
	case "cs(x-real-ip)":
		return fXRealIP, dec
	}
	return fIgnore, decLog
}

// compileW3C compiles the field list of a #Fields: directive, for entries
// whose fields are separated by sep (a space for IIS, a tab for
// CloudFront).
func compileW3C(fields string, sep byte) (*Format, error) {
	names := strings.Fields(strings.ToLower(fields))
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: an empty #Fields: directive", ErrFormat)
	}
	cloudfront := false
	for _, n := range names {
		if strings.HasPrefix(n, "x-edge-") {
			cloudfront = true
		}
	}
	f := &Format{name: "w3c", w3c: &w3cInfo{fields: fields, sep: sep}, timeIsEnd: true, server: "IIS"}
	if cloudfront {
		f.server = "CloudFront"
	}
	for i, n := range names {
		if i > 0 {
			f.items = append(f.items, item{isLit: true, lit: string(sep)})
		}
		switch n {
		case "date":
			f.items = append(f.items, item{field: fTimeStrf, tl: mustLayout("%Y-%m-%d", true)})
			continue
		case "time":
			f.items = append(f.items, item{field: fTimeStrf, tl: mustLayout("%H:%M:%S", true)})
			continue
		}
		fl, dec := w3cField(n, cloudfront)
		f.items = append(f.items, item{field: fl, dec: dec})
	}
	if err := f.finish("#Fields: " + fields); err != nil {
		return nil, err
	}
	return f, nil
}

// w3cDirective returns the field list of a "#Fields:" line, or false.
func w3cFields(line []byte) (string, bool) {
	const p = "#Fields:"
	if len(line) < len(p) || !strings.EqualFold(string(line[:len(p)]), p) {
		return "", false
	}
	return strings.TrimSpace(string(line[len(p):])), true
}

// IsFieldsDirective reports whether line is a W3C extended log's #Fields:
// directive: not a request, but what says how the lines after it are
// read. A reader of selected lines (watch keeps the claimed ones) must
// pass these on too, in their place.
func IsFieldsDirective(line []byte) bool {
	_, ok := w3cFields(bytes.TrimRight(line, "\r"))
	return ok
}

// directiveStep is how many bytes LastFieldsDirective reads at a time
// (tests make it small).
var directiveStep = 1 << 20

// maxDirective is the longest #Fields: line LastFieldsDirective looks
// for; a longer line is no directive a server writes.
const maxDirective = 64 << 10

// LastFieldsDirective returns the last #Fields: directive line in the
// first end bytes of r, or nil when there is none or r does not start as
// a W3C extended log does (with a '#' line): the directive in force where
// reading begins when a W3C log is followed from its end. It reads r
// backwards from end, so a directive near the end is found at once; a log
// of another kind is not read past its first bytes.
func LastFieldsDirective(r io.ReaderAt, end int64) ([]byte, error) {
	if end <= 0 {
		return nil, nil
	}
	var first [1]byte
	if _, err := r.ReadAt(first[:], 0); err != nil {
		return nil, err
	}
	if first[0] != '#' {
		return nil, nil
	}
	step := int64(directiveStep)
	var partial []byte // the end of a line whose start is not read yet
	skip := false      // that line is too long to be a directive
	for hi := end; hi > 0; {
		lo := max(0, hi-step)
		b := make([]byte, hi-lo, hi-lo+int64(len(partial)))
		if _, err := r.ReadAt(b, lo); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		b = append(b, partial...)
		i := len(b)
		if skip {
			// The rest of the line too long to keep.
			if i = bytes.LastIndexByte(b, '\n'); i < 0 {
				if lo == 0 {
					return nil, nil
				}
				hi = lo
				continue
			}
			skip = false
		}
		for {
			j := bytes.LastIndexByte(b[:i], '\n')
			if j < 0 && lo > 0 {
				break
			}
			line := b[j+1 : i]
			if IsFieldsDirective(line) {
				return bytes.Clone(bytes.TrimRight(line, "\r")), nil
			}
			if j < 0 {
				return nil, nil
			}
			i = j
		}
		partial, skip = nil, i > maxDirective
		if !skip {
			partial = bytes.Clone(b[:i])
		}
		hi = lo
	}
	return nil, nil
}
