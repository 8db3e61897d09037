package parse

import (
	"bufio"
	"bytes"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// seedLines adds every line of the test logs to a fuzz corpus.
func seedLines(f *testing.F) {
	files, err := filepath.Glob("../testdata/logs/*")
	if err != nil || len(files) == 0 {
		f.Fatalf("no test logs to seed from: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			f.Add(sc.Text())
		}
	}
}

// FuzzLine feeds arbitrary lines to every built-in format, plain and
// after a syslog header, as given and as detected: no panic, and a line
// that parses gives a record whose fields are consistent. Its client is
// exactly the IP address net/netip reads from the client field, or, only
// with a given format, no address and a host name kept as written; its
// times can be written in a report.
func FuzzLine(f *testing.F) {
	seedLines(f)
	formats := append([]*Format{}, autoCandidates...)
	formats = append(formats, syslogCandidates...)
	timed, err := CompileNginx(`$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $host $request_time "$sent_http_retry_after"`)
	if err != nil {
		f.Fatal(err)
	}
	apacheTimed, err := CompileApache(`%h %l %u %{%Y-%m-%dT%H:%M:%S%z}t %{msec}t "%r" %>s %b "%{User-Agent}i" %D`)
	if err != nil {
		f.Fatal(err)
	}
	formats = append(formats, timed, apacheTimed)
	// The formats of other servers, and presets with extra fields.
	iis, err := compileW3C("date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-username c-ip cs(User-Agent) cs(Referer) sc-status sc-substatus sc-win32-status time-taken", ' ')
	if err != nil {
		f.Fatal(err)
	}
	cloudfront, err := compileW3C("date time x-edge-location sc-bytes c-ip cs-method cs(Host) cs-uri-stem sc-status cs(Referer) cs(User-Agent) cs-uri-query cs(Cookie) x-edge-result-type x-edge-request-id x-host-header cs-protocol cs-bytes time-taken x-forwarded-for", '\t')
	if err != nil {
		f.Fatal(err)
	}
	strf, err := CompileApache(`%h %l %u %{%Y-%m-%d %H:%M:%S}t.%{usec_frac}t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"`)
	if err != nil {
		f.Fatal(err)
	}
	formats = append(formats, iis, cloudfront, strf)
	for _, name := range []string{"combined+sec+sec", "vhost_combined+num", "nginx_main+rt=sec+uct=str", "combined+num+str+str+ms+word"} {
		fm, err := ParseFormatSpec(name)
		if err != nil {
			f.Fatal(err)
		}
		formats = append(formats, fm)
	}
	for _, file := range []string{"haproxy_httplog.log", "traefik_clf.log", "envoy.log", "istio.log", "alb.log", "cloudfront.log", "caddy.log", "caddy_2.4.log", "nginx_timed.log", "nginx_upstream_kv.log"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "servers", file))
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			f.Add(l)
		}
	}
	f.Add(`<190>Dec  1 06:25:01 web1 nginx: 192.0.2.1 - - [01/Dec/2026:06:25:01 +0100] "GET / HTTP/1.1" 200 1 "-" "LohiSoftBot"`)
	f.Add(`crawl.example.com - - [31/Dec/9999:23:59:59 +0100] "GET / HTTP/1.1" 200 1 "-" "LohiSoftBot"`)
	f.Add(`192.0.2.1 - - 2026-12-01T06:25:01+01:00 1791640536125 "GET / HTTP/1.1" 200 1 "LohiSoftBot" 1000`)
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\n") {
			return
		}
		for _, fm := range formats {
			for _, ipOnly := range []bool{false, true} {
				lp := newLineParser(fm, testClaims, nil, "s", false)
				lp.ipOnly = ipOnly
				var rec Record
				keep, reason := lp.parse([]byte(line), &rec)
				if keep && reason != "" {
					t.Fatalf("%s: kept a malformed line", fm.Name())
				}
				lp.keepAll = true
				var all Record
				if k, r := lp.parse([]byte(line), &all); (r == "") != (reason == "") || r == "" && !k {
					t.Fatalf("%s: kept %v %q, with every line kept %v %q", fm.Name(), keep, reason, k, r)
				}
				if reason != "" {
					continue
				}
				checkRecord(t, fm, &all, ipOnly)
			}
		}
	})
}

// checkRecord checks what any record of a well-formed line must hold.
func checkRecord(t *testing.T, fm *Format, rec *Record, ipOnly bool) {
	t.Helper()
	// The token as a product token in the User-Agent as sent (matched
	// at token boundaries, see TokenSet), however the log escaped it.
	if rec.Claimed != (testClaims.MatchText([]byte(rec.UserAgent)) != 0) {
		t.Fatalf("%s: claimed=%v for user agent %q", fm.Name(), rec.Claimed, rec.UserAgent)
	}
	if rec.Time.IsZero() {
		t.Fatalf("%s: kept a record without a time", fm.Name())
	}
	if rec.End.Before(rec.Start) {
		t.Fatalf("%s: ends before it starts", fm.Name())
	}
	if rec.Host == "" {
		t.Fatalf("%s: no site", fm.Name())
	}
	for _, tm := range []time.Time{rec.Time, rec.Start, rec.End, rec.Start.UTC(), rec.End.UTC()} {
		if _, err := tm.MarshalJSON(); err != nil || tm.Year() < 1 || tm.Year() > 9999 {
			t.Fatalf("%s: time %v cannot go in a report: %v", fm.Name(), tm, err)
		}
	}
	if rec.Client.IsValid() {
		a, err := netip.ParseAddr(rec.ClientRaw)
		if err != nil || a.Unmap() != rec.Client {
			t.Fatalf("%s: client %v from the field %q (netip: %v, %v)", fm.Name(), rec.Client, rec.ClientRaw, a, err)
		}
		return
	}
	if fm.has[fXFFClient] && rec.ClientRaw == "-" {
		return // Envoy's format without X-Forwarded-For: no client logged
	}
	if ipOnly {
		t.Fatalf("%s: a detected format took the client %q", fm.Name(), rec.ClientRaw)
	}
	if _, err := netip.ParseAddr(rec.ClientRaw); err == nil || !validHostName([]byte(rec.ClientRaw)) {
		t.Fatalf("%s: client %q is neither an address nor a host name", fm.Name(), rec.ClientRaw)
	}
}

// FuzzClientField compares the client field's reading with net/netip: an
// IP literal is exactly what netip.ParseAddr reads (zones limited to
// interface-name bytes), a host name is never an address, and an address
// with a port is never a client.
func FuzzClientField(f *testing.F) {
	for _, s := range []string{"192.0.2.1", "::", "::1", "1::", "2001:db8::1", "::ffff:192.0.2.1", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7::",
		"1:2:3:4:5:6::1.2.3.4", "::1.2.3.4", "1:2:3:4:5:6:7:1.2.3.4", "fe80::1%eth0", "fe80::1%", "01.2.3.4", "1.2.3.4:80",
		"[::1]:443", "example.com", "example.com:80", "localhost", "a.b-c.d_e", "12345::", "1::2::3", "::ffff:1.2.3.04", ":", ":::", "1:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		kind := classifyClient(b)
		a, err := netip.ParseAddr(s)
		zoneOK := true
		if i := strings.IndexByte(s, '%'); i >= 0 {
			zoneOK = strings.Trim(s[i+1:], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") == ""
		}
		switch {
		case kind == clientIP && err != nil:
			t.Fatalf("%q taken for an address, netip says %v", s, err)
		case kind != clientIP && err == nil && zoneOK:
			t.Fatalf("%q (%v) not taken for an address", s, a)
		case kind == clientName && !validHostName(b):
			t.Fatalf("%q taken for a host name", s)
		}
		if v6 := validIPv6Text(b); v6 && (err != nil || !a.Is6()) {
			t.Fatalf("%q taken for IPv6, netip says %v, %v", s, a, err)
		}
		if kind == clientPort {
			i := strings.LastIndexByte(s, ':')
			if _, err := netip.ParseAddrPort(s); err != nil && !validHostName(b[:i]) {
				t.Fatalf("%q taken for an address with a port", s)
			}
		}
		if got := clientReason(b, true); (got == "") != (kind == clientIP) {
			t.Fatalf("%q: reason %q for kind %d", s, got, kind)
		}
	})
}

// FuzzSyslogHeader feeds arbitrary lines to the syslog header reader: no
// panic, a length within the line, a message that starts past the spaces,
// and the same header whatever the message holds after its first words.
func FuzzSyslogHeader(f *testing.F) {
	for _, s := range []string{
		"<190>Dec  1 06:25:01 web1 nginx: 203.0.113.10 - -",
		"<190>1 2026-12-01T06:25:01.123456+01:00 web1 nginx 812 - [a b=\"c\\\"]\"] 203.0.113.10 - -",
		"Dec 01 06:25:01.123456 web1 nginx[812]: 203.0.113.10 - -",
		"Tue 2026-12-01 06:25:01 CET web1 nginx[812]: x y",
		"2026-12-01T06:25:01+0100 nginx[812]: x y",
		"1 - - - - - - x y",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		n := syslogHeaderLen([]byte(line))
		if n < -1 || n > len(line) {
			t.Fatalf("header of %d bytes in %d", n, len(line))
		}
		if n < 0 {
			return
		}
		if n < len(line) && line[n] == ' ' {
			t.Fatalf("message starts with a space at %d", n)
		}
		// Text appended after a message of two words or more does not
		// change where the message starts.
		if msg := line[n:]; strings.Count(msg, " ") >= 2 && !strings.HasSuffix(msg, " ") {
			if m := syslogHeaderLen([]byte(line + "x y")); m != n {
				t.Fatalf("header of %d bytes, %d with more message", n, m)
			}
		}
	})
}

// FuzzDetect feeds arbitrary samples to Detect: no panic, and a format
// chosen fits more than half of the sampled non-blank lines, each with
// an IP address literal as the client.
func FuzzDetect(f *testing.F) {
	seedFiles(f)
	f.Fuzz(func(t *testing.T, sample string) {
		fm, err := Detect([]byte(sample))
		if err != nil {
			if !errors.Is(err, ErrUnknownFormat) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v", err)
			}
			return
		}
		lines := sampleLines([]byte(sample))
		lp := newLineParser(fm, testClaims, nil, "s", false)
		lp.keepAll, lp.ipOnly = true, true
		fit := 0
		for _, l := range lines {
			var rec Record
			if _, reason := lp.parse(l, &rec); reason != "" {
				continue
			}
			fit++
			if a, err := netip.ParseAddr(rec.ClientRaw); err != nil || a.Unmap() != rec.Client {
				t.Fatalf("%s: client %v from %q", fm.Name(), rec.Client, rec.ClientRaw)
			}
		}
		if fit*2 <= len(lines) {
			t.Fatalf("%s fits %d of %d lines", fm.Name(), fit, len(lines))
		}
	})
}

// seedFiles adds the first lines of every test log to a fuzz corpus.
func seedFiles(f *testing.F) {
	files, err := filepath.Glob("../testdata/logs/*")
	if err != nil || len(files) == 0 {
		f.Fatalf("no test logs to seed from: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Add("\n\n")
}

// FuzzCompileFormat compiles arbitrary format strings: an error or a plan,
// never a panic, and a plan then survives the seed lines.
func FuzzCompileFormat(f *testing.F) {
	for _, s := range []string{
		apacheCommon, apacheCombined, apacheVhostCombined, nginxMain,
		`"%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\" %D"`,
		`%400,501{User-agent}i %{end:msec}t %h`,
		`'$remote_addr [$time_local] "$http_user_agent"' '$request_time'`,
		`log_format json escape=json '{"a":"$remote_addr","t":"$msec"}';`,
		`${remote_addr}x$time_iso8601`,
	} {
		f.Add(s, "1.2.3.4 - - [10/Oct/2026:13:55:36 +0200] \"GET / HTTP/1.1\" 200 1 \"-\" \"LohiSoftBot\"")
	}
	f.Fuzz(func(t *testing.T, spec, line string) {
		for _, c := range []func(string) (*Format, error){CompileNginx, CompileApache} {
			fm, err := c(spec)
			if err != nil {
				if strings.Contains(err.Error(), "\n") && !strings.Contains(spec, "\n") {
					t.Fatalf("multi-line error: %q", err)
				}
				continue
			}
			if len(fm.items) == 0 || len(fm.items) > maxItems {
				t.Fatalf("plan of %d items", len(fm.items))
			}
			for i := 1; i < len(fm.items); i++ {
				if !fm.items[i].isLit && !fm.items[i-1].isLit {
					t.Fatalf("two fields side by side in %q", spec)
				}
			}
			lp := newLineParser(fm, testClaims, nil, "s", false)
			var rec Record
			lp.parse([]byte(line), &rec)
		}
	})
}

// FuzzReader reads arbitrary input in small chunks: the line count is the
// number of lines in the input and every record points at a real line.
func FuzzReader(f *testing.F) {
	seedLines(f)
	f.Add("\n\n\r\n")
	f.Fuzz(func(t *testing.T, in string) {
		r := NewReader(strings.NewReader(in), Options{Claims: testClaims, Name: "f", Format: Combined, ChunkSize: 64, Workers: 2})
		if kind := compressionOf([]byte(in)); kind.name != "" {
			// read as compressed: it ends in a ReadError, in what it
			// holds, or in a CompressedError
			for r.Scan() {
			}
			if err := r.Err(); err != nil && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrCompressed) {
				t.Fatalf("%s input: %v", kind.name, err)
			}
			return
		}
		var lines []string
		if in != "" {
			lines = strings.Split(strings.TrimSuffix(in, "\n"), "\n")
		}
		n := 0
		for r.Scan() {
			rec := r.Record()
			if rec.Line < 1 || rec.Line > int64(len(lines)) {
				t.Fatalf("record at line %d of %d", rec.Line, len(lines))
			}
			if !testClaims.Contains([]byte(lines[rec.Line-1])) && !strings.Contains(lines[rec.Line-1], `\x`) {
				t.Fatalf("record at line %d, which has no token: %q", rec.Line, lines[rec.Line-1])
			}
			n++
		}
		if r.Err() != nil {
			t.Fatal(r.Err())
		}
		st := r.Stats()
		if st.Lines != int64(len(lines)) || st.Malformed+int64(n) > st.Lines || st.Bytes != int64(len(in)) {
			t.Fatalf("stats %+v for %d lines, %d records", st, len(lines), n)
		}
	})
}

// FuzzW3C compiles arbitrary #Fields: lists and reads arbitrary entries
// with them: an error or a format, never a panic, and a record that
// holds what any record must.
func FuzzW3C(f *testing.F) {
	f.Add("date time c-ip cs-method cs-uri-stem sc-status cs(User-Agent) time-taken", "2026-12-01 06:25:01 203.0.113.10 GET / 200 LohiSoftBot/1.0+(+https://x) 15")
	f.Add("date time x-edge-location c-ip cs(User-Agent) x-host-header time-taken", "2026-12-01\t06:25:01\tFRA\t203.0.113.10\tLohiSoftBot%20x\twww.example.org\t0.003")
	f.Fuzz(func(t *testing.T, fields, line string) {
		if strings.ContainsAny(line, "\n") {
			return
		}
		for _, sep := range []byte{' ', '\t'} {
			fm, err := compileW3C(fields, sep)
			if err != nil {
				continue
			}
			lp := newLineParser(fm, testClaims, nil, "s", false)
			lp.keepAll, lp.ipOnly = true, true
			var rec Record
			if _, reason := lp.parse([]byte(line), &rec); reason == "" {
				checkRecord(t, fm, &rec, true)
			}
		}
	})
}

// FuzzExtras: whatever auto-detection makes of the text after a preset
// builds a format that reads the line it came from, and whose name reads
// back as the same format.
func FuzzExtras(f *testing.F) {
	for _, s := range []string{"0.026 0.025", "26012", `7 "blog@docker" "http://172.18.0.4:80" 12ms`, `rt=0.026 uct="0.001" urt="-"`, "- -", `a="b\"c" d`} {
		f.Add(s)
	}
	const base = `203.0.113.10 - - [01/Dec/2026:06:25:01 +0100] "GET / HTTP/1.1" 200 5 "-" "LohiSoftBot/1.0"`
	f.Fuzz(func(t *testing.T, tail string) {
		if strings.ContainsAny(tail, "\n\r") {
			return
		}
		ex := inferExtras([]byte(tail))
		if ex == nil {
			return
		}
		fm, err := buildExtended(Combined, ex)
		if err != nil {
			t.Fatalf("%q: inferred %v, which does not build: %v", tail, ex, err)
		}
		lp := newLineParser(fm, testClaims, nil, "s", false)
		lp.keepAll, lp.ipOnly = true, true
		var rec Record
		if _, reason := lp.parse([]byte(base+" "+tail), &rec); reason != "" {
			t.Fatalf("%q: %s does not read its own line: %s", tail, fm.Name(), reason)
		}
		checkRecord(t, fm, &rec, true)
		again, err := ParseFormatSpec(fm.Name())
		if err != nil || again.Name() != fm.Name() {
			t.Fatalf("%s does not read back: %v", fm.Name(), err)
		}
	})
}

// FuzzContainerHeader feeds arbitrary lines to the container prefix
// reader: no panic, a length within the line, and the same prefix whatever
// the line holds after its first words.
func FuzzContainerHeader(f *testing.F) {
	for _, s := range []string{
		"2026-12-04T10:00:00.123456789Z stdout F 203.0.113.10 - -",
		"2026-12-04T10:00:00.123456789Z stderr P x y",
		"web-1  | 203.0.113.10 - -",
		"web-1  | 2026-12-04T10:00:00.5Z 203.0.113.10 - -",
		"2026-12-04T10:00:00Z 203.0.113.10 - -",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		n := containerHeaderLen([]byte(line))
		if n < -1 || n > len(line) {
			t.Fatalf("prefix of %d bytes in %d", n, len(line))
		}
		if n < 0 {
			return
		}
		if msg := line[n:]; strings.Count(msg, " ") >= 2 && !strings.HasSuffix(msg, " ") {
			if m := containerHeaderLen([]byte(line + "x y")); m != n {
				t.Fatalf("prefix of %d bytes, %d with more line", n, m)
			}
		}
	})
}
