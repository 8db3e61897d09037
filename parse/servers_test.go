package parse

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// readAll reads data with every record kept.
func readKeep(t *testing.T, data []byte, o Options) ([]*Record, Stats, *Reader) {
	t.Helper()
	if o.Name == "" {
		o.Name = "in"
	}
	if o.Site == "" {
		o.Site = "in"
	}
	o.KeepAll = true
	if o.Claims == nil {
		o.Claims = testClaims
	}
	r := NewReader(bytes.NewReader(data), o)
	var recs []*Record
	for r.Scan() {
		rec := *r.Record()
		recs = append(recs, &rec)
	}
	if err := r.Err(); err != nil {
		t.Fatalf("read: %v", err)
	}
	return recs, r.Stats(), r
}

func mustTimeNano(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// TestServerLogs reads, with --log-format auto, a log of each server as
// its documentation says it writes it by default (testdata/servers), and
// checks the format chosen, that every line reads, and the first
// record's fields: the right client above all.
func TestServerLogs(t *testing.T) {
	utc := time.UTC
	for _, tc := range []struct {
		file, format string
		lines        int64
		comments     int64
		claimed      int
		// the first record
		client, site, start, end, target, ua string
		status                               int
	}{
		{file: "haproxy_httplog.log", format: "syslog+haproxy", lines: 5, claimed: 2,
			client: "203.0.113.10", site: "in", start: "2026-12-01T06:25:01.655Z", end: "2026-12-01T06:25:01.764Z",
			target: "/index.html", status: 200, ua: "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"},
		{file: "traefik_clf.log", format: "traefik", lines: 3, claimed: 1,
			client: "203.0.113.10", site: "in", start: "2026-12-01T06:25:01Z", end: "2026-12-01T06:25:01.012Z",
			target: "/index.html", status: 200, ua: "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"},
		{file: "envoy.log", format: "envoy", lines: 3, claimed: 1,
			client: "203.0.113.10", site: "www.example.org", start: "2026-12-01T06:25:01.31Z", end: "2026-12-01T06:25:01.336Z",
			target: "/index.html", status: 200, ua: "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"},
		{file: "istio.log", format: "istio", lines: 2, claimed: 1,
			client: "203.0.113.10", site: "www.example.org", start: "2026-12-01T06:25:01.409Z", end: "2026-12-01T06:25:01.414Z",
			target: "/index.html", status: 200, ua: "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"},
		{file: "alb.log", format: "alb", lines: 3, claimed: 1,
			client: "203.0.113.10", site: "www.example.org", start: "2026-12-01T06:25:01.186641Z", end: "2026-12-01T06:25:01.186641Z",
			target: "https://www.example.org:443/index.html", status: 200, ua: "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"},
		{file: "cloudfront.log", format: "w3c", lines: 4, comments: 2, claimed: 1,
			client: "203.0.113.10", site: "www.example.org", start: "2026-12-01T06:25:00.974Z", end: "2026-12-01T06:25:01Z",
			target: "/index.html", status: 200, ua: "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"},
		{file: "caddy.log", format: "caddy", lines: 3, claimed: 1,
			client: "203.0.113.10", site: "www.example.org", start: "2026-12-01T06:25:01.498102400Z", end: "2026-12-01T06:25:01.524102400Z",
			target: "/index.html", status: 200, ua: "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"},
		{file: "caddy_2.4.log", format: "caddy", lines: 2, claimed: 1,
			client: "203.0.113.10", site: "www.example.org", start: "2026-12-01T06:25:01.498102400Z", end: "2026-12-01T06:25:01.524102400Z",
			target: "/index.html", status: 200, ua: "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"},
		{file: "nginx_timed.log", format: "combined+sec+sec", lines: 3, claimed: 1,
			client: "203.0.113.10", site: "in", start: "2026-12-01T05:25:00.974Z", end: "2026-12-01T05:25:01Z",
			target: "/index.html", status: 200, ua: "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"},
		{file: "apache_vhost_D.log", format: "vhost_combined+num", lines: 3, claimed: 1,
			client: "203.0.113.10", site: "www.example.org", start: "2026-12-01T05:25:01Z", end: "2026-12-01T05:25:01Z",
			target: "/index.html", status: 200, ua: "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"},
		{file: "host_dash.log", format: "vhost_combined+num", lines: 3, claimed: 1,
			client: "203.0.113.10", site: "www.example.org", start: "2026-12-01T05:25:01Z", end: "2026-12-01T05:25:01Z",
			target: "/index.html", status: 200, ua: "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"},
		{file: "nginx_upstream_kv.log", format: "nginx_main+rt=sec+uct=str+uht=str+urt=str", lines: 2, claimed: 1,
			client: "203.0.113.10", site: "in", start: "2026-12-01T05:25:00.974Z", end: "2026-12-01T05:25:01Z",
			target: "/index.html", status: 200, ua: "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data := readServerLog(t, tc.file)
			recs, st, r := readKeep(t, data, Options{Location: utc})
			if got := r.Format().Name(); got != tc.format {
				t.Fatalf("format %s, want %s", got, tc.format)
			}
			if st.Malformed != 0 || st.Lines != tc.lines || st.Comments != tc.comments {
				t.Errorf("lines %d, malformed %d, comments %d; want %d, 0, %d (%v)", st.Lines, st.Malformed, st.Comments, tc.lines, tc.comments, r.Examples())
			}
			claimed := 0
			for _, rec := range recs {
				if rec.Claimed {
					claimed++
				}
			}
			if claimed != tc.claimed {
				t.Errorf("claimed %d, want %d", claimed, tc.claimed)
			}
			rec := recs[0]
			if rec.Client.String() != tc.client || rec.Host != tc.site || rec.Target != tc.target || rec.Status != tc.status || rec.UserAgent != tc.ua {
				t.Errorf("record: client %v site %q target %q status %d ua %q", rec.Client, rec.Host, rec.Target, rec.Status, rec.UserAgent)
			}
			if !rec.Start.Equal(mustTimeNano(t, tc.start)) || !rec.End.Equal(mustTimeNano(t, tc.end)) {
				t.Errorf("record from %s to %s, want %s to %s", rec.Start.UTC().Format(time.RFC3339Nano), rec.End.UTC().Format(time.RFC3339Nano), tc.start, tc.end)
			}
			// The name the report gives is a --log-format that reads the
			// file the same.
			given, err := ParseFormatSpec(tc.format)
			if err != nil {
				t.Fatalf("ParseFormatSpec(%q): %v", tc.format, err)
			}
			again, st2, _ := readKeep(t, data, Options{Location: utc, Format: given})
			if st2.Malformed != 0 || len(again) != len(recs) || again[0].Summary() != rec.Summary() {
				t.Errorf("read again with --log-format %s: %d malformed, %d records", tc.format, st2.Malformed, len(again))
			}
		})
	}
}

// TestServerClients checks each server's client field on the lines that
// are not the usual ones: IPv6 with a port, a client behind the edge.
func TestServerClients(t *testing.T) {
	for _, tc := range []struct {
		file    string
		line    int
		client  string
		ua, xff string
		status  int
		site    string
	}{
		// HAProxy writes IPv6 with its port and no brackets; the
		// User-Agent is the third captured header here.
		{"haproxy_httplog.log", 4, "2001:db8::17", "Mozilla/5.0 (compatible; LohiSoftBot/1.0; +https://lohisoft.com/bot)", "", 200, "in"},
		// No captures: no User-Agent.
		{"haproxy_httplog.log", 5, "203.0.113.99", "", "", 304, "in"},
		// <BADREQ>, no server, status 400, empty captures.
		{"haproxy_httplog.log", 3, "192.0.2.44", "", "", 400, "in"},
		// Envoy: the last X-Forwarded-For address.
		{"envoy.log", 2, "198.51.100.7", "nsq2http", "10.0.35.28, 198.51.100.7", 204, "locations"},
		// Caddy: client_ip (after Caddy's trusted_proxies), not the
		// connecting remote_ip.
		{"caddy.log", 2, "198.51.100.7", "Mozilla/5.0 (X11; Linux x86_64)", "198.51.100.7", 429, "shop.example.org"},
		{"caddy_2.4.log", 2, "2001:db8::17", "Mozilla/5.0 (X11; Linux x86_64)", "", 404, "www.example.org"},
		// ALB: IPv6 in brackets, no target, "-" for the target's status.
		{"alb.log", 3, "2001:db8::17", "curl/8.5.0", "", 502, "www.example.org"},
		{"alb.log", 2, "198.51.100.7", "Mozilla/5.0 (X11; Linux x86_64)", "", 404, "shop.example.org"},
		// CloudFront's %20 for spaces.
		{"cloudfront.log", 4, "198.51.100.7", "Mozilla/5.0 (X11; Linux x86_64)", "", 404, "www.example.org"},
		{"istio.log", 2, "198.51.100.7", "Mozilla/5.0 (X11; Linux x86_64)", "", 404, "www.example.org"},
	} {
		recs, _, _ := readKeep(t, readServerLog(t, tc.file), Options{Location: time.UTC})
		var rec *Record
		for _, r := range recs {
			if r.Line == int64(tc.line) {
				rec = r
			}
		}
		if rec == nil {
			t.Errorf("%s:%d: no record", tc.file, tc.line)
			continue
		}
		if rec.Client.String() != tc.client || rec.UserAgent != tc.ua || rec.XFF != tc.xff || rec.Status != tc.status || rec.Host != tc.site {
			t.Errorf("%s:%d: client %v ua %q xff %q status %d site %q", tc.file, tc.line, rec.Client, rec.UserAgent, rec.XFF, rec.Status, rec.Host)
		}
	}
	// Caddy's Retry-After from resp_headers.
	recs, _, _ := readKeep(t, readServerLog(t, "caddy.log"), Options{})
	if recs[1].RetryAfter != "120" || recs[2].RemoteUser != "alice" {
		t.Errorf("retry-after %q, user %q", recs[1].RetryAfter, recs[2].RemoteUser)
	}
}

// TestEnvoyClient: a line of Envoy's default format without
// X-Forwarded-For ("-", a request from inside) is a request whose client is
// not known; one whose last X-Forwarded-For entry is not an address is
// malformed, saying why.
func TestEnvoyClient(t *testing.T) {
	const format = `[2026-12-01T06:25:01.310Z] "GET / HTTP/1.1" 200 - 0 2750 26 25 "%s" "LohiSoftBot/1.0" "x" "www.example.org" "10.0.2.1:80"`
	lp := newLineParser(Envoy, testClaims, nil, "s", false)
	lp.ipOnly = true
	var rec Record
	if keep, reason := lp.parse([]byte(fmt.Sprintf(format, "-")), &rec); !keep || reason != "" || rec.Client.IsValid() || rec.ClientRaw != "-" || !rec.Claimed {
		t.Errorf("no X-Forwarded-For: kept %v %q, client %v %q", keep, reason, rec.Client, rec.ClientRaw)
	}
	if _, reason := lp.parse([]byte(fmt.Sprintf(format, "10.0.0.1, unknown")), &rec); !strings.Contains(reason, `the last X-Forwarded-For address "unknown" is not an IP address`) {
		t.Errorf("reason %q", reason)
	}
}

// TestHAProxyUserAgent checks which captured header is taken for the
// User-Agent.
func TestHAProxyUserAgent(t *testing.T) {
	for _, tc := range []struct{ capture, ua string }{
		{"{www.example.org|LohiSoftBot/1.0 (+https://lohisoft.com/bot)} ", "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"},
		{"{https://lohisoft.com/LohiSoftBot/|curl/8.5.0} ", "curl/8.5.0"},
		{"{203.0.113.10|www.example.org} ", ""},
		{"{|} {text/html} ", ""},
		{"{Mozilla/5.0#20(X11)} ", "Mozilla/5.0 (X11)"},
		{"", ""},
	} {
		got := ""
		if ua := haproxyUA([]byte(tc.capture)); ua != nil {
			got = decodeText(ua, decHash)
		}
		if got != tc.ua {
			t.Errorf("%q: user agent %q, want %q", tc.capture, got, tc.ua)
		}
	}
}

// TestW3CFieldsChange: a W3C log whose #Fields: directive changes midway
// (IIS after a restart with other fields) is read with each block's
// fields, however it is cut into chunks and workers.
func TestW3CFieldsChange(t *testing.T) {
	var b strings.Builder
	b.WriteString("#Software: Microsoft Internet Information Services 10.0\n#Version: 1.0\n#Date: 2026-12-01 06:25:01\n")
	b.WriteString("#Fields: date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-username c-ip cs(User-Agent) cs(Referer) sc-status sc-substatus sc-win32-status time-taken\n")
	for i := 0; i < 300; i++ {
		b.WriteString("2026-12-01 06:25:01 10.0.0.2 GET /a - 443 - 203.0.113.10 Mozilla/5.0+(compatible;+LohiSoftBot/1.0;++https://lohisoft.com/bot) - 200 0 0 15\n")
	}
	b.WriteString("#Software: Microsoft Internet Information Services 10.0\n#Version: 1.0\n#Date: 2026-12-01 07:00:00\n")
	b.WriteString("#Fields: date time c-ip cs-username s-ip cs-method cs-uri-stem sc-status cs(User-Agent) cs-host time-taken\n")
	for i := 0; i < 300; i++ {
		b.WriteString("2026-12-01 07:00:01 198.51.100.7 - 10.0.0.2 GET /b 404 LohiSoftBot/1.0 shop.example.org 31\n")
	}
	data := []byte(b.String())
	for _, chunk := range []int{0, 97, 1000, 4096} {
		for _, workers := range []int{1, 3} {
			recs, st, _ := readKeep(t, data, Options{ChunkSize: chunk, Workers: workers})
			if st.Malformed != 0 || st.Comments != 8 || len(recs) != 600 {
				t.Fatalf("chunk %d workers %d: malformed %d, comments %d, records %d", chunk, workers, st.Malformed, st.Comments, len(recs))
			}
			for i, rec := range recs {
				want := "203.0.113.10 in /a 200 Mozilla/5.0 (compatible; LohiSoftBot/1.0; +https://lohisoft.com/bot)"
				if i >= 300 {
					want = "198.51.100.7 shop.example.org /b 404 LohiSoftBot/1.0"
				}
				if got := rec.Client.String() + " " + rec.Host + " " + rec.Target + " " + strconv.Itoa(rec.Status) + " " + rec.UserAgent; got != want || !rec.Claimed {
					t.Fatalf("chunk %d workers %d: record %d: %q claimed %v, want %q", chunk, workers, i, got, rec.Claimed, want)
				}
			}
		}
	}
	// A W3C log given without its #Fields: directive: every line says so.
	_, st, r := readKeep(t, []byte("2026-12-01 07:00:01 198.51.100.7 GET /b 404\n"), Options{Format: W3C})
	if st.Malformed != 1 || !strings.Contains(r.Examples()[0].Reason, "no #Fields: directive") {
		t.Errorf("malformed %d, %v", st.Malformed, r.Examples())
	}
}

// TestCommentsAndBlanks: '#' lines and blank lines before and between
// records are counted apart from malformed lines; a line of text is
// malformed; detection looks past them.
func TestCommentsAndBlanks(t *testing.T) {
	recs, st, r := readKeep(t, readServerLog(t, "awstats_comments.log"), Options{})
	if r.Format().Name() != "combined" || st.Comments != 3 || st.Blank != 2 || st.Malformed != 1 || len(recs) != 2 {
		t.Errorf("format %s: comments %d blank %d malformed %d records %d", r.Format().Name(), st.Comments, st.Blank, st.Malformed, len(recs))
	}
	if ex := r.Examples(); len(ex) != 1 || ex[0].Line != 8 {
		t.Errorf("examples %v", ex)
	}
	// A comment carrying the token is no malformed claim.
	_, st, _ = readKeep(t, []byte("# LohiSoftBot was here\n"+combinedTestLine), Options{})
	if st.Comments != 1 || st.MalformedClaims != 0 {
		t.Errorf("comments %d, malformed claims %d", st.Comments, st.MalformedClaims)
	}
}

const combinedTestLine = `203.0.113.10 - - [01/Dec/2026:06:25:01 +0100] "GET / HTTP/1.1" 200 5 "-" "LohiSoftBot/1.0"` + "\n"

// TestExtraFields: what auto-detection makes of the fields after a
// preset, and that each name reads back.
func TestExtraFields(t *testing.T) {
	base := `203.0.113.10 - - [01/Dec/2026:06:25:01 +0100] "GET / HTTP/1.1" 200 5 "-" "LohiSoftBot/1.0"`
	for _, tc := range []struct {
		tails  []string
		format string
		dur    time.Duration // read from the first line; -1: none
	}{
		{[]string{" 26012", " 311"}, "combined+num", -1},                      // Apache %D: a number, unread
		{[]string{" 0.026", " 0.003"}, "combined+sec", 26 * time.Millisecond}, // nginx $request_time
		{[]string{" 0.026 0.025", " 0.003 -"}, "combined+sec+sec", 26 * time.Millisecond},
		{[]string{` 7 "blog@docker" "http://172.18.0.4:80" 12ms`}, "traefik", 12 * time.Millisecond},
		{[]string{` 7 "a" "b" 12ms x`}, "combined+num+str+str+ms+word", 12 * time.Millisecond},
		{[]string{" rt=0.026 urt=0.020", " rt=0.003 urt=-"}, "combined+rt=sec+urt=sec", 26 * time.Millisecond},
		{[]string{" urt=0.020 rt=0.026"}, "combined+urt=sec+rt=sec", 26 * time.Millisecond}, // the upstream's time is not the request's
		{[]string{` "-" 0.026`}, "nginx_main+sec", 26 * time.Millisecond},
		{[]string{" www.example.org"}, "combined+word", -1},
	} {
		var in strings.Builder
		for i := 0; i < 4; i++ {
			in.WriteString(base + tc.tails[i%len(tc.tails)] + "\n")
		}
		recs, st, r := readKeep(t, []byte(in.String()), Options{})
		if r.Format().Name() != tc.format || st.Malformed != 0 {
			t.Errorf("%q: format %s, %d malformed; want %s", tc.tails, r.Format().Name(), st.Malformed, tc.format)
			continue
		}
		if got := recs[0]; tc.dur < 0 && got.HasDuration || tc.dur >= 0 && (!got.HasDuration || got.Duration != tc.dur) {
			t.Errorf("%q: duration %v (%v), want %v", tc.tails, got.Duration, got.HasDuration, tc.dur)
		}
		f, err := ParseFormatSpec(tc.format)
		if err != nil || f.Name() != tc.format {
			t.Errorf("ParseFormatSpec(%q) = %v, %v", tc.format, f, err)
		}
	}
	for _, bad := range []string{"combined+bogus", "combined+k!=sec", "json+sec"} {
		if _, err := ParseFormatSpec(bad); err == nil {
			t.Errorf("ParseFormatSpec(%q) took it", bad)
		}
	}
}

// TestCaddyOtherEntries: Caddy's error logger logs a request too, one its
// access log has already: such an entry is no request (nor is a line of
// another logger), counted apart from malformed lines; a request
// abandoned before any response has status 0.
func TestCaddyOtherEntries(t *testing.T) {
	in := `{"level":"error","ts":1796106301.5,"logger":"http.log.access.log0","msg":"handled request","request":{"remote_ip":"203.0.113.10","client_ip":"203.0.113.10","proto":"HTTP/1.1","method":"GET","host":"www.example.org","uri":"/x","headers":{"User-Agent":["LohiSoftBot/1.0"]}},"duration":0.5,"size":0,"status":502}
{"level":"error","ts":1796106301.5,"logger":"http.log.error","msg":"dial tcp: connection refused","request":{"remote_ip":"203.0.113.10","client_ip":"203.0.113.10","proto":"HTTP/1.1","method":"GET","host":"www.example.org","uri":"/x","headers":{"User-Agent":["LohiSoftBot/1.0"]}},"duration":0.5,"status":502}
{"level":"info","ts":1796106302,"logger":"tls.obtain","msg":"certificate obtained successfully","identifier":"www.example.org"}
{"level":"info","ts":1796106303.25,"logger":"http.log.access","msg":"handled request","request":{"remote_ip":"198.51.100.7","client_ip":"198.51.100.7","proto":"HTTP/2.0","method":"GET","host":"www.example.org","uri":"/video","headers":{"User-Agent":["Mozilla/5.0"],"Referer":[]}},"duration":0.002,"size":0,"status":0,"resp_headers":{"Content-Type":[]}}
`
	recs, st, r := readKeep(t, []byte(in), Options{})
	if r.Format().Name() != "caddy" || len(recs) != 2 || st.Malformed != 0 || st.Comments != 2 {
		t.Fatalf("format %s, %d records, %d malformed, %d not requests: %v", r.Format().Name(), len(recs), st.Malformed, st.Comments, r.Examples())
	}
	lp := newLineParser(Caddy, testClaims, nil, "s", false)
	var rec Record
	if _, reason := lp.parse([]byte(strings.Split(in, "\n")[1]), &rec); !lp.notRequest || !strings.Contains(reason, `an entry of Caddy's "http.log.error" logger`) {
		t.Errorf("reason %q", reason)
	}
	if recs[0].Status != 502 || !recs[0].Claimed || recs[1].Status != 0 || recs[1].Referer != "" {
		t.Errorf("records %+v %+v", recs[0], recs[1])
	}
}

// TestServerLinesAllocateNothing: a line that is no claimed hit is checked
// without allocating, in every server's format (a decoded User-Agent goes
// to a reused buffer).
func TestServerLinesAllocateNothing(t *testing.T) {
	for _, file := range []string{"haproxy_httplog.log", "traefik_clf.log", "envoy.log", "istio.log", "alb.log", "cloudfront.log", "caddy.log", "nginx_timed.log", "apache_vhost_D.log", "nginx_upstream_kv.log"} {
		data := readServerLog(t, file)
		s := readSample(data)
		f, err := detectFormat(s)
		if err != nil {
			t.Fatal(err)
		}
		if s.fields != "" {
			f, _ = compileW3C(s.fields, w3cSep(s.lines))
		}
		lp := newLineParser(f, testClaims, nil, "s", false)
		lp.loc = time.UTC
		var line []byte
		for _, l := range s.lines {
			if !bytes.Contains(l, []byte("LohiSoftBot")) {
				line = l
				break
			}
		}
		var rec Record
		allocs := testing.AllocsPerRun(100, func() {
			if keep, reason := lp.parse(line, &rec); keep || reason != "" {
				t.Fatalf("%s: kept %v, %q", file, keep, reason)
			}
		})
		if allocs != 0 {
			t.Errorf("%s (%s): %.1f allocations per line", file, f.Name(), allocs)
		}
	}
}
