package parse

import (
	"errors"
	"fmt"
	"strings"
)

// field is what a part of a log line holds.
type field uint8

const (
	fIgnore         field = iota // any text, not used
	fAddr                        // client address
	fUser                        // remote user
	fTimeCLF                     // 02/Jan/2006:15:04:05 -0700
	fTimeISO                     // 2006-01-02T15:04:05-07:00
	fTimeSec                     // seconds since the epoch
	fTimeMsec                    // seconds.milliseconds since the epoch (nginx $msec)
	fTimeMsecInt                 // milliseconds since the epoch (Apache %{msec}t)
	fTimeUsecInt                 // microseconds since the epoch (Apache %{usec}t)
	fRequest                     // request line
	fMethod                      // request method
	fURI                         // path with query
	fPath                        // path without query
	fQuery                       // query, with or without the leading '?'
	fProto                       // protocol
	fStatus                      // status code
	fBytes                       // bytes sent
	fReferer                     // Referer header
	fUA                          // User-Agent header
	fHost                        // virtual host (best)
	fHostHeader                  // Host header (used when no virtual host field)
	fDurSec                      // duration in seconds, fractions allowed (nginx $request_time, Apache %T)
	fDurMsec                     // duration in milliseconds (Apache %{ms}T)
	fDurUsec                     // duration in microseconds (Apache %D, %{us}T)
	fRetryAfter                  // Retry-After response header
	fXFF                         // X-Forwarded-For request header
	fTimeAny                     // JSON only: a time in any of the layouts above
	fIdent                       // Apache %l: the identd answer, almost always "-"
	fTimeStrf                    // a time in a strftime layout (item.tl): Apache %{FORMAT}t, HAProxy, W3C
	fFracMsec                    // Apache %{msec_frac}t: the milliseconds of the time
	fFracUsec                    // Apache %{usec_frac}t: the microseconds of the time
	fAddrPort                    // the client address and its port: 192.0.2.1:51234 (HAProxy, AWS ALB)
	fXFFClient                   // X-Forwarded-For whose last address is the client (Envoy's default format logs no other)
	fCaptures                    // HAProxy's captured headers: "{…} " groups, none to two
	fDurTimer                    // HAProxy's total time in milliseconds: digits, "+" and digits, or -1
	fDurAuto                     // W3C time-taken: milliseconds (IIS), or seconds with a fraction (CloudFront)
	fStatusOpt                   // a status, or -1, 0 or "-" for none (HAProxy, Envoy, AWS ALB)
	fCFConnectingIP              // CF-Connecting-IP request header (Cloudflare)
	fTrueClientIP                // True-Client-IP request header (Akamai, Cloudflare Enterprise)
	fXRealIP                     // X-Real-IP request header (set by many reverse proxies)
	numFields
)

var fieldNames = [numFields]string{
	fIgnore: "ignored", fAddr: "client address", fUser: "remote user", fTimeCLF: "time",
	fTimeISO: "time", fTimeSec: "time", fTimeMsec: "time", fTimeMsecInt: "time", fTimeUsecInt: "time",
	fRequest: "request", fMethod: "method", fURI: "request uri", fPath: "path", fQuery: "query",
	fProto: "protocol", fStatus: "status", fBytes: "bytes", fReferer: "referer",
	fUA: "user agent", fHost: "virtual host", fHostHeader: "host header", fDurSec: "request time",
	fDurMsec: "request time", fDurUsec: "request time", fRetryAfter: "retry-after", fXFF: "x-forwarded-for", fTimeAny: "time",
	fIdent: "remote logname", fTimeStrf: "time", fFracMsec: "milliseconds", fFracUsec: "microseconds",
	fAddrPort: "client address:port", fXFFClient: "x-forwarded-for", fCaptures: "captured headers",
	fDurTimer: "request time", fDurAuto: "request time", fStatusOpt: "status",
	fCFConnectingIP: "cf-connecting-ip", fTrueClientIP: "true-client-ip", fXRealIP: "x-real-ip",
}

func (f field) isTime() bool { return f >= fTimeCLF && f <= fTimeUsecInt || f == fTimeAny }

// isText reports whether the field is free text (kept as a string) rather
// than a number or a time.
func (f field) isText() bool {
	switch f {
	case fAddr, fUser, fRequest, fMethod, fURI, fPath, fQuery, fProto, fReferer, fUA, fHost, fHostHeader, fRetryAfter, fXFF, fIgnore, fIdent,
		fAddrPort, fXFFClient, fCaptures, fCFConnectingIP, fTrueClientIP, fXRealIP:
		return true
	}
	return false
}

// item is one step of a field plan: a literal to match, or a field to read.
type item struct {
	lit    string // literal text (when field is not set)
	isLit  bool
	field  field
	quoted bool // the field sits between '"' literals: its end is the first unescaped '"'
	pos    int  // position in the format string, for errors
	tl     *timeLayout
	// label names a field read and ignored, for format test.
	label string
	// dec says how the field's text is encoded when not as Apache and
	// nginx escape it (dec*).
	dec uint8

	// Set by finish, for the line parser:
	step  uint8 // how to match this item (step*)
	delim byte  // stepUntil: the first byte of the next literal
	width int   // stepUntil, stepUntilLit: the field's usual width, or 0
	check uint8 // how the field's text is validated (check*)
}

// How the line parser validates a field's text.
const (
	checkNone      = iota // any text
	checkField            // validField: numbers, times
	checkClient           // an IP address literal (or a host name, when allowed)
	checkUser             // a remote user: spaces only where no field was shifted in
	checkIdent            // Apache's %l: anything but an IP address
	checkVhost            // a virtual host of a built-in format: a host name or address, with an optional port
	checkAddrPort         // an IP address and a port
	checkXFFClient        // an X-Forwarded-For list whose last entry is an IP address
)

// How a field's text is encoded.
const (
	decLog     = iota // Apache's and nginx's escapes (\xHH, \")
	decPlus           // IIS: '+' for a space, and %XX
	decPercent        // CloudFront: %XX
	decHash           // HAProxy: #XX
)

// How the line parser matches an item.
const (
	stepLit1       = iota // a one-byte literal
	stepLit               // a longer literal
	stepLastQuoted        // a quoted field followed only by its closing literal
	stepQuoted            // a quoted field: up to the first unescaped '"'
	stepUntil             // an unquoted field: up to the next literal, one byte long
	stepUntilLit          // an unquoted field: up to the next literal, longer than a byte
	stepRest              // the last item: a field running to the end of the line
	stepTime              // a time read by its layout (item.tl)
	stepBraces            // HAProxy's captured headers: "{…} " groups, none or more
)

// Format is a compiled log format: a plan of literals and fields that a
// line is matched against from left to right. The zero Format is not
// usable; get one from [CompileNginx], [CompileApache], [LookupFormat] or
// [ParseFormatSpec]. A Format is immutable and safe for concurrent use.
type Format struct {
	name  string
	json  bool
	items []item
	// header is the prefix every line starts with, which comes off
	// before the format is matched: a syslog header (RFC 3164 or RFC
	// 5424) or a container runtime's prefix; headerNone for none.
	header headerKind
	// base is the format without the header, for a format with one.
	base *Format
	// strictHost makes the virtual host field hold a host name or an
	// address, with an optional port: set for the built-in formats, so
	// that detection cannot take another field for it.
	strictHost bool
	// timeIsEnd is true when the logged time is when the response was
	// logged (nginx), false when it is when the request arrived (Apache %t).
	timeIsEnd bool
	has       [numFields]bool
	// uaItem and addrItem are the plan positions of the User-Agent and
	// client address fields, or -1; realItems those of the real-client
	// header fields, by ClientSource (-1: not logged).
	uaItem, addrItem int
	realItems        [numClientSources]int
	// uaSpecial says the User-Agent item needs uaText: HAProxy's captured
	// headers, or an encoding other than the servers' escapes.
	uaSpecial bool
	// hasDur is true when lines log a request duration: the start or end
	// derived from it must be a time a report can carry, too.
	hasDur bool
	// splitTime is true when the time comes in parts (strftime layouts,
	// fractions) that are put together per line; zoneless when it may be
	// read without a UTC offset, in the reader's Location.
	splitTime, zoneless bool
	// post is true when a line that matched is checked further (a
	// duration, a time in parts).
	post bool
	// hostFromTarget takes the site from an absolute-form request target
	// when no host field gives it (AWS ALB logs "GET http://host:80/ …").
	hostFromTarget bool
	// server names the server whose own format this is ("HAProxy",
	// "Envoy"), for messages; "" for nginx's and Apache's.
	server string
	// note is said once in the report of an input read in this format.
	note string
	// caddy makes a JSON format take Caddy's access log only: a
	// "request" object on every line.
	caddy bool
	// w3c is set for a W3C extended log's format, which its #Fields:
	// line defines and which changes where another one comes.
	w3c *w3cInfo
}

// Name is how the format is shown in reports: "combined", "json",
// "syslog+combined", "nginx:<string>" and so on. A name is also a valid
// --log-format value that reads the same lines.
func (f *Format) Name() string { return f.name }

// Syslog reports whether the lines of this format start with a syslog
// header (see [ParseFormatSpec]).
func (f *Format) Syslog() bool { return f.header == headerSyslog }

// Prefixed reports whether the lines of this format start with a prefix
// that comes off first: a syslog header or a container runtime's prefix.
func (f *Format) Prefixed() bool { return f.header != headerNone }

// HasHost reports whether lines in this format record the site.
func (f *Format) HasHost() bool {
	return f.json || f.has[fHost] || f.has[fHostHeader]
}

// HasUserAgent reports whether lines record the User-Agent; without it no
// request can be seen claiming to be the crawler.
func (f *Format) HasUserAgent() bool { return f.json || f.has[fUA] || f.has[fCaptures] }

// NeedsZone reports whether the format logs a time without a UTC offset,
// which the reader reads in Options.Location.
func (f *Format) NeedsZone() bool { return f.zoneless }

// Note is what the report should say once about an input read in this
// format ("" for most): how its client is found when that is not the
// usual address field.
func (f *Format) Note() string { return f.note }

// Built-in formats (the names accepted by --log-format). The virtual host
// of the vhost formats is one field that may carry a port: Debian writes
// Apache's vhost_combined as "%v:%p %h …", openSUSE as "%v %h …", and
// nginx users log "$host $remote_addr …" or "$server_name:$server_port …".
const (
	apacheCommon        = `%h %l %u %t "%r" %>s %b`
	apacheCombined      = `%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"`
	apacheVhostCommon   = `%v %h %l %u %t "%r" %>s %b`
	apacheVhostCombined = `%v %h %l %u %t "%r" %>s %O "%{Referer}i" "%{User-Agent}i"`
	nginxMain           = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" "$http_x_forwarded_for"`
)

var (
	// Common is the Common Log Format: %h %l %u %t "%r" %>s %b.
	Common = mustNamed("common", CompileApache, apacheCommon)
	// Combined is the combined format of Apache and nginx: Common plus
	// the quoted Referer and User-Agent.
	Combined = mustNamed("combined", CompileApache, apacheCombined)
	// VhostCommon is Common after a virtual host, with or without a port:
	// Apache's vhost_common, %v %h %l %u %t "%r" %>s %b.
	VhostCommon = mustNamed("vhost_common", CompileApache, apacheVhostCommon)
	// VhostCombined is Combined after a virtual host, with or without a
	// port: Apache's vhost_combined as Debian (%v:%p) and openSUSE (%v)
	// write it, and nginx's "$host $remote_addr - …" variants.
	VhostCombined = mustNamed("vhost_combined", CompileApache, apacheVhostCombined)
	// NginxMain is the "main" format of nginx's sample configuration:
	// combined with X-Forwarded-For at the end.
	NginxMain = mustNamed("nginx_main", CompileNginx, nginxMain)
	// JSON is JSON lines with keys named after nginx variables.
	JSON = &Format{name: "json", json: true, timeIsEnd: true}
	// Caddy is Caddy's JSON access log: the request in a nested object
	// with the headers as arrays, the client request.client_ip (the
	// connecting request.remote_ip, or remote_addr before 2.7, when it
	// is missing), ts and duration in seconds.
	Caddy = &Format{name: "caddy", json: true, timeIsEnd: true, caddy: true, server: "Caddy"}
)

// autoCandidates are the formats auto-detection tries, most specific
// first; each is also tried after a syslog header. A tie goes to the
// earlier one.
var autoCandidates = []*Format{Caddy, JSON, Traefik, HAProxy, ALB, Istio, Envoy, VhostCombined, VhostCommon, NginxMain, Combined, Common}

// DetectableFormats returns the names auto-detection can choose from, in
// the order it prefers them; each may also come as "syslog+NAME".
func DetectableFormats() []string {
	names := make([]string, len(autoCandidates))
	for i, f := range autoCandidates {
		names[i] = f.name
	}
	return names
}

func mustNamed(name string, compile func(string) (*Format, error), s string) *Format {
	f, err := compile(s)
	if err != nil {
		panic("parse: built-in format " + name + ": " + err.Error())
	}
	f.name = name
	f.strictHost = true
	for i := range f.items {
		if it := &f.items[i]; it.field == fHost && it.check == checkNone {
			it.check = checkVhost
		}
	}
	return f
}

// headerKind is the prefix in front of every line of a format.
type headerKind uint8

const (
	headerNone headerKind = iota
	// headerSyslog: a syslog header (see syslogHeaderLen).
	headerSyslog
	// headerContainer: a container runtime's prefix (see
	// containerHeaderLen).
	headerContainer
)

// headers are the prefixes a format may be read after, in the order
// detection prefers them.
var headers = [...]headerKind{headerSyslog, headerContainer}

// prefix is how a format's name says it is read after the header.
func (h headerKind) prefix() string {
	switch h {
	case headerSyslog:
		return "syslog+"
	case headerContainer:
		return "container+"
	}
	return ""
}

// length returns the length of the header at the start of line, or -1.
func (h headerKind) length(line []byte) int {
	if h == headerSyslog {
		return syslogHeaderLen(line)
	}
	return containerHeaderLen(line)
}

// withHeader returns f read after header h.
func withHeader(f *Format, h headerKind) *Format {
	if f.header == h {
		return f
	}
	if f.header != headerNone {
		f = f.base
	}
	s := *f
	s.header, s.base, s.name = h, f, h.prefix()+f.name
	return &s
}

// withSyslog returns f read after a syslog header.
func withSyslog(f *Format) *Format { return withHeader(f, headerSyslog) }

// ErrFormat is wrapped by every error about a format string.
var ErrFormat = errors.New("invalid log format")

// FormatError is an error in a format string, with the byte position.
type FormatError struct {
	Format string
	Pos    int
	Msg    string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("log format %q: %s at position %d", e.Format, e.Msg, e.Pos+1)
}

func (e *FormatError) Unwrap() error { return ErrFormat }

// ParseFormatSpec resolves a --log-format value: "auto" gives (nil, nil)
// (detect per file), a built-in name gives that format, and "nginx:…" or
// "apache:…" compiles the string after the colon.
//
// Built-in names: common (alias clf), combined, vhost_common,
// vhost_combined, nginx_main (alias main), json (alias jsonl), caddy,
// haproxy, traefik, envoy, istio, alb (alias aws_alb) and w3c (aliases
// iis, cloudfront: the fields come from the log's #Fields: directive);
// and the presets followed by extra fields, such as combined+sec (see
// buildExtended).
//
// Any of these may be preceded by "syslog+" (syslog+combined,
// syslog+nginx:…) for lines that each start with a syslog header: RFC 3164
// ("<PRI>Mmm dd hh:mm:ss HOST TAG: ", as nginx's access_log syslog: and
// rsyslog write it, also without <PRI>, HOST or TAG, or with an RFC 3339
// time), RFC 5424 ("<PRI>1 TIMESTAMP HOST APP PROCID MSGID SD "), or
// journalctl's short, short-precise, short-iso, short-iso-precise and
// short-full output. Likewise "container+" (container+combined) for lines
// that each start with a container runtime's prefix: Kubernetes' CRI
// ("TIME stdout F "), `docker compose logs` ("web-1  | ") and `docker logs
// --timestamps` ("TIME "). Without the prefix, a Reader still notices such
// headers in the first lines and reads past them.
func ParseFormatSpec(spec string) (*Format, error) {
	switch spec {
	case "", "auto":
		return nil, nil
	}
	for _, h := range headers {
		rest, ok := strings.CutPrefix(spec, h.prefix())
		if !ok {
			continue
		}
		switch rest {
		case "", "auto":
			return nil, fmt.Errorf("%w: %q: name the format after %q, such as %scombined (auto-detection finds these prefixes by itself)", ErrFormat, spec, h.prefix(), h.prefix())
		}
		f, err := ParseFormatSpec(rest)
		if err != nil {
			return nil, err
		}
		if f.header != headerNone {
			return nil, fmt.Errorf("%w: %q: a line has one prefix, %q or %q", ErrFormat, spec, headerSyslog.prefix(), headerContainer.prefix())
		}
		return withHeader(f, h), nil
	}
	if f := LookupFormat(spec); f != nil {
		return f, nil
	}
	if f, ok, err := parseExtended(spec); ok {
		return f, err
	}
	if s, ok := strings.CutPrefix(spec, "nginx:"); ok {
		return CompileNginx(s)
	}
	if s, ok := strings.CutPrefix(spec, "apache:"); ok {
		return CompileApache(s)
	}
	return nil, fmt.Errorf("%w: unknown --log-format %q: use auto, %s, a preset with extra fields (combined+sec), 'nginx:<log_format>' or 'apache:<LogFormat>', each optionally after 'syslog+' or 'container+'", ErrFormat, spec, strings.Join(FormatNames(), ", "))
}

// FormatNames returns the names of the built-in formats.
func FormatNames() []string {
	return []string{"common", "combined", "vhost_common", "vhost_combined", "nginx_main", "json", "caddy", "haproxy", "traefik", "envoy", "istio", "alb", "w3c"}
}

// LookupFormat returns the built-in format with that name, or nil. The
// names are those of [ParseFormatSpec], without "syslog+".
func LookupFormat(name string) *Format {
	switch strings.ToLower(name) {
	case "common", "clf":
		return Common
	case "combined":
		return Combined
	case "vhost_common":
		return VhostCommon
	case "vhost_combined":
		return VhostCombined
	case "nginx_main", "main":
		return NginxMain
	case "json", "jsonl":
		return JSON
	case "caddy":
		return Caddy
	case "haproxy":
		return HAProxy
	case "traefik":
		return Traefik
	case "envoy":
		return Envoy
	case "istio":
		return Istio
	case "alb", "aws_alb":
		return ALB
	case "w3c", "iis", "cloudfront":
		return W3C
	}
	return nil
}

// nginxVars maps nginx variables to fields; other variables are read and
// ignored.
var nginxVars = map[string]field{
	// $realip_remote_addr is the proxy's address when the realip module
	// rewrote $remote_addr to the client's: it is read and ignored.
	"remote_addr": fAddr,
	"remote_user": fUser,
	"time_local":  fTimeCLF, "time_iso8601": fTimeISO, "msec": fTimeMsec,
	"request": fRequest, "request_method": fMethod, "request_uri": fURI,
	"uri": fPath, "document_uri": fPath, "args": fQuery, "query_string": fQuery,
	"server_protocol": fProto,
	"status":          fStatus,
	"body_bytes_sent": fBytes, "bytes_sent": fBytes,
	"http_referer": fReferer, "http_user_agent": fUA,
	"host": fHost, "server_name": fHost, "http_host": fHostHeader,
	"request_time":          fDurSec,
	"sent_http_retry_after": fRetryAfter,
	"http_x_forwarded_for":  fXFF,
	"http_cf_connecting_ip": fCFConnectingIP,
	"http_true_client_ip":   fTrueClientIP,
	"http_x_real_ip":        fXRealIP,
}

// literal gathers the literal text between a format string's fields.
type literal struct {
	b   strings.Builder
	pos int // of its first byte in the format
}

func (l *literal) add(c byte, at int) {
	if l.b.Len() == 0 {
		l.pos = at
	}
	l.b.WriteByte(c)
}

// flush ends the literal, as f's next item when there is one.
func (l *literal) flush(f *Format) {
	if l.b.Len() > 0 {
		f.items = append(f.items, item{isLit: true, lit: l.b.String(), pos: l.pos})
		l.b.Reset()
	}
}

// CompileNginx compiles an nginx log_format string. The string may be
// given as in nginx.conf, as one or more quoted strings ('…' '…'), and
// may start with escape=default|json|none.
func CompileNginx(s string) (*Format, error) {
	src := s
	body, err := nginxUnquote(s)
	if err != nil {
		return nil, err
	}
	f := &Format{name: "nginx:" + src, timeIsEnd: true}
	var lit literal
	flush := func() { lit.flush(f) }
	for i := 0; i < len(body); {
		c := body[i]
		if c != '$' {
			lit.add(c, i)
			i++
			continue
		}
		start := i
		i++
		var name string
		if i < len(body) && body[i] == '{' {
			end := strings.IndexByte(body[i:], '}')
			if end < 0 {
				return nil, &FormatError{Format: src, Pos: start, Msg: "unterminated ${"}
			}
			name = body[i+1 : i+end]
			i += end + 1
		} else {
			j := i
			for j < len(body) && isVarByte(body[j]) {
				j++
			}
			name = body[i:j]
			i = j
		}
		if name == "" || !isVarName(name) {
			return nil, &FormatError{Format: src, Pos: start, Msg: "'$' is not followed by a variable name"}
		}
		flush()
		fl, ok := nginxVars[strings.ToLower(name)]
		if !ok {
			fl = fIgnore
		}
		f.items = append(f.items, item{field: fl, pos: start})
	}
	flush()
	if err := f.finish(src); err != nil {
		return nil, err
	}
	return f, nil
}

// nginxUnquote turns a log_format as written in nginx.conf into its text:
// an optional escape= parameter, then quoted strings joined together. A
// string that does not start with a quote is used as it is.
func nginxUnquote(s string) (string, error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), ";")
	if rest, ok := strings.CutPrefix(t, "log_format "); ok {
		// log_format NAME [escape=...] 'format' ...;
		rest = strings.TrimSpace(rest)
		if sp := strings.IndexAny(rest, " \t"); sp > 0 && rest[0] != '\'' && rest[0] != '"' {
			rest = strings.TrimSpace(rest[sp:])
		}
		t = rest
	}
	if rest, ok := strings.CutPrefix(t, "escape="); ok {
		sp := strings.IndexAny(rest, " \t")
		if sp < 0 {
			return "", &FormatError{Format: s, Pos: 0, Msg: "escape= without a format after it"}
		}
		t = strings.TrimSpace(rest[sp:])
	}
	if t == "" || (t[0] != '\'' && t[0] != '"') {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(t); {
		switch t[i] {
		case ' ', '\t', '\n', '\r':
			i++
			continue
		case '\'', '"':
		default:
			return "", &FormatError{Format: s, Pos: i, Msg: "text outside quotes"}
		}
		q := t[i]
		i++
		closed := false
		for i < len(t) {
			c := t[i]
			if c == '\\' && i+1 < len(t) {
				switch t[i+1] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case 'r':
					b.WriteByte('\r')
				default:
					b.WriteByte(t[i+1])
				}
				i += 2
				continue
			}
			if c == q {
				closed = true
				i++
				break
			}
			b.WriteByte(c)
			i++
		}
		if !closed {
			return "", &FormatError{Format: s, Pos: len(s) - 1, Msg: "unterminated quote"}
		}
	}
	return b.String(), nil
}

func isVarByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isVarName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isVarByte(s[i]) {
			return false
		}
	}
	return true
}

// CompileApache compiles an Apache LogFormat string (mod_log_config). The
// string may be given with its surrounding double quotes and with \" for
// quotes inside, as in httpd.conf.
func CompileApache(s string) (*Format, error) {
	src := s
	body := apacheUnquote(s)
	f := &Format{name: "apache:" + src}
	var lit literal
	flush := func() { lit.flush(f) }
	addLit := lit.add
	for i := 0; i < len(body); {
		c := body[i]
		if c != '%' {
			addLit(c, i)
			i++
			continue
		}
		start := i
		i++
		// modifiers: status conditions (!200,304), < and >
		for i < len(body) && (body[i] == '<' || body[i] == '>' || body[i] == '!' || body[i] == ',' || body[i] >= '0' && body[i] <= '9') {
			i++
		}
		var arg string
		hasArg := false
		if i < len(body) && body[i] == '{' {
			end := strings.IndexByte(body[i:], '}')
			if end < 0 {
				return nil, &FormatError{Format: src, Pos: start, Msg: "unterminated %{"}
			}
			arg, hasArg = body[i+1:i+end], true
			i += end + 1
		}
		for i < len(body) && (body[i] == '<' || body[i] == '>') {
			i++
		}
		if i >= len(body) {
			return nil, &FormatError{Format: src, Pos: start, Msg: "'%' at the end of the format"}
		}
		d := body[i]
		i++
		if d == '%' && !hasArg {
			addLit('%', start)
			continue
		}
		if d == '^' && hasArg && i+1 < len(body) && body[i] == 't' && (body[i+1] == 'i' || body[i+1] == 'o') {
			// %{VARNAME}^ti and ^to: a request or response trailer,
			// read and ignored.
			i += 2
			flush()
			f.items = append(f.items, item{field: fIgnore, pos: start})
			continue
		}
		fl, tl, err := apacheDirective(d, arg, hasArg)
		if err != nil {
			return nil, &FormatError{Format: src, Pos: start, Msg: err.Error()}
		}
		if d == 't' && hasArg {
			a := arg
			if strings.HasPrefix(a, "end:") {
				f.timeIsEnd = true
			}
		}
		// Plain %t writes its own brackets: [10/Oct/2000:13:55:36 -0700].
		bracketed := d == 't' && strings.TrimPrefix(strings.TrimPrefix(arg, "begin:"), "end:") == ""
		if bracketed {
			addLit('[', start)
		}
		flush()
		f.items = append(f.items, item{field: fl, pos: start, tl: tl})
		if bracketed {
			addLit(']', start)
		}
	}
	flush()
	if err := f.finish(src); err != nil {
		return nil, err
	}
	return f, nil
}

// apacheUnquote removes httpd.conf quoting: surrounding double quotes and
// backslash escapes (\" \\ \t \n).
func apacheUnquote(s string) string {
	t := s
	if len(t) >= 2 && t[0] == '"' && t[len(t)-1] == '"' {
		t = t[1 : len(t)-1]
	}
	if !strings.Contains(t, `\`) {
		return t
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if t[i] == '\\' && i+1 < len(t) {
			i++
			switch t[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(t[i])
			}
			continue
		}
		b.WriteByte(t[i])
	}
	return b.String()
}

func apacheDirective(d byte, arg string, hasArg bool) (field, *timeLayout, error) {
	if d == 't' {
		return apacheTime(arg, hasArg)
	}
	fl, err := apacheField(d, arg, hasArg)
	return fl, nil, err
}

// apacheTime reads %t and %{FORMAT}t: a strftime FORMAT, sec, msec, usec,
// msec_frac or usec_frac, each after an optional begin: or end:.
func apacheTime(arg string, hasArg bool) (field, *timeLayout, error) {
	if !hasArg {
		return fTimeCLF, nil, nil
	}
	a := strings.TrimPrefix(strings.TrimPrefix(arg, "begin:"), "end:")
	switch a {
	case "", "%d/%b/%Y:%H:%M:%S %z":
		return fTimeCLF, nil, nil
	case "sec":
		return fTimeSec, nil, nil
	case "msec":
		return fTimeMsecInt, nil, nil
	case "usec":
		return fTimeUsecInt, nil, nil
	case "msec_frac":
		return fFracMsec, nil, nil
	case "usec_frac":
		return fFracUsec, nil, nil
	case "%Y-%m-%dT%H:%M:%S%z", "%FT%T%z":
		return fTimeISO, nil, nil
	}
	tl, err := compileStrftime(a)
	if err != nil {
		return 0, nil, err
	}
	return fTimeStrf, tl, nil
}

func apacheField(d byte, arg string, hasArg bool) (field, error) {
	switch d {
	case 'h', 'a':
		return fAddr, nil
	case 'u':
		return fUser, nil
	case 'r':
		return fRequest, nil
	case 'm':
		return fMethod, nil
	case 'U':
		return fPath, nil
	case 'q':
		return fQuery, nil
	case 'H':
		return fProto, nil
	case 's':
		return fStatus, nil
	case 'b', 'B', 'O':
		return fBytes, nil
	case 'v', 'V':
		return fHost, nil
	case 'D':
		return fDurUsec, nil
	case 'T':
		switch arg {
		case "", "s":
			return fDurSec, nil
		case "ms":
			return fDurMsec, nil
		case "us":
			return fDurUsec, nil
		}
		return 0, fmt.Errorf("unknown unit %%{%s}T (use s, ms or us)", arg)
	case 'i':
		if !hasArg {
			return 0, errors.New("%i needs a header name: %{User-Agent}i")
		}
		switch strings.ToLower(arg) {
		case "user-agent":
			return fUA, nil
		case "referer":
			return fReferer, nil
		case "host":
			return fHostHeader, nil
		case "x-forwarded-for":
			return fXFF, nil
		case "cf-connecting-ip":
			return fCFConnectingIP, nil
		case "true-client-ip":
			return fTrueClientIP, nil
		case "x-real-ip":
			return fXRealIP, nil
		}
		return fIgnore, nil
	case 'o':
		if !hasArg {
			return 0, errors.New("%o needs a header name: %{Retry-After}o")
		}
		if strings.EqualFold(arg, "retry-after") {
			return fRetryAfter, nil
		}
		return fIgnore, nil
	case 'l':
		return fIdent, nil
	case 'A', 'p', 'P', 'k', 'L', 'X', 'f', 'R', 'I', 'S', 'e', 'n', 'C', 'x', 'c', 'M':
		return fIgnore, nil
	case '^':
		return 0, errors.New("%^ti/%^to trailer fields are not supported")
	}
	return 0, fmt.Errorf("unknown directive %%%c", d)
}

// finish checks a compiled plan and marks quoted fields.
func (f *Format) finish(src string) error {
	if len(f.items) == 0 {
		return &FormatError{Format: src, Pos: 0, Msg: "empty format"}
	}
	if len(f.items) > maxItems {
		return &FormatError{Format: src, Pos: f.items[maxItems].pos, Msg: fmt.Sprintf("more than %d fields and literals", maxItems)}
	}
	var timeParts uint8
	for i := range f.items {
		it := &f.items[i]
		if it.isLit {
			continue
		}
		if i > 0 && !f.items[i-1].isLit && f.items[i-1].tl == nil {
			return &FormatError{Format: src, Pos: it.pos, Msg: "two fields with nothing between them cannot be told apart"}
		}
		if f.has[it.field] && it.field != fIgnore && it.field != fTimeStrf {
			// The first occurrence decides; a second one is read and ignored.
			it.field = fIgnore
		}
		f.has[it.field] = true
		if i > 0 && i+1 < len(f.items) {
			prev, next := f.items[i-1].lit, f.items[i+1].lit
			it.quoted = strings.HasSuffix(prev, `"`) && strings.HasPrefix(next, `"`)
		}
		switch it.field {
		case fTimeStrf:
			timeParts |= it.tl.parts
			if it.tl.parts&(partZone|partEpoch) == 0 && !it.tl.utc {
				f.zoneless = true
			}
		case fFracMsec, fFracUsec:
			timeParts |= partFrac
		}
	}
	f.splitTime = f.has[fTimeStrf] || f.has[fFracMsec] || f.has[fFracUsec]
	for i := range f.items {
		it := &f.items[i]
		switch {
		case it.isLit && len(it.lit) == 1:
			it.step = stepLit1
		case it.isLit:
			it.step = stepLit
		case it.tl != nil:
			it.step = stepTime
		case it.field == fCaptures:
			it.step = stepBraces
		case i+1 == len(f.items):
			it.step = stepRest
		case it.quoted && i+2 == len(f.items):
			it.step = stepLastQuoted
		case it.quoted:
			it.step = stepQuoted
		case len(f.items[i+1].lit) == 1:
			it.step, it.delim = stepUntil, f.items[i+1].lit[0]
			switch it.field {
			case fTimeCLF:
				it.width = len("02/Jan/2006:15:04:05 -0700")
			case fStatus:
				it.width = 3
			case fUser, fIdent:
				it.width = 1 // "-"
			}
		default:
			it.step = stepUntilLit
			if it.field == fUser || it.field == fIdent {
				it.width = 1
			}
		}
		if !it.isLit {
			switch it.field {
			case fAddr:
				it.check = checkClient
			case fAddrPort:
				it.check = checkAddrPort
			case fXFFClient:
				it.check = checkXFFClient
			case fTimeCLF, fTimeISO, fTimeSec, fTimeMsec, fTimeMsecInt, fTimeUsecInt, fStatus, fBytes, fDurSec, fDurMsec, fDurUsec,
				fFracMsec, fFracUsec, fDurTimer, fDurAuto, fStatusOpt:
				it.check = checkField
			case fUser:
				// Only an unquoted field can take in a neighbour's text.
				if !it.quoted {
					it.check = checkUser
				}
			case fIdent:
				if !it.quoted {
					it.check = checkIdent
				}
			}
		}
	}
	f.hasDur = f.has[fDurSec] || f.has[fDurMsec] || f.has[fDurUsec] || f.has[fDurTimer] || f.has[fDurAuto]
	f.post = f.hasDur || f.splitTime
	f.uaItem, f.addrItem = -1, -1
	for i := range f.realItems {
		f.realItems[i] = -1
	}
	for i, it := range f.items {
		switch {
		case it.isLit:
		case it.field == fUA, it.field == fCaptures && f.uaItem < 0:
			f.uaItem = i
		case it.field == fAddr, it.field == fAddrPort, it.field == fXFFClient && f.addrItem < 0:
			f.addrItem = i
		}
		if c := clientSourceOf(it.field); !it.isLit && c != FromAddress && f.realItems[c] < 0 {
			f.realItems[c] = i
		}
	}
	if f.uaItem >= 0 {
		f.uaSpecial = f.items[f.uaItem].field == fCaptures || f.items[f.uaItem].dec != decLog
	}
	// With both a virtual host and a Host header, the virtual host wins.
	if !f.has[fAddr] && !f.has[fAddrPort] && !f.has[fXFFClient] {
		msg := "no client address field ($remote_addr or %h)"
		if f.has[fXFF] {
			msg += "; a format that logs the client only in X-Forwarded-For is not supported: log $remote_addr or %h (or %a) as well, and use --trust-xff"
		}
		return &FormatError{Format: src, Pos: 0, Msg: msg}
	}
	whole := timeParts&partEpoch != 0 || timeParts&(partDate|partClock) == partDate|partClock
	if !(whole || f.has[fTimeCLF] || f.has[fTimeISO] || f.has[fTimeSec] || f.has[fTimeMsec] || f.has[fTimeMsecInt] || f.has[fTimeUsecInt]) {
		msg := "no time field ($time_local, $time_iso8601, $msec or %t)"
		if timeParts != 0 {
			msg = "the time fields give no whole time (a date and a time of day, as %{%Y-%m-%d}t %{%H:%M:%S}t)"
		}
		return &FormatError{Format: src, Pos: 0, Msg: msg}
	}
	return nil
}

// maxItems bounds a plan so that a line's field spans fit on the stack.
const maxItems = 256
