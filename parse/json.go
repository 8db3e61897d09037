package parse

import (
	"bytes"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonKeyField maps a JSON log key to a field. Keys are nginx variable
// names, with or without a leading '$', plus a few common aliases.
func jsonKeyField(k []byte) field {
	if len(k) > 0 && k[0] == '$' {
		k = k[1:]
	}
	switch string(k) {
	case "remote_addr", "client_ip", "remote_ip", "clientip":
		return fAddr
	case "remote_user":
		return fUser
	case "time_local":
		return fTimeCLF
	case "time_iso8601":
		return fTimeISO
	case "msec":
		return fTimeMsec
	case "time", "timestamp", "@timestamp":
		return fTimeAny
	case "request":
		return fRequest
	case "request_method", "method":
		return fMethod
	case "request_uri":
		return fURI
	case "uri", "document_uri":
		return fPath
	case "args", "query_string":
		return fQuery
	case "server_protocol", "protocol":
		return fProto
	case "status":
		// 0 or -1 for a request that got no response (Caddy logs
		// an abandoned one so).
		return fStatusOpt
	case "body_bytes_sent", "bytes_sent":
		return fBytes
	case "http_referer", "referer", "referrer":
		return fReferer
	case "http_user_agent", "user_agent":
		return fUA
	case "host", "server_name", "vhost":
		return fHost
	case "http_host":
		return fHostHeader
	case "request_time":
		return fDurSec
	case "sent_http_retry_after", "retry_after":
		return fRetryAfter
	case "http_x_forwarded_for", "x_forwarded_for":
		return fXFF
	case "http_cf_connecting_ip", "cf_connecting_ip":
		return fCFConnectingIP
	case "http_true_client_ip", "true_client_ip":
		return fTrueClientIP
	case "http_x_real_ip", "x_real_ip":
		return fXRealIP
	// Traefik's JSON access log (its request headers only when
	// accessLog.fields.headers keeps them).
	case "ClientHost":
		return fAddr
	case "StartUTC", "StartLocal":
		return fTimeISO
	case "RequestMethod":
		return fMethod
	case "RequestPath":
		return fURI
	case "RequestProtocol":
		return fProto
	case "DownstreamStatus":
		return fStatus
	case "DownstreamContentSize":
		return fBytes
	case "RequestHost":
		return fHost
	case "request_User-Agent":
		return fUA
	case "request_Referer":
		return fReferer
	case "request_X-Forwarded-For":
		return fXFF
	}
	return fIgnore
}

// jval is where a JSON value sits in a line.
type jval struct {
	s, e int32
	str  bool // the inside of a JSON string
	set  bool
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && isJSONSpace(b[i]) {
		i++
	}
	return i
}

// skipJSONValue returns the index just after the value that starts at i,
// or -1 when it is not well formed. Nested objects and arrays are skipped
// with their strings taken into account.
func skipJSONValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		e := findQuote(b, i+1)
		if e < 0 {
			return -1
		}
		return e + 1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '{', '[':
				depth++
				if depth > 64 {
					return -1
				}
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			case '"':
				e := findQuote(b, j+1)
				if e < 0 {
					return -1
				}
				j = e
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && !isJSONSpace(b[j]) {
		j++
	}
	lit := b[i:j]
	switch string(lit) {
	case "true", "false", "null":
		return j
	}
	if len(lit) == 0 || !jsonNumber(lit) {
		return -1
	}
	return j
}

// jsonNumber checks a JSON number loosely (digits, sign, '.', exponent).
func jsonNumber(b []byte) bool {
	digits := 0
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '-' || c == '+':
			if i != 0 && b[i-1] != 'e' && b[i-1] != 'E' {
				return false
			}
		case c == '.' || c == 'e' || c == 'E':
		default:
			return false
		}
	}
	return digits > 0
}

// parseJSON checks a JSON line and fills rec when it is of interest.
func (p *lineParser) parseJSON(line []byte, rec *Record) (keep bool, reason string) {
	var vals [numFields]jval
	var js jsonState
	p.jsonReal = false
	i := skipJSONSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return false, "not a JSON object"
	}
	i, reason = p.jsonObject(line, i, ctxTop, &vals, &js)
	if reason != "" {
		return false, reason
	}
	if skipJSONSpace(line, i) != len(line) {
		return false, "text after the JSON object at byte " + p.at(i)
	}
	if v := js.logger; v.set && !bytes.HasPrefix(line[v.s:v.e], []byte("http.log.access")) && (js.request || p.f.caddy) {
		// Caddy's other loggers (http.log.error, tls.obtain, …) share
		// its output; http.log.error logs a request too, one that the
		// access log has already. Such an entry is no request, nor a
		// malformed one.
		p.notRequest = true
		return false, "an entry of Caddy's " + strconv.Quote(clip(line[v.s:v.e])) + " logger, not of its access log"
	}
	if p.f.caddy && !js.request {
		if !js.logger.set && js.level && js.msg {
			// Caddy's default logger (its start, stop and
			// configuration messages) shares the output when the
			// access log goes to stdout or stderr, as in a container.
			p.notRequest = true
			return false, "an entry of Caddy's default logger, not of its access log"
		}
		return false, "no \"request\" object: not a Caddy access log"
	}
	if js.request {
		// Caddy: client_ip is the client after the trusted_proxies
		// Caddy was given, remote_ip the connecting address (before
		// 2.7 remote_addr, with the port); its duration is in seconds.
		if !vals[fAddr].set && js.peer.set {
			vals[fAddr] = js.peer
		}
		if !vals[fAddr].set && js.peerPort.set {
			vals[fAddrPort] = js.peerPort
		}
		if !vals[fDurSec].set && js.dur.set {
			vals[fDurSec] = js.dur
		}
	}
	if !vals[fAddr].set && !vals[fAddrPort].set {
		return false, "no remote_addr"
	}
	hasTime := false
	for f := field(0); f < numFields; f++ {
		v := vals[f]
		if !v.set {
			continue
		}
		b := line[v.s:v.e]
		if v.str && !f.isText() && bytes.IndexByte(b, '\\') >= 0 {
			b = []byte(unescapeJSON(b))
		}
		if f == fAddr {
			if r := clientReason(b, p.ipOnly); r != "" {
				return false, r
			}
		} else if f == fAddrPort {
			if _, ok := splitAddrPort(b); !ok {
				return false, "bad client address:port " + strconv.Quote(clip(b))
			}
		} else if f == fTimeAny {
			if _, _, ok := p.anyTime(b, false); !ok {
				return false, "bad time " + strconv.Quote(clip(b))
			}
		} else if !validField(f, b) {
			return false, "bad " + fieldNames[f] + " " + strconv.Quote(clip(b))
		}
		if f.isTime() {
			hasTime = true
		}
	}
	if !hasTime {
		return false, "no time (time_local, time_iso8601 or msec)"
	}
	if vals[fDurSec].set {
		if r := p.checkJSONSpan(line, &vals); r != "" {
			return false, r
		}
	}

	var claims uint64
	if v := vals[fUA]; v.set {
		ua := line[v.s:v.e]
		if bytes.IndexByte(ua, '\\') >= 0 {
			// A JSON escape may stand for a letter: match the string
			// decoded, where each byte stands for itself.
			claims = p.claims.MatchText([]byte(unescapeJSON(ua)))
		} else {
			claims = p.claims.MatchText(ua)
		}
	}
	claimed := claims != 0
	listed := false
	if p.listed != nil && !claimed {
		var addr []byte
		if v := vals[fAddr]; v.set {
			addr = line[v.s:v.e]
		} else if v := vals[fAddrPort]; v.set {
			addr = clientText(fAddrPort, line[v.s:v.e])
		}
		if p.reads() && p.jsonReal && p.trustsText(addr) {
			listed = p.listedBehindJSON(line, &vals)
		} else {
			listed = p.listed.ContainsText(addr)
		}
	}
	if !claimed && !listed && !p.keepAll {
		return false, ""
	}

	*rec = Record{Bytes: -1}
	var path, query, hostHeader string
	var timeRes time.Duration
	for f := field(0); f < numFields; f++ {
		v := vals[f]
		if !v.set {
			continue
		}
		b := line[v.s:v.e]
		if f == fTimeAny {
			if v.str && bytes.IndexByte(b, '\\') >= 0 {
				b = []byte(unescapeJSON(b))
			}
			if t, res, ok := p.anyTime(b, true); ok && (timeRes == 0 || res < timeRes) {
				rec.Time, timeRes = t, res
			}
			continue
		}
		if f == fAddrPort || f == fStatusOpt {
			p.setExtra(rec, &item{field: f}, b)
			continue
		}
		enc := encLog
		if v.str {
			enc = encJSON
		}
		if v.str && !f.isText() {
			// a number or time written as a string
			b, enc = []byte(unescapeJSON(b)), encLog
		}
		p.setField(rec, f, b, enc, &path, &query, &hostHeader, &timeRes)
	}
	p.finishRecord(rec, path, query, hostHeader, timeRes)
	rec.Claims, rec.Claimed = claims, claimed
	return true, ""
}

// listedBehindJSON is listedBehind for a JSON line.
func (p *lineParser) listedBehindJSON(line []byte, vals *[numFields]jval) bool {
	for _, f := range [...]field{fXFF, fCFConnectingIP, fTrueClientIP, fXRealIP} {
		v := vals[f]
		if !v.set {
			continue
		}
		b := line[v.s:v.e]
		if len(b) == 0 || len(b) == 1 && b[0] == '-' {
			continue
		}
		a, ok := headerClient(p.trust, b)
		return ok && p.listed.Contains(a)
	}
	return false
}

// checkJSONSpan makes sure that the start of a request with a logged
// duration is a time a report can carry (see checkSpan).
func (p *lineParser) checkJSONSpan(line []byte, vals *[numFields]jval) string {
	var rec Record
	var timeRes time.Duration
	var none string
	for _, f := range [...]field{fTimeCLF, fTimeISO, fTimeMsec, fTimeAny, fDurSec} {
		v := vals[f]
		if !v.set {
			continue
		}
		b := line[v.s:v.e]
		if v.str && bytes.IndexByte(b, '\\') >= 0 {
			b = []byte(unescapeJSON(b))
		}
		if f == fTimeAny {
			if t, res, ok := p.anyTime(b, true); ok && (timeRes == 0 || res < timeRes) {
				rec.Time, timeRes = t, res
			}
			continue
		}
		p.setField(&rec, f, b, encLog, &none, &none, &none, &timeRes)
	}
	if !rec.HasDuration || reportableTime(rec.Time.Add(-rec.Duration)) {
		return ""
	}
	return "request time " + rec.Time.UTC().Format(time.RFC3339) + " and duration " + rec.Duration.String() + " give a start outside the years 0001-9999"
}

// anyTime parses a time written as CLF, ISO 8601 or seconds since the
// epoch (with an optional fraction).
func (p *lineParser) anyTime(b []byte, build bool) (time.Time, time.Duration, bool) {
	switch {
	case len(b) == 26 && b[2] == '/':
		if !build {
			return time.Time{}, 0, validCLFTime(b)
		}
		t, ok := p.clfTime(b)
		return t, time.Second, ok
	case len(b) >= 20 && b[4] == '-':
		if !build {
			_, ok := isoFields(b)
			return time.Time{}, 0, ok
		}
		return p.isoTime(b)
	case validDecimal(b):
		if !build {
			_, _, _, ok := epochParts(b, time.Second)
			return time.Time{}, 0, ok
		}
		return epochTime(b, time.Second)
	}
	return time.Time{}, 0, false
}

// unescapeJSON decodes the inside of a JSON string. Invalid escapes are
// kept as written; bytes that are not UTF-8 are kept as they are.
func unescapeJSON(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 >= len(b) {
			out = append(out, c)
			continue
		}
		i++
		switch b[i] {
		case '"', '\\', '/':
			out = append(out, b[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, n := jsonHex4(b[i+1:])
			if n == 0 {
				out = append(out, '\\', 'u')
				continue
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if i+2 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
					if r2, n2 := jsonHex4(b[i+3:]); n2 > 0 {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							out = utf8.AppendRune(out, d)
							i += 6
							continue
						}
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
		case 'x':
			// nginx escape=default style inside JSON-looking logs
			if i+2 < len(b) && isHex(b[i+1]) && isHex(b[i+2]) {
				out = append(out, unhex(b[i+1])<<4|unhex(b[i+2]))
				i += 2
			} else {
				out = append(out, '\\', 'x')
			}
		default:
			out = append(out, '\\', b[i])
		}
	}
	return string(out)
}

func jsonHex4(b []byte) (rune, int) {
	if len(b) < 4 {
		return 0, 0
	}
	var r rune
	for _, c := range b[:4] {
		if !isHex(c) {
			return 0, 0
		}
		r = r<<4 | rune(unhex(c))
	}
	return r, 4
}

// jsonState is what a JSON line holds beside its fields: Caddy's nested
// request object, its connecting address and its duration.
type jsonState struct {
	request        bool // a "request" object (Caddy)
	logger         jval // Caddy's "logger"
	level, msg     bool // "level" and "msg": an entry of a structured logger
	peer, peerPort jval // request.remote_ip, request.remote_addr
	dur            jval // duration (seconds in Caddy's log)
}

// Where a JSON object sits in a line.
const (
	ctxTop         = iota
	ctxRequest     // Caddy's "request"
	ctxHeaders     // Caddy's "request": {"headers": …}
	ctxRespHeaders // Caddy's "resp_headers"
)

// jsonObject reads the object at line[i] ('{'), putting the values of
// the fields it knows in vals. It returns the index after the object, or
// why the line is not well formed.
func (p *lineParser) jsonObject(line []byte, i int, ctx int, vals *[numFields]jval, js *jsonState) (int, string) {
	i = skipJSONSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return i + 1, ""
	}
	for {
		if i >= len(line) || line[i] != '"' {
			return 0, "expected a key at byte " + p.at(i)
		}
		ke := findQuote(line, i+1)
		if ke < 0 {
			return 0, "unterminated key at byte " + p.at(i)
		}
		key := line[i+1 : ke]
		if bytes.IndexByte(key, '\\') >= 0 {
			key = []byte(unescapeJSON(key))
		}
		i = skipJSONSpace(line, ke+1)
		if i >= len(line) || line[i] != ':' {
			return 0, "expected ':' at byte " + p.at(i)
		}
		i = skipJSONSpace(line, i+1)
		vs := i
		var ve int
		f, sub := fIgnore, -1
		switch ctx {
		case ctxTop:
			f = jsonKeyField(key)
			switch string(key) {
			case "request":
				if vs < len(line) && line[vs] == '{' {
					f, sub = fIgnore, ctxRequest
					js.request = true
				}
			case "resp_headers":
				f, sub = fIgnore, ctxRespHeaders
			case "ts":
				f = fTimeAny
			case "size":
				f = fBytes
			case "user_id":
				f = fUser
			case "logger":
				js.logger = jsonString(line, vs)
			case "level":
				js.level = true
			case "msg":
				js.msg = true
			}
		case ctxRequest:
			switch string(key) {
			case "client_ip":
				f = fAddr
			case "remote_ip":
				f = fIgnore
				js.peer = jsonString(line, vs)
			case "remote_addr":
				js.peerPort = jsonString(line, vs)
			case "proto":
				f = fProto
			case "method":
				f = fMethod
			case "host":
				f = fHost
			case "uri":
				f = fURI
			case "headers":
				sub = ctxHeaders
			}
		case ctxHeaders:
			switch {
			case equalFoldASCII(key, "user-agent"):
				f = fUA
			case equalFoldASCII(key, "referer"):
				f = fReferer
			case equalFoldASCII(key, "x-forwarded-for"):
				f = fXFF
			case equalFoldASCII(key, "cf-connecting-ip"):
				f = fCFConnectingIP
			case equalFoldASCII(key, "true-client-ip"):
				f = fTrueClientIP
			case equalFoldASCII(key, "x-real-ip"):
				f = fXRealIP
			}
		case ctxRespHeaders:
			if equalFoldASCII(key, "retry-after") {
				f = fRetryAfter
			}
		}
		if clientSourceOf(f) != FromAddress {
			p.jsonReal = true
		}
		if sub >= 0 && vs < len(line) && line[vs] == '{' {
			var r string
			if ve, r = p.jsonObject(line, vs, sub, vals, js); r != "" {
				return 0, r
			}
		} else if ve = skipJSONValue(line, vs); ve < 0 {
			return 0, "bad value at byte " + p.at(vs)
		}
		if ctx == ctxTop && string(key) == "duration" && line[vs] != '"' {
			js.dur = jval{s: int32(vs), e: int32(ve), set: true}
		}
		if f != fIgnore && !vals[f].set && line[vs] != 'n' {
			v := jval{s: int32(vs), e: int32(ve), set: true}
			switch line[vs] {
			case '"':
				v = jval{s: int32(vs + 1), e: int32(ve - 1), str: true, set: true}
			case '[':
				// A header's values (Caddy): the first one.
				v = jsonString(line, skipJSONSpace(line, vs+1))
				if ctx != ctxHeaders && ctx != ctxRespHeaders {
					return 0, "unexpected " + fieldNames[f] + " value at byte " + p.at(vs)
				}
			case '{', 't', 'f':
				return 0, "unexpected " + fieldNames[f] + " value at byte " + p.at(vs)
			}
			if v.e > v.s {
				vals[f] = v
			}
		}
		i = skipJSONSpace(line, ve)
		if i < len(line) && line[i] == ',' {
			i = skipJSONSpace(line, i+1)
			continue
		}
		if i < len(line) && line[i] == '}' {
			return i + 1, ""
		}
		return 0, "expected ',' or '}' at byte " + p.at(i)
	}
}

// jsonString returns the string value at line[i] (its inside), or an
// unset jval when there is none.
func jsonString(line []byte, i int) jval {
	if i >= len(line) || line[i] != '"' {
		return jval{}
	}
	e := findQuote(line, i+1)
	if e < 0 || e == i+1 {
		return jval{}
	}
	return jval{s: int32(i + 1), e: int32(e), str: true, set: true}
}
