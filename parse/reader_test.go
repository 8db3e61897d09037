package parse

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/addrset"
)

// parseOne runs one line through a format and returns the record (for a
// valid line) or the reason it was rejected.
func parseOne(t *testing.T, f *Format, line string) (*Record, string) {
	t.Helper()
	lp := newLineParser(f, testClaims, nil, "site.example", false)
	lp.keepAll = true
	var rec Record
	_, reason := lp.parse([]byte(line), &rec)
	if reason != "" {
		return nil, reason
	}
	return &rec, ""
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func TestLineFormats(t *testing.T) {
	timed, err := CompileNginx(`$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $host $request_time "$sent_http_retry_after"`)
	if err != nil {
		t.Fatal(err)
	}
	apacheTimed, err := CompileApache(`"%v %h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-agent}i\" %D \"%{Retry-After}o\""`)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		client, user, method, target, proto, ua, host, retry string
		status                                               int
		bytes                                                int64
		start, end                                           string
		dur                                                  time.Duration
		claimed                                              bool
	}
	tests := []struct {
		name   string
		format *Format
		line   string
		want   *want  // nil: malformed
		reason string // part of the reason when malformed
	}{
		{
			name: "combined", format: Combined,
			line: `79.139.58.98 - - [10/Oct/2026:13:55:36 +0200] "GET /a?b=1 HTTP/1.1" 200 2326 "-" "LohiSoftBot/1.0 (+message@lohisoft.com)"`,
			want: &want{client: "79.139.58.98", method: "GET", target: "/a?b=1", proto: "HTTP/1.1", ua: "LohiSoftBot/1.0 (+message@lohisoft.com)",
				host: "site.example", status: 200, bytes: 2326, start: "2026-10-10T13:55:36+02:00", end: "2026-10-10T13:55:36+02:00", claimed: true},
		},
		{
			name: "apache escaped quotes and hex in user agent", format: Combined,
			line: `203.0.113.5 - - [10/Oct/2026:13:55:36 -0700] "GET / HTTP/1.0" 200 - "http://x/\"q\"" "Mozilla \"LohiSoftBot\" \x07bell \\ end"`,
			want: &want{client: "203.0.113.5", method: "GET", target: "/", proto: "HTTP/1.0", ua: "Mozilla \"LohiSoftBot\" \abell \\ end",
				host: "site.example", status: 200, bytes: -1, start: "2026-10-10T13:55:36-07:00", end: "2026-10-10T13:55:36-07:00", claimed: true},
		},
		{
			name: "nginx hex escapes and a TLS handshake as request", format: Combined,
			line: `198.51.100.7 - - [10/Oct/2026:13:55:36 +0000] "\x16\x03\x01\x00\xa5\x01" 400 157 "-" "-"`,
			want: &want{client: "198.51.100.7", host: "site.example", status: 400, bytes: 157, start: "2026-10-10T13:55:36Z", end: "2026-10-10T13:55:36Z"},
		},
		{
			name: "nginx escaped quote in user agent", format: Combined,
			line: `198.51.100.7 - - [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" 200 1 "-" "a\x22LOHISOFTBOT\x22b"`,
			want: &want{client: "198.51.100.7", method: "GET", target: "/", proto: "HTTP/1.1", ua: `a"LOHISOFTBOT"b`, host: "site.example",
				status: 200, bytes: 1, start: "2026-10-10T13:55:36Z", end: "2026-10-10T13:55:36Z", claimed: true},
		},
		{
			name: "ipv6 client, remote user, empty user agent", format: Combined,
			line: `2001:db8::7 - alice [10/Oct/2026:13:55:36 +0000] "POST /login HTTP/2.0" 302 0 "-" ""`,
			want: &want{client: "2001:db8::7", user: "alice", method: "POST", target: "/login", proto: "HTTP/2.0", host: "site.example",
				status: 302, bytes: 0, start: "2026-10-10T13:55:36Z", end: "2026-10-10T13:55:36Z"},
		},
		{
			name: "dash request", format: Combined,
			line: `192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "-" 400 0 "-" "-"`,
			want: &want{client: "192.0.2.1", host: "site.example", status: 400, bytes: 0, start: "2026-10-10T13:55:36Z", end: "2026-10-10T13:55:36Z"},
		},
		{
			name: "space inside the target", format: Combined,
			line: `192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "GET /a b HTTP/1.1" 404 0 "-" "LohiSoftBot/1.0"`,
			want: &want{client: "192.0.2.1", method: "GET", target: "/a b", proto: "HTTP/1.1", ua: "LohiSoftBot/1.0", host: "site.example",
				status: 404, bytes: 0, start: "2026-10-10T13:55:36Z", end: "2026-10-10T13:55:36Z", claimed: true},
		},
		{
			name: "bare quote left inside the last field", format: Combined,
			line: `192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" 200 5 "-" "bad "quote" LohiSoftBot"`,
			want: &want{client: "192.0.2.1", method: "GET", target: "/", proto: "HTTP/1.1", ua: `bad "quote" LohiSoftBot`, host: "site.example",
				status: 200, bytes: 5, start: "2026-10-10T13:55:36Z", end: "2026-10-10T13:55:36Z", claimed: true},
		},
		{
			name: "common", format: Common,
			line: `127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326`,
			want: &want{client: "127.0.0.1", user: "frank", method: "GET", target: "/apache_pb.gif", proto: "HTTP/1.0", host: "site.example",
				status: 200, bytes: 2326, start: "2000-10-10T13:55:36-07:00", end: "2000-10-10T13:55:36-07:00"},
		},
		{
			name: "vhost_combined with port", format: VhostCombined,
			line: `Blog.Example:443 79.139.58.121 - - [10/Oct/2026:13:55:36 +0000] "GET /robots.txt HTTP/1.1" 200 120 "-" "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"`,
			want: &want{client: "79.139.58.121", method: "GET", target: "/robots.txt", proto: "HTTP/1.1", ua: "LohiSoftBot/1.0 (+https://lohisoft.com/bot)",
				host: "blog.example", status: 200, bytes: 120, start: "2026-10-10T13:55:36Z", end: "2026-10-10T13:55:36Z", claimed: true},
		},
		{
			name: "nginx with request_time: the logged time is the end", format: timed,
			line: `79.139.58.98 - - [10/Oct/2026:13:55:36 +0000] "GET /x HTTP/1.1" 429 0 "-" "LohiSoftBot/1.0" www.Example.org:8080 1.250 "120"`,
			want: &want{client: "79.139.58.98", method: "GET", target: "/x", proto: "HTTP/1.1", ua: "LohiSoftBot/1.0", host: "www.example.org", retry: "120",
				status: 429, bytes: 0, start: "2026-10-10T13:55:34.75Z", end: "2026-10-10T13:55:36Z", dur: 1250 * time.Millisecond, claimed: true},
		},
		{
			name: "apache with %D: the logged time is the start", format: apacheTimed,
			line: `shop.example 79.139.58.98 - - [10/Oct/2026:13:55:36 +0000] "GET /x HTTP/1.1" 503 10 "-" "LohiSoftBot/1.0" 2500000 "Wed, 21 Oct 2026 07:28:00 GMT"`,
			want: &want{client: "79.139.58.98", method: "GET", target: "/x", proto: "HTTP/1.1", ua: "LohiSoftBot/1.0", host: "shop.example", retry: "Wed, 21 Oct 2026 07:28:00 GMT",
				status: 503, bytes: 10, start: "2026-10-10T13:55:36Z", end: "2026-10-10T13:55:38.5Z", dur: 2500 * time.Millisecond, claimed: true},
		},
		{
			name: "json with $-prefixed keys and msec", format: JSON,
			line: `{"$remote_addr":"79.139.58.98","msec":"1791640536.125","request":"GET /p?q=\"1\" HTTP/1.1","status":"200","body_bytes_sent":"12","http_user_agent":"LohiSoftBot/1.0 (+message@lohisoft.com)","host":"A.example","request_time":"0.125","remote_user":"","extra":{"nested":[1,2,"}"]}}`,
			want: &want{client: "79.139.58.98", method: "GET", target: `/p?q="1"`, proto: "HTTP/1.1", ua: "LohiSoftBot/1.0 (+message@lohisoft.com)", host: "a.example",
				status: 200, bytes: 12, start: "2026-10-10T13:55:36Z", end: "2026-10-10T13:55:36.125Z", dur: 125 * time.Millisecond, claimed: true},
		},
		{
			name: "json with numbers, iso time and unicode escapes", format: JSON,
			line: `{"time_iso8601":"2026-10-10T15:55:36+02:00","remote_addr":"2001:db8::1","request_method":"GET","request_uri":"/\u00e9","status":404,"body_bytes_sent":0,"http_user_agent":"x \u004cohiSoftBot \u001b[31m"}`,
			want: &want{client: "2001:db8::1", method: "GET", target: "/é", ua: "x LohiSoftBot \x1b[31m", host: "site.example",
				status: 404, bytes: 0, start: "2026-10-10T15:55:36+02:00", end: "2026-10-10T15:55:36+02:00", claimed: true},
		},
		{name: "truncated line", format: Combined, line: `79.139.58.98 - - [10/Oct/2026:13:55:36 +0200] "GET /a HTTP/1.1" 200`, reason: "no"},
		{name: "bad month", format: Combined, line: `1.2.3.4 - - [10/Foo/2026:13:55:36 +0200] "GET / HTTP/1.1" 200 1 "-" "-"`, reason: "bad time"},
		{name: "bad status", format: Combined, line: `1.2.3.4 - - [10/Oct/2026:13:55:36 +0200] "GET / HTTP/1.1" 2x0 1 "-" "-"`, reason: "bad status"},
		{name: "combined line under common", format: Common, line: `1.2.3.4 - - [10/Oct/2026:13:55:36 +0200] "GET / HTTP/1.1" 200 1 "-" "-"`, reason: "bad bytes"},
		{name: "vhost line is not combined", format: Combined, line: `www.example.com:443 203.0.113.10 - - [01/Dec/2026:06:25:01 +0100] "GET / HTTP/1.1" 200 5 "-" "-"`, reason: "has a port"},
		{name: "trailing garbage", format: Combined, line: `1.2.3.4 - - [10/Oct/2026:13:55:36 +0200] "GET / HTTP/1.1" 200 1 "-" "-" extra`, reason: "unexpected text after the last field at byte 72"},
		{name: "empty line", format: Combined, line: ``, reason: "no"},
		{name: "json not an object", format: JSON, line: `["a"]`, reason: "not a JSON object"},
		{name: "json without address", format: JSON, line: `{"time_local":"10/Oct/2026:13:55:36 +0200","status":200}`, reason: "no remote_addr"},
		{name: "json unterminated", format: JSON, line: `{"remote_addr":"1.2.3.4","time_local":"10/Oct/2026:13:55:36 +0200"`, reason: "expected"},
		{name: "json trailing text", format: JSON, line: `{"remote_addr":"1.2.3.4","msec":"1.5"} x`, reason: "text after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, reason := parseOne(t, tt.format, tt.line)
			if tt.want == nil {
				if rec != nil {
					t.Fatalf("line parsed, want malformed (%s): %+v", tt.reason, rec)
				}
				if !strings.Contains(reason, tt.reason) {
					t.Fatalf("reason %q, want it to contain %q", reason, tt.reason)
				}
				return
			}
			if rec == nil {
				t.Fatalf("malformed: %s", reason)
			}
			w := tt.want
			got := want{client: rec.Client.String(), user: rec.RemoteUser, method: rec.Method, target: rec.Target, proto: rec.Proto,
				ua: rec.UserAgent, host: rec.Host, retry: rec.RetryAfter, status: rec.Status, bytes: rec.Bytes,
				start: rec.Start.Format(time.RFC3339Nano), end: rec.End.Format(time.RFC3339Nano), dur: rec.Duration, claimed: rec.Claimed}
			if got != *w {
				t.Errorf("got  %+v\nwant %+v", got, *w)
			}
			if !rec.Start.Equal(mustTime(t, w.start)) {
				t.Errorf("start %v, want %v", rec.Start, w.start)
			}
		})
	}
}

func TestFormatCompileErrors(t *testing.T) {
	tests := []struct {
		spec, want string
	}{
		{`nginx:$remote_addr$remote_user [$time_local] "$http_user_agent"`, "position 13"},
		{`nginx:$remote_addr [${time_local] "$http_user_agent"`, "unterminated ${"},
		{`nginx:$remote_addr [$time_local] "$"`, "not followed by a variable name"},
		{`nginx:[$time_local] "$http_user_agent"`, "no client address"},
		{`nginx:$remote_addr "$http_user_agent"`, "no time field"},
		{`nginx:'$remote_addr [$time_local]`, "unterminated quote"},
		{`apache:%h %t %Z`, "unknown directive %Z"},
		{`apache:%h %t %{Referer`, "unterminated %{"},
		{`apache:%h %t %`, "at the end"},
		{`apache:%h %{%H:%M}t`, "give no whole time"},
		{`apache:%h %{%Y-%m-%d %Q}t`, "%Q is not a strftime conversion"},
		{`apache:%h %{%Y %H:%M:%S}t`, "not the whole date"},
		{`apache:%h %t %{foo}T`, "unknown unit"},
		{`apache:%h %t %i`, "needs a header name"},
		{`apache:`, "empty format"},
		{`xml`, "unknown --log-format"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			f, err := ParseFormatSpec(tt.spec)
			if err == nil {
				t.Fatalf("compiled to %v, want an error", f)
			}
			if !errors.Is(err, ErrFormat) {
				t.Errorf("error %v does not wrap ErrFormat", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is more than one line: %q", err)
			}
		})
	}
}

func TestFormatSpecs(t *testing.T) {
	tests := []struct {
		spec, line string
	}{
		{`nginx:log_format main '$remote_addr - $remote_user [$time_local] "$request" '
		'$status $body_bytes_sent "$http_referer" "$http_user_agent"';`,
			`1.2.3.4 - - [10/Oct/2026:13:55:36 +0200] "GET / HTTP/1.1" 200 1 "-" "LohiSoftBot"`},
		{`nginx:'$remote_addr' [$time_local]`, ""},
		{`nginx:'$remote_addr - $remote_user [$time_local] "$request" ' '$status $body_bytes_sent "$http_referer" "$http_user_agent"'`,
			`1.2.3.4 - - [10/Oct/2026:13:55:36 +0200] "GET / HTTP/1.1" 200 1 "-" "LohiSoftBot"`},
		{`nginx:escape=json '{"ip":"$remote_addr","t":"$time_iso8601","ua":"$http_user_agent"}'`,
			`{"ip":"1.2.3.4","t":"2026-10-10T13:55:36+02:00","ua":"a \"LohiSoftBot\""}`},
		{`apache:"%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\""`,
			`1.2.3.4 - - [10/Oct/2026:13:55:36 +0200] "GET / HTTP/1.1" 200 1 "-" "LohiSoftBot"`},
		{`apache:%a %{end:sec}t "%r" %>s "%{User-Agent}i" %{ms}T`,
			`1.2.3.4 1791640536 "GET / HTTP/1.1" 200 "LohiSoftBot" 12`},
		{`combined`, `1.2.3.4 - - [10/Oct/2026:13:55:36 +0200] "GET / HTTP/1.1" 200 1 "-" "LohiSoftBot"`},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			f, err := ParseFormatSpec(tt.spec)
			if tt.line == "" {
				if err == nil {
					t.Fatalf("want an error for text outside the quotes")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rec, reason := parseOne(t, f, tt.line)
			if rec == nil {
				t.Fatalf("line does not parse: %s", reason)
			}
			if !rec.Claimed || rec.Client != netip.MustParseAddr("1.2.3.4") || rec.Time.IsZero() {
				t.Errorf("got %+v", rec)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	files, err := filepath.Glob("../testdata/logs/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test logs: %v", err)
	}
	want := map[string]string{
		"common.log":         "common",
		"combined.log":       "combined",
		"vhost_combined.log": "vhost_combined",
		"nginx_json.log":     "json",
		"nginx_main.log":     "nginx_main",
	}
	seen := 0
	for _, file := range files {
		w, ok := want[filepath.Base(file)]
		if !ok {
			continue
		}
		seen++
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Detect(data)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if f.Name() != w {
			t.Errorf("%s: detected %s, want %s", file, f.Name(), w)
		}
	}
	if seen != len(want) {
		t.Errorf("found %d of the %d test logs", seen, len(want))
	}
	if _, err := Detect([]byte("hello world\nnot a log\n")); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("Detect(garbage) = %v, want ErrUnknownFormat", err)
	}
}

// readAll reads everything from a Reader.
func readAll(t *testing.T, r *Reader) []*Record {
	t.Helper()
	var out []*Record
	for r.Scan() {
		out = append(out, r.Record())
	}
	return out
}

func TestReaderChunksAndLineNumbers(t *testing.T) {
	var b strings.Builder
	wantLines := map[int64]bool{}
	for i := 1; i <= 5000; i++ {
		ua := "Mozilla/5.0"
		if i%7 == 0 {
			ua = "LohiSoftBot/1.0"
			wantLines[int64(i)] = true
		}
		if i%101 == 0 {
			b.WriteString("garbage\n")
			continue
		}
		b.WriteString(`192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "GET /` + strings.Repeat("x", i%300) + ` HTTP/1.1" 200 1 "-" "` + ua + "\"\r\n")
	}
	for _, chunk := range []int{64, 1000, 4096, 1 << 20} {
		r := NewReader(strings.NewReader(b.String()), Options{Claims: testClaims, Name: "t.log", ChunkSize: chunk, Workers: 3})
		recs := readAll(t, r)
		if r.Err() != nil {
			t.Fatal(r.Err())
		}
		got := 0
		for _, rec := range recs {
			if !wantLines[rec.Line] && rec.Line%101 != 0 {
				t.Fatalf("chunk %d: record at line %d is not a claimed hit", chunk, rec.Line)
			}
			if rec.File != "t.log" {
				t.Fatalf("file %q", rec.File)
			}
			got++
		}
		want := 0
		for l := range wantLines {
			if l%101 != 0 {
				want++
			}
		}
		st := r.Stats()
		if got != want || st.Lines != 5000 || st.Malformed != 5000/101 {
			t.Errorf("chunk %d: %d records (want %d), %d lines, %d malformed", chunk, got, want, st.Lines, st.Malformed)
		}
		ex := r.Examples()
		if len(ex) != DefaultMaxExamples || ex[0].Line != 101 || ex[1].Line != 202 || ex[0].Text != "garbage" {
			t.Errorf("chunk %d: examples %v", chunk, ex)
		}
	}
}

func TestReaderLongLines(t *testing.T) {
	long := strings.Repeat("a", 3<<20)
	tooLong := strings.Repeat("b", MaxLineLength+100)
	in := `192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "GET /` + long + ` HTTP/1.1" 200 1 "-" "LohiSoftBot"` + "\n" +
		tooLong + "\n" +
		`192.0.2.2 - - [10/Oct/2026:13:55:37 +0000] "GET /b HTTP/1.1" 200 1 "-" "LohiSoftBot"` + "\n" +
		tooLong // at the end, without a newline
	r := NewReader(strings.NewReader(in), Options{Claims: testClaims, Name: "long.log", Format: Combined, ChunkSize: 1 << 16})
	recs := readAll(t, r)
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	if len(recs) != 2 || recs[0].Line != 1 || len(recs[0].Target) != len(long)+1 || recs[1].Line != 3 || recs[1].Target != "/b" {
		t.Fatalf("got %d records", len(recs))
	}
	st := r.Stats()
	if st.Lines != 4 || st.Malformed != 2 {
		t.Errorf("stats %+v, want 4 lines, 2 malformed", st)
	}
	if ex := r.Examples(); len(ex) != 2 || ex[0].Line != 2 || ex[1].Line != 4 || !strings.Contains(ex[0].Reason, "longer than") {
		t.Errorf("examples %v", ex)
	}
}

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReaderGzip(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 20000; i++ {
		b.WriteString(`192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "GET /page/` + strings.Repeat("p", i%50) + ` HTTP/1.1" 200 1 "-" "LohiSoftBot/1.0"` + "\n")
	}
	full := gz(t, b.String())
	// Two members, as when rotated files are concatenated.
	twice := append(append([]byte{}, full...), full...)
	r := NewReader(bytes.NewReader(twice), Options{Claims: testClaims, Name: "a.gz"})
	if n := len(readAll(t, r)); n != 40000 || r.Err() != nil || !r.Stats().Gzip {
		t.Fatalf("two members: %d records, err %v, stats %+v", n, r.Err(), r.Stats())
	}

	cut := full[:len(full)*2/3]
	r = NewReader(bytes.NewReader(cut), Options{Claims: testClaims, Name: "cut.gz", ChunkSize: 4096})
	n := len(readAll(t, r))
	var re *ReadError
	if !errors.As(r.Err(), &re) || !errors.Is(r.Err(), ErrTruncated) {
		t.Fatalf("err %v, want a ReadError wrapping ErrTruncated", r.Err())
	}
	if re.File != "cut.gz" || re.Offset != int64(len(cut)) {
		t.Errorf("error at %s byte %d, want cut.gz byte %d", re.File, re.Offset, len(cut))
	}
	if n < 1000 || int64(n) < r.Stats().Lines-1 {
		t.Errorf("only %d records of %d lines read before the damage", n, r.Stats().Lines)
	}
}

type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestReaderReadError(t *testing.T) {
	line := `192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" 200 1 "-" "LohiSoftBot/1.0"` + "\n"
	boom := errors.New("input/output error")
	r := NewReader(&failingReader{data: []byte(line + line), err: boom}, Options{Claims: testClaims, Name: "disk.log", Format: Combined})
	if n := len(readAll(t, r)); n != 2 {
		t.Errorf("%d records before the error, want 2", n)
	}
	if !errors.Is(r.Err(), boom) {
		t.Errorf("err %v, want %v", r.Err(), boom)
	}
}

func TestReaderListedAddresses(t *testing.T) {
	in := `79.139.58.98 - - [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" 200 1 "-" "Mozilla/5.0"
192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" 200 1 "-" "Mozilla/5.0"
79.139.058.98 - - [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" 200 1 "-" "Mozilla/5.0"
2001:db8::5 - - [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" 200 1 "-" "Mozilla/5.0"
`
	set := addrset.New([]netip.Prefix{netip.MustParsePrefix("79.139.58.98/32"), netip.MustParsePrefix("2001:db8::/64")})
	r := NewReader(strings.NewReader(in), Options{Claims: testClaims, Name: "x", Format: Combined, Listed: set})
	recs := readAll(t, r)
	if len(recs) != 2 || recs[0].Line != 1 || recs[1].Line != 4 || recs[0].Claimed {
		t.Fatalf("got %d records", len(recs))
	}
}

func TestReaderTrustXFF(t *testing.T) {
	in := `10.0.0.1 - - [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" 200 1 "-" "LohiSoftBot/1.0" "79.139.58.98, 203.0.113.9"` + "\n"
	for _, trust := range []bool{false, true} {
		r := NewReader(strings.NewReader(in), Options{Claims: testClaims, Name: "x", Format: NginxMain, TrustXFF: trust})
		recs := readAll(t, r)
		if len(recs) != 1 {
			t.Fatalf("got %d records", len(recs))
		}
		want := "10.0.0.1"
		if trust {
			want = "203.0.113.9" // the address the operator's proxy appended
		}
		if recs[0].Client.String() != want {
			t.Errorf("trust %v: client %s, want %s", trust, recs[0].Client, want)
		}
	}
}

func TestReaderEmptyAndCloseEarly(t *testing.T) {
	r := NewReader(strings.NewReader(""), Options{Claims: testClaims, Name: "empty"})
	if r.Scan() || r.Err() != nil || r.Stats().Lines != 0 {
		t.Errorf("empty input: err %v, stats %+v", r.Err(), r.Stats())
	}
	var b strings.Builder
	for i := 0; i < 100000; i++ {
		b.WriteString(`192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" 200 1 "-" "LohiSoftBot/1.0"` + "\n")
	}
	r = NewReader(strings.NewReader(b.String()), Options{Claims: testClaims, Name: "big", ChunkSize: 4096})
	if !r.Scan() {
		t.Fatal("no record")
	}
	r.Close() // must not hang or leak
}

func TestOneTokenClaimsContains(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"LohiSoftBot/1.0", true},
		{"mozilla (compatible; lohisoftbot)", true},
		{"xxLOHISOFTBOTxx", false},
		{"xx LOHISOFTBOT/xx", true},
		{"LohiSoftBo", false},
		{"LohiSoft Bot", false},
		{"", false},
		{"tttttttttttttttttttt", false},
		{"LohiSoftBoT", true},
		{"lohisoftbotlohisoftbot", false},
		{"lohisoftbot;lohisoftbot", true},
		{"ohiSoftBot", false},
	}
	for _, tt := range tests {
		if got := testClaims.Contains([]byte(tt.in)); got != tt.want {
			t.Errorf("testClaims.Contains(%q) = %v, want %v", tt.in, got, tt.want)
		}
		if got := naiveMatch([][]string{{"LohiSoftBot"}}, []byte(tt.in)) != 0; got != tt.want {
			t.Errorf("test case %q is wrong", tt.in)
		}
	}
}

func TestNormalizeSite(t *testing.T) {
	tests := map[string]string{
		"Blog.Example:443":   "blog.example",
		"blog.example.":      "blog.example",
		"[2001:db8::1]:8080": "2001:db8::1",
		"2001:db8::1":        "2001:db8::1",
		"-":                  "",
		"":                   "",
	}
	for in, want := range tests {
		if got := NormalizeSite(in); got != want {
			t.Errorf("NormalizeSite(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEscapeControl(t *testing.T) {
	tests := map[string]string{
		"plain":                         "plain",
		"a\x1b[31mred":                  `a\x1b[31mred`,
		"tab\there":                     `tab\x09here`,
		"bad\xffutf8":                   `bad\xffutf8`,
		"é ok":                          "é ok",
		"c1\u0085next":                  `c1\u0085next`,
		"bidi\u202eevil":                `bidi\u202eevil`,
		"del\x7f":                       `del\x7f`,
		"newline\r\nbreaks":             `newline\x0d\x0abreaks`,
		"rlm\u200f lrm\u200e alm\u061c": `rlm\u200f lrm\u200e alm\u061c`,
		"tags\U000e0041\U000e007f":      `tags\U000e0041\U000e007f`,
	}
	for in, want := range tests {
		if got := EscapeControl(in); got != want {
			t.Errorf("EscapeControl(%q) = %q, want %q", in, got, want)
		}
	}
	// EscapeFunc chooses the runes beyond ASCII; the ASCII controls and
	// invalid UTF-8 are escaped whatever it chooses.
	zeroWidth := func(r rune) bool { return r == 0x200b }
	for in, want := range map[string]string{
		"zero\u200bwidth\x1b": `zero\u200bwidth\x1b`,
		"bidi\u202e\xff":      "bidi\u202e\\xff",
	} {
		if got := EscapeFunc(in, zeroWidth); got != want {
			t.Errorf("EscapeFunc(%q) = %q, want %q", in, got, want)
		}
	}
}

var _ io.Reader = (*failingReader)(nil)

func TestReaderStop(t *testing.T) {
	line := `192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" 200 1 "-" "Mozilla/5.0"` + "\n"
	pr, pw := io.Pipe()
	go func() {
		for i := 0; i < 1000; i++ {
			if _, err := pw.Write([]byte(line)); err != nil {
				return
			}
		}
		// then nothing more: the input never ends by itself
	}()
	r := NewReader(pr, Options{Claims: testClaims, Name: "-", Format: Combined, ChunkSize: 4096})
	done := make(chan bool)
	go func() { done <- r.Scan() }()
	time.Sleep(50 * time.Millisecond)
	r.Stop()
	select {
	case more := <-done:
		if more || !errors.Is(r.Err(), ErrStopped) {
			t.Errorf("Scan = %v, Err = %v; want false, ErrStopped", more, r.Err())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Scan did not return after Stop")
	}
	pw.Close()
}

func TestReaderCounts(t *testing.T) {
	in := `192.0.2.1 - a b [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" 200 1 "-" "LohiSoftBot/1.0"
garbage LohiSoftBot garbage
192.0.2.2 - - [10/Oct/2026:13:55:40 +0000] "GET / HTTP/1.1" 200 1 "-" "Mozilla/5.0"
` + strings.Repeat("x", MaxLineLength+10) + "\n"
	r := NewReader(strings.NewReader(in), Options{Claims: testClaims, Name: "c", Format: Combined, ChunkSize: 1 << 16})
	recs := readAll(t, r)
	st := r.Stats()
	if len(recs) != 1 || recs[0].RemoteUser != "a b" {
		t.Fatalf("a remote user with a space must not hide the claimed hit: %d records", len(recs))
	}
	if st.Malformed != 2 || st.MalformedClaims != 1 || st.Bytes != int64(len(in)) {
		t.Errorf("stats %+v, want 2 malformed (1 claiming), %d bytes", st, len(in))
	}
	if !st.FirstTime.Equal(time.Date(2026, 10, 10, 13, 55, 36, 0, time.UTC)) || !st.LastTime.Equal(time.Date(2026, 10, 10, 13, 55, 40, 0, time.UTC)) {
		t.Errorf("covers %v .. %v", st.FirstTime, st.LastTime)
	}
}

// TestOneTokenClaimsEverywhere puts the token at every offset of texts of
// every length, in several cases, between boundaries and padding made of
// the anchor letter ('f'), and checks near-misses: one letter changed,
// and the token touching a letter on either side.
func TestOneTokenClaimsEverywhere(t *testing.T) {
	for _, tok := range []string{"LohiSoftBot", "lohisoftbot", "LOHISOFTBOT", "lOhIsOfTbOt"} {
		for size := len(tok) + 2; size < 42; size++ {
			for at := 0; at+len(tok)+2 <= size; at++ {
				rest := size - at - len(tok) - 2
				b := []byte(strings.Repeat("f", at) + " " + tok + "/" + strings.Repeat("F", rest))
				if !testClaims.Contains(b) {
					t.Fatalf("missed %q", b)
				}
				miss := []byte(strings.Repeat("x", at) + " " + tok[:len(tok)-1] + "x/" + strings.Repeat("f", rest))
				if testClaims.Contains(miss) {
					t.Fatalf("false match in %q", miss)
				}
				glued := []byte(strings.Repeat("f", at+1) + tok + strings.Repeat("F", rest+1))
				if testClaims.Contains(glued) {
					t.Fatalf("a token inside a word matched: %q", glued)
				}
			}
		}
	}
}

// TestLineNoAllocations: a line that is not of interest is checked without
// allocating, whatever the client (IPv4 or IPv6) and the listed set.
func TestLineNoAllocations(t *testing.T) {
	sets := map[string]*addrset.Set{
		"no list":     nil,
		"addresses":   addrset.New([]netip.Prefix{netip.MustParsePrefix("79.139.58.98/32")}),
		"ipv4 ranges": addrset.New([]netip.Prefix{netip.MustParsePrefix("79.139.58.0/24")}),
	}
	lines := []string{
		`203.0.113.10 - - [01/Dec/2026:06:25:01 +0100] "GET /a HTTP/1.1" 200 5120 "https://example.com/" "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"`,
		`2001:db8::10 - bob smith [01/Dec/2026:06:25:01 +0100] "GET /a HTTP/1.1" 200 5120 "-" "Mozilla/5.0"`,
	}
	for name, set := range sets {
		lp := newLineParser(Combined, testClaims, set, "s", false)
		var rec Record
		for _, l := range lines {
			line := []byte(l)
			if n := testing.AllocsPerRun(100, func() {
				if _, reason := lp.parse(line, &rec); reason != "" {
					t.Fatal(reason)
				}
			}); n != 0 {
				t.Errorf("%s: %v allocations per line for %.30q", name, n, l)
			}
		}
	}
}

// TestIsTerminalUnsafe names the runes no terminal output may carry raw:
// every bidi control, the other invisible format characters, and not the
// visible text of any script.
func TestIsTerminalUnsafe(t *testing.T) {
	unsafe := []rune{0x7f, 0x85, 0x9b, 0xad, 0x061c, 0x180e, 0x200b, 0x200c, 0x200d, 0x200e, 0x200f,
		0x2028, 0x2029, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2060, 0x2064, 0x2065, 0x2066, 0x2067,
		0x2068, 0x2069, 0x206f, 0x3164, 0xfe00, 0xfe0f, 0xfeff, 0xffa0, 0xfff9, 0xfffb, 0x1d173,
		0xe0001, 0xe0041, 0xe007f, 0xe0100, 0xe01ef}
	for _, r := range unsafe {
		if !IsTerminalUnsafe(r) {
			t.Errorf("IsTerminalUnsafe(%U) = false, want true", r)
		}
	}
	for _, r := range "aZ~ é ñ ß Ωж שלום مرحبا 日本語 한국어 ✓ 🙂 \u00a0\u3000\ufffd" {
		if IsTerminalUnsafe(r) {
			t.Errorf("IsTerminalUnsafe(%U) = true, want false", r)
		}
	}
}
