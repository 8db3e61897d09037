package parse

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// readFixture reads a log of testdata/logs in the format given (nil:
// detect) and returns the records of every well-formed line.
func readFixture(t *testing.T, name string, f *Format) ([]*Record, *Reader) {
	t.Helper()
	path := filepath.Join("..", "testdata", "logs", name)
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	r := NewReader(fh, Options{Claims: testClaims, Name: name, Format: f, KeepAll: true, Site: "file.example", Workers: 2, ChunkSize: 256})
	recs := readAll(t, r)
	return recs, r
}

// TestServerOutputs reads logs written the way the servers and log
// collectors write them: the detected format, every client and site, and
// the malformed count must be right. A syslog host or a virtual host is
// never a client.
func TestServerOutputs(t *testing.T) {
	const bot, other, v6 = "79.139.58.98", "198.51.100.23", "2001:db8:40::7"
	tests := []struct {
		file      string
		format    string   // detected
		clients   []string // of every well-formed line, in order
		sites     []string // of every well-formed line, in order
		malformed int64
	}{
		{"syslog_nginx_raw.log", "syslog+combined",
			[]string{"203.0.113.10", bot, bot, other, v6}, nil, 0},
		{"syslog_nginx_nohostname.log", "syslog+combined",
			[]string{"203.0.113.10", "79.139.58.121", "192.0.2.200"}, nil, 0},
		{"syslog_rsyslog_traditional.log", "syslog+combined",
			[]string{"203.0.113.10", bot, bot, other}, nil, 0},
		{"syslog_rsyslog_precise.log", "syslog+combined",
			[]string{"203.0.113.10", bot, bot, other}, nil, 0},
		{"syslog_rfc5424.log", "syslog+combined",
			[]string{"203.0.113.10", bot, bot, other}, nil, 0},
		{"journal_short.log", "syslog+combined",
			[]string{"203.0.113.10", bot, bot, other}, nil, 1},
		{"vhost_common.log", "vhost_common",
			[]string{"203.0.113.10", bot, bot, other, other},
			[]string{"www.example.com", "www.example.com", "shop.example.com", "192.0.2.80", "192.0.2.80"}, 0},
		{"vhost_combined_noport.log", "vhost_combined",
			[]string{"203.0.113.10", bot, bot, other},
			[]string{"www.example.com", "www.example.com", "shop.example.com", "192.0.2.80"}, 0},
		{"vhost_combined.log", "vhost_combined",
			[]string{"203.0.113.10", bot, bot, bot, other, "2001:db8::99", "192.0.2.44"},
			[]string{"www.example.com", "www.example.com", "shop.example.com", "www.example.com", "shop.example.com", "www.example.com", "www.example.com"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			recs, r := readFixture(t, tt.file, nil)
			if r.Err() != nil {
				t.Fatal(r.Err())
			}
			if got := r.Format().Name(); got != tt.format {
				t.Errorf("detected %s, want %s", got, tt.format)
			}
			var clients, sites []string
			for _, rec := range recs {
				clients = append(clients, rec.Client.String())
				sites = append(sites, rec.Host)
			}
			if !slices.Equal(clients, tt.clients) {
				t.Errorf("clients %v, want %v", clients, tt.clients)
			}
			wantSites := tt.sites
			if wantSites == nil {
				for range tt.clients {
					wantSites = append(wantSites, "file.example")
				}
			}
			if !slices.Equal(sites, wantSites) {
				t.Errorf("sites %v, want %v", sites, wantSites)
			}
			if st := r.Stats(); st.Malformed != tt.malformed {
				t.Errorf("%d malformed, want %d: %v", st.Malformed, tt.malformed, r.Examples())
			}

			// Given the plain format by name, the reader finds the syslog
			// header by itself; given a vhost format's plain sibling, no
			// line is taken.
			base := strings.TrimPrefix(tt.format, headerSyslog.prefix())
			plain := map[string]*Format{"vhost_common": Common, "vhost_combined": Combined}[base]
			if plain == nil {
				plain = LookupFormat(base)
			}
			recs, r = readFixture(t, tt.file, plain)
			if plain.Name() != base {
				// A vhost log read as the format without the virtual host
				// gives only its lines without one.
				if len(recs) != int(tt.malformed) {
					t.Errorf("%s took %d lines of a %s log, first client %q", plain.Name(), len(recs), base, recs[0].ClientRaw)
				}
				return
			}
			if got := r.Format().Name(); got != tt.format || len(recs) != len(tt.clients) {
				t.Errorf("given %s: read as %s, %d records; want %s, %d", base, got, len(recs), tt.format, len(tt.clients))
			}
		})
	}
}

// TestPlainFormatsRefuseShiftedLines: a line with a virtual host or a
// syslog header in front is not a line of a format without them, even
// when the first word is an address or a name and the remote user field
// could take in the shifted words.
func TestPlainFormatsRefuseShiftedLines(t *testing.T) {
	rest := ` - - [01/Dec/2026:06:25:01 +0100] "GET / HTTP/1.1" 200 5120 "-" "LohiSoftBot/1.0"`
	restCommon := ` - - [01/Dec/2026:06:25:01 +0100] "GET / HTTP/1.1" 200 5120`
	prefixes := []string{
		"192.0.2.80 203.0.113.10",
		"192.0.2.80:443 203.0.113.10",
		"www.example.com 203.0.113.10",
		"www.example.com:80 203.0.113.10",
		"[2001:db8::80]:443 203.0.113.10",
		"192.0.2.80 203.0.113.10 ident",
		"<190>Dec  1 06:25:01 192.0.2.50 nginx: 203.0.113.10",
		"Dec  1 06:25:01 192.0.2.50 nginx: 203.0.113.10",
		"Dec 12 06:25:01 web1.example.com nginx[1]: 203.0.113.10",
		"Dec 12 06:25:01 192.0.2.50 203.0.113.10",
		"2026-12-01T06:25:01.123456+01:00 192.0.2.50 nginx: 203.0.113.10",
		"<190>1 2026-12-01T06:25:01+01:00 192.0.2.50 nginx - - - 203.0.113.10",
		"1 2026-12-01T06:25:01+01:00 192.0.2.50 nginx - - - 203.0.113.10",
		"Tue 2026-12-01 06:25:01 CET 192.0.2.50 nginx[1]: 203.0.113.10",
	}
	for _, pre := range prefixes {
		for _, f := range []*Format{Combined, Common, NginxMain} {
			line := pre + rest
			if f == Common {
				line = pre + restCommon
			}
			for _, ipOnly := range []bool{true, false} {
				lp := newLineParser(f, testClaims, nil, "s", false)
				lp.keepAll, lp.ipOnly = true, ipOnly
				var rec Record
				if _, reason := lp.parse([]byte(line), &rec); reason == "" {
					t.Errorf("%s (ipOnly %v) took %q with client %q", f.Name(), ipOnly, line, rec.ClientRaw)
				}
			}
		}
	}
	// and the line itself, without the prefix, is fine
	if _, reason := parseOne(t, Combined, "203.0.113.10"+rest); reason != "" {
		t.Fatal(reason)
	}
}

// TestClientField: only an IP address literal is a client; with a given
// format a host name is accepted and flagged, anything else is malformed.
func TestClientField(t *testing.T) {
	tests := []struct {
		field  string
		client string // Client.String(), "" for a host name
		reason string // "" when accepted with a given format
		strict string // reason when the format was detected ("": same)
	}{
		{"192.0.2.1", "192.0.2.1", "", ""},
		{"2001:db8::1", "2001:db8::1", "", ""},
		{"::ffff:192.0.2.1", "192.0.2.1", "", ""},
		{"::", "::", "", ""},
		{"fe80::1%eth0", "fe80::1%eth0", "", ""},
		{"crawl-1.bot.lohisoft.com", "", "", "is a host name"},
		{"Crawl-1.Example.NET.", "", "", "is a host name"},
		{"localhost", "", "", "is a host name"},
		{"192.0.2.1:80", "", "has a port", ""},
		{"example.com:80", "", "has a port", ""},
		{"[2001:db8::1]:443", "", "has a port", ""},
		{"[2001:db8::1]", "", "bad client address", ""},
		{"192.0.2.01", "", "bad client address", ""},
		{"1.2.3", "", "bad client address", ""},
		{"1.2.3.4.5", "", "bad client address", ""},
		{"2001:db8::1::2", "", "bad client address", ""},
		{"Dec", "", "bad client address", ""},
		{"web1", "", "bad client address", ""},
		{"-", "", "bad client address", ""},
		{"exa mple.com", "", "", ""}, // the space is taken as the end of the field: fails later
		{"-bad-.example.com", "", "bad client address", ""},
		{"fe80::1%", "", "bad client address", ""},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			line := tt.field + ` - - [01/Dec/2026:06:25:01 +0100] "GET / HTTP/1.1" 200 1 "-" "LohiSoftBot/1.0"`
			rec, reason := parseOne(t, Combined, line)
			if strings.Contains(tt.field, " ") {
				if rec != nil {
					t.Fatalf("took a client with a space: %+v", rec)
				}
				return
			}
			switch {
			case tt.reason != "":
				if rec != nil || !strings.Contains(reason, tt.reason) {
					t.Fatalf("reason %q, want %q (record %+v)", reason, tt.reason, rec)
				}
			case rec == nil:
				t.Fatalf("malformed: %s", reason)
			case tt.client == "":
				if rec.Client.IsValid() || rec.ClientRaw != tt.field {
					t.Errorf("host name: Client %v, ClientRaw %q", rec.Client, rec.ClientRaw)
				}
			default:
				if rec.Client.String() != tt.client || rec.ClientRaw != tt.field {
					t.Errorf("Client %v, ClientRaw %q; want %s", rec.Client, rec.ClientRaw, tt.client)
				}
			}
			// as in a detected format
			lp := newLineParser(Combined, testClaims, nil, "s", false)
			lp.keepAll, lp.ipOnly = true, true
			var r2 Record
			_, reason = lp.parse([]byte(line), &r2)
			want := tt.strict
			if want == "" {
				want = tt.reason
			}
			if want == "" && reason != "" || want != "" && !strings.Contains(reason, want) {
				t.Errorf("detected format: reason %q, want %q", reason, want)
			}
		})
	}
}

// TestHostnameLookups: a log of host-name clients is not detected (the
// client field must hold addresses), and with the format given each such
// line is a record without an address, its name kept.
func TestHostnameLookups(t *testing.T) {
	_, r := readFixture(t, "hostname_lookups.log", nil)
	if !errors.Is(r.Err(), ErrUnknownFormat) || !strings.Contains(r.Err().Error(), "host name") {
		t.Fatalf("detected: err %v", r.Err())
	}
	recs, r := readFixture(t, "hostname_lookups.log", Combined)
	if r.Err() != nil || r.Stats().Malformed != 0 || len(recs) != 5 {
		t.Fatalf("given combined: err %v, %d records, stats %+v", r.Err(), len(recs), r.Stats())
	}
	var raw []string
	for _, rec := range recs {
		raw = append(raw, rec.ClientRaw)
		if rec.Client.IsValid() != (rec.ClientRaw == "198.51.100.23") {
			t.Errorf("line %d: Client %v for %q", rec.Line, rec.Client, rec.ClientRaw)
		}
	}
	want := []string{"dsl-203-0-113-10.example.net", "crawl-79-139-58-98.bot.lohisoft.com", "crawl-79-139-58-98.bot.lohisoft.com", "198.51.100.23", "localhost"}
	if !slices.Equal(raw, want) {
		t.Errorf("clients %q, want %q", raw, want)
	}
}

// TestSyslogHeaders: every header form the servers and collectors write
// comes off whole, and nothing else does.
func TestSyslogHeaders(t *testing.T) {
	const msg = "203.0.113.10 - - [01/Dec/2026:06:25:01 +0100] x"
	good := []string{
		"<190>Dec  1 06:25:01 web1 nginx: ",             // nginx
		"<190>Dec  1 06:25:01 nginx: ",                  // nginx nohostname
		"<7>Dec 31 23:59:60 web1 tag_1: ",               // leap second, small PRI
		"<0>Jan 01 00:00:00 192.0.2.50 nginx: ",         // host written as an address
		"Dec  1 06:25:01 web1 nginx: ",                  // rsyslog traditional file
		"Dec  1 06:25:01 web1 ",                         // no tag
		"2026-12-01T06:25:01.123456+01:00 web1 nginx: ", // rsyslog high precision
		"2026-12-01T06:25:01Z web1 nginx: ",
		"Dec 01 06:25:01 web1 nginx[812]: ",                         // journalctl short
		"Dec 01 06:25:01.123456 web1 nginx[812]: ",                  // short-precise
		"2026-12-01T06:25:01+0100 web1 nginx[812]: ",                // short-iso
		"2026-12-01T06:25:01.123456+0100 web1 nginx[812]: ",         // short-iso-precise
		"Tue 2026-12-01 06:25:01 CET web1 nginx[812]: ",             // short-full
		"Dec 01 06:25:01 nginx[812]: ",                              // --no-hostname
		"<190>1 2026-12-01T06:25:01.123456+01:00 web1 nginx - - - ", // RFC 5424
		"<190>1 2026-12-01T06:25:01Z web1 nginx 812 ID47 [a b=\"c\\\"]\"][x@1 y=\"\"] ",
		"<190>1 - - - - - - ",
		"1 2026-12-01T06:25:01+01:00 web1 nginx - - - ",
		"<190>1 2026-12-01T06:25:01+01:00 web1 nginx - - - \xef\xbb\xbf", // BOM
	}
	for _, h := range good {
		line := []byte(h + msg)
		if n := syslogHeaderLen(line); n != len(h) {
			t.Errorf("%q: header of %d bytes, want %d", h, n, len(h))
		}
	}
	bad := []string{
		msg,
		"www.example.com 203.0.113.10 - - [01/Dec/2026:06:25:01 +0100] x",
		"<192>Dec  1 06:25:01 web1 nginx: " + msg, // PRI out of range
		"<01>Dec  1 06:25:01 web1 nginx: " + msg,
		"<190Dec  1 06:25:01 web1 nginx: " + msg,
		"Dex  1 06:25:01 web1 nginx: " + msg,
		"Dec  1 6:25:01 web1 nginx: " + msg,
		"2026-12-01 06:25:01 web1 nginx: " + msg,
		"<190>1 2026-12-01T06:25:01+0100 web1 nginx - - - " + msg, // RFC 5424 wants hh:mm
		"<190>1 2026-12-01T06:25:01Z web1 nginx - - [unterminated " + msg,
		"<190>1 2026-12-01T06:25:01Z web1 nginx - - x" + msg,
		`{"remote_addr":"203.0.113.10"}`,
		"",
		"<",
		"Dec  1 06:25:01",
	}
	for _, l := range bad {
		if n := syslogHeaderLen([]byte(l)); n >= 0 {
			t.Errorf("%q: header of %d bytes, want none", l, n)
		}
	}
}

// TestDetectRefusesWhatDoesNotFit: a format is chosen only when more than
// half of the sampled lines fit it with an address as the client.
func TestDetectRefusesWhatDoesNotFit(t *testing.T) {
	good := `203.0.113.10 - - [01/Dec/2026:06:25:01 +0100] "GET / HTTP/1.1" 200 1 "-" "x"` + "\n"
	bad := "error: something happened\n"
	tests := []struct {
		name, in string
		want     string // "" for ErrUnknownFormat
	}{
		{"half", strings.Repeat(good, 5) + strings.Repeat(bad, 5), ""},
		{"more than half", strings.Repeat(good, 6) + strings.Repeat(bad, 5), "combined"},
		{"blank lines do not count", strings.Repeat(good, 3) + strings.Repeat("\n \t\n", 10) + strings.Repeat(bad, 2), "combined"},
		{"ports", strings.Repeat(strings.Replace(good, "203.0.113.10", "203.0.113.10:4431", 1), 4), ""},
		{"nothing", "\n\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Detect([]byte(tt.in))
			if tt.want == "" {
				if !errors.Is(err, ErrUnknownFormat) {
					t.Fatalf("detected %v (err %v), want ErrUnknownFormat", f, err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error of several lines: %q", err)
				}
				return
			}
			if err != nil || f.Name() != tt.want {
				t.Fatalf("detected %v, %v; want %s", f, err, tt.want)
			}
		})
	}
}

// TestParseFormatSpecNames: every preset name and alias, with and without
// "syslog+", names a format whose Name reads back to the same format.
func TestParseFormatSpecNames(t *testing.T) {
	names := map[string]string{
		"common": "common", "clf": "common", "combined": "combined", "vhost_common": "vhost_common",
		"vhost_combined": "vhost_combined", "nginx_main": "nginx_main", "main": "nginx_main", "json": "json", "jsonl": "json",
	}
	for spec, want := range names {
		for _, pre := range []string{"", "syslog+"} {
			f, err := ParseFormatSpec(pre + spec)
			if err != nil || f.Name() != pre+want || f.Syslog() != (pre != "") {
				t.Errorf("%s: %v, %v", pre+spec, f, err)
				continue
			}
			again, err := ParseFormatSpec(f.Name())
			if err != nil || again.Name() != f.Name() {
				t.Errorf("%s does not read back: %v", f.Name(), err)
			}
		}
	}
	for _, name := range DetectableFormats() {
		if LookupFormat(name) == nil {
			t.Errorf("detectable %s has no name", name)
		}
	}
	f, err := ParseFormatSpec(`syslog+nginx:$remote_addr [$time_local] "$http_user_agent"`)
	if err != nil || !f.Syslog() {
		t.Fatalf("syslog+nginx: %v, %v", f, err)
	}
	rec, reason := parseOne(t, f, `<190>Dec  1 06:25:01 web1 nginx: 192.0.2.7 [01/Dec/2026:06:25:01 +0100] "LohiSoftBot"`)
	if rec == nil || rec.Client != netip.MustParseAddr("192.0.2.7") || !rec.Claimed {
		t.Errorf("syslog+nginx line: %+v, %s", rec, reason)
	}
	for _, spec := range []string{"syslog+", "syslog+auto", "syslog+xml"} {
		if _, err := ParseFormatSpec(spec); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err %v, want ErrFormat", spec, err)
		}
	}
}

// TestTimesAReportCanCarry: a line whose time (as logged, in UTC, or the
// start derived from its duration) falls outside the years 0001-9999, or
// whose date does not exist, is malformed; the edges that stay inside are
// read, and every time read can be written as JSON.
func TestTimesAReportCanCarry(t *testing.T) {
	clf := func(ts string) string {
		return `192.0.2.1 - - [` + ts + `] "GET / HTTP/1.1" 200 1 "-" "LohiSoftBot/1.0"`
	}
	isoFmt, err := CompileNginx(`$remote_addr [$time_iso8601] "$http_user_agent"`)
	if err != nil {
		t.Fatal(err)
	}
	msecFmt, err := CompileNginx(`$remote_addr $msec "$http_user_agent"`)
	if err != nil {
		t.Fatal(err)
	}
	secFmt, err := CompileApache(`%h %{sec}t %{msec}t %{usec}t "%{User-Agent}i"`)
	if err != nil {
		t.Fatal(err)
	}
	durFmt, err := CompileNginx(`$remote_addr [$time_iso8601] $request_time "$http_user_agent"`)
	if err != nil {
		t.Fatal(err)
	}
	apacheDur, err := CompileApache(`%h %t %D "%{User-Agent}i"`)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		f    *Format
		line string
		want string // RFC 3339 UTC start, or "" for malformed
	}{
		{Combined, clf("31/Dec/9999:23:59:59 -0100"), ""}, // year 10000 in UTC
		{Combined, clf("31/Dec/9999:23:59:59 +0100"), "9999-12-31T22:59:59Z"},
		{Combined, clf("31/Dec/9999:23:59:59 +0000"), "9999-12-31T23:59:59Z"},
		{Combined, clf("31/Dec/9999:23:59:60 +0000"), ""}, // a leap second into 10000
		{Combined, clf("01/Jan/0001:00:00:00 +0100"), ""}, // year 0 in UTC
		{Combined, clf("01/Jan/0001:00:00:00 -0100"), "0001-01-01T01:00:00Z"},
		{Combined, clf("01/Jan/0001:00:00:00 +0000"), ""}, // the zero time, "no time" to every reader
		{Combined, clf("01/Jan/0001:00:00:01 +0000"), "0001-01-01T00:00:01Z"},
		{Combined, clf("01/Jan/0000:12:00:00 +0000"), ""},
		{Combined, clf("31/Dec/0000:23:30:00 -0100"), ""}, // 0001 in UTC, 0000 as logged
		{Combined, clf("29/Feb/2024:12:00:00 +0000"), "2024-02-29T12:00:00Z"},
		{Combined, clf("29/Feb/2100:12:00:00 +0000"), ""},
		{Combined, clf("31/Apr/2026:12:00:00 +0000"), ""},
		{Combined, clf("00/Dec/2026:12:00:00 +0000"), ""},
		{isoFmt, `192.0.2.1 [0000-06-01T00:00:00+00:00] "LohiSoftBot"`, ""},
		{isoFmt, `192.0.2.1 [9999-12-31T23:59:59.999-00:30] "LohiSoftBot"`, ""},
		{isoFmt, `192.0.2.1 [9999-12-31T23:59:59.999+00:30] "LohiSoftBot"`, "9999-12-31T23:29:59.999Z"},
		{isoFmt, `192.0.2.1 [0001-01-01T00:00:00Z] "LohiSoftBot"`, ""},
		{isoFmt, `192.0.2.1 [0001-01-01T01:00:00.5+01:00] "LohiSoftBot"`, "0001-01-01T00:00:00.5Z"},
		{isoFmt, `192.0.2.1 [2026-13-01T00:00:00Z] "LohiSoftBot"`, ""},
		{msecFmt, `192.0.2.1 253402300799.999 "LohiSoftBot"`, "9999-12-31T23:59:59.999Z"},
		{msecFmt, `192.0.2.1 253402300800.000 "LohiSoftBot"`, ""},
		{msecFmt, `192.0.2.1 9223372036.999 "LohiSoftBot"`, "2262-04-11T23:47:16.999Z"},
		{msecFmt, `192.0.2.1 99999999999999999999.5 "LohiSoftBot"`, ""},
		{msecFmt, `192.0.2.1 1791640536.125 "LohiSoftBot"`, "2026-10-10T13:55:36.125Z"},
		{secFmt, `192.0.2.1 1791640536 1791640536125 1791640536125000 "LohiSoftBot"`, "2026-10-10T13:55:36.125Z"},
		{secFmt, `192.0.2.1 1791640536 253402300800000 1791640536125000 "LohiSoftBot"`, ""},
		{secFmt, `192.0.2.1 1791640536 1791640536125 253402300800000000 "LohiSoftBot"`, ""},
		{durFmt, `192.0.2.1 [0001-01-01T00:00:05Z] 10.000 "LohiSoftBot"`, ""}, // starts before year 1
		{durFmt, `192.0.2.1 [0001-01-01T00:00:05Z] 5.000 "LohiSoftBot"`, ""},
		{durFmt, `192.0.2.1 [0001-01-01T00:00:05Z] 4.500 "LohiSoftBot"`, "0001-01-01T00:00:00.5Z"},
		{apacheDur, `192.0.2.1 [31/Dec/9999:23:59:59 +0000] 1000001 "LohiSoftBot"`, ""}, // ends in 10000
		{apacheDur, `192.0.2.1 [31/Dec/9999:23:59:58 +0000] 1000000 "LohiSoftBot"`, "9999-12-31T23:59:58Z"},
		{JSON, `{"remote_addr":"192.0.2.1","time_iso8601":"0001-01-01T00:00:05Z","request_time":"6","http_user_agent":"LohiSoftBot"}`, ""},
		{JSON, `{"remote_addr":"192.0.2.1","msec":"253402300800.5","http_user_agent":"LohiSoftBot"}`, ""},
		{JSON, `{"remote_addr":"192.0.2.1","time":"31/Dec/9999:23:59:59 -0100","http_user_agent":"LohiSoftBot"}`, ""},
		{JSON, `{"remote_addr":"192.0.2.1","time":"31/Dec/9999:23:59:59 +0100","http_user_agent":"LohiSoftBot"}`, "9999-12-31T22:59:59Z"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			rec, reason := parseOne(t, tt.f, tt.line)
			// a line not kept is judged the same way
			lp := newLineParser(tt.f, testClaims, nil, "s", false)
			var scratch Record
			_, unkept := lp.parse([]byte(strings.ReplaceAll(tt.line, "LohiSoftBot", "Mozilla")), &scratch)
			if (unkept == "") != (reason == "") {
				t.Errorf("kept line: %q, unkept line: %q", reason, unkept)
			}
			if tt.want == "" {
				if rec != nil {
					t.Fatalf("read, want malformed: start %v", rec.Start)
				}
				if reason == "" {
					t.Fatal("no reason")
				}
				return
			}
			if rec == nil {
				t.Fatalf("malformed: %s", reason)
			}
			if got := rec.Start.UTC().Format(time.RFC3339Nano); got != tt.want {
				t.Errorf("start %s, want %s", got, tt.want)
			}
			for _, tm := range []time.Time{rec.Time, rec.Start, rec.End, rec.Time.UTC(), rec.Start.UTC(), rec.End.UTC()} {
				if _, err := json.Marshal(tm); err != nil {
					t.Errorf("time %v cannot be written as JSON: %v", tm, err)
				}
			}
		})
	}
}

// TestLogsFromElsewhere reads logs modelled on the sample logs of other
// projects' test suites (a log parser's mixed-format file, an intrusion
// blocker's bad-request log, syslog messages as a collector receives
// them), rewritten with documentation addresses.
func TestLogsFromElsewhere(t *testing.T) {
	// A file of several formats: no format fits more than half, so none
	// is guessed; read as combined, the lines that are not combined are
	// malformed, each with its reason, and no host or vhost is a client.
	_, r := readFixture(t, "mixed_formats.log", nil)
	if !errors.Is(r.Err(), ErrUnknownFormat) || !strings.Contains(r.Err().Error(), "only 4 of the first 8 lines fit combined") {
		t.Errorf("mixed formats detected: %v", r.Err())
	}
	recs, r := readFixture(t, "mixed_formats.log", Combined)
	var clients []string
	for _, rec := range recs {
		clients = append(clients, rec.ClientRaw)
	}
	if want := []string{"198.51.100.41", "198.51.100.77", "203.0.113.135", "198.51.100.41"}; !slices.Equal(clients, want) {
		t.Errorf("mixed formats as combined: clients %v, want %v", clients, want)
	}
	var reasons []string
	for _, e := range r.Examples() {
		reasons = append(reasons, fmt.Sprintf("%d %s", e.Line, e.Reason))
	}
	for i, want := range []string{"4 an address \"192.0.2.4\" where the remote logname belongs", "6 no \" \\\"\" after the bytes field",
		"7 client address \"shop.example.net:443\" has a port", "8 bad client address \"[Thu\""} {
		if i >= len(reasons) || !strings.HasPrefix(reasons[i], want) {
			t.Errorf("mixed formats as combined: malformed %q, want %q first", reasons, want)
			break
		}
	}
	if st := r.Stats(); st.Malformed != 4 || st.MalformedClaims != 2 {
		t.Errorf("mixed formats as combined: stats %+v", st)
	}

	// Bad requests between blank lines: all read, none malformed.
	recs, r = readFixture(t, "nginx_bad_requests.log", nil)
	st := r.Stats()
	if r.Err() != nil || r.Format() != NginxMain || st.Lines != 13 || st.Blank != 6 || st.Malformed != 0 || len(recs) != 7 {
		t.Errorf("bad requests: err %v, format %v, %d records, stats %+v", r.Err(), r.Format(), len(recs), st)
	}
	if recs[2].Request != "\x03\x00\x00/*\xe0\x00\x00\x00\x00\x00Cookie: mstshash=Administr" || recs[2].Method != "" || recs[1].RemoteUser != "root" {
		t.Errorf("bad requests: %q %q %q", recs[2].Request, recs[2].Method, recs[1].RemoteUser)
	}

	// Syslog messages of a common log from two hosts.
	recs, r = readFixture(t, "syslog_collector.log", nil)
	clients = nil
	for _, rec := range recs {
		clients = append(clients, rec.Client.String())
	}
	if r.Format().Name() != "syslog+common" || !slices.Equal(clients, []string{"198.51.100.100", "79.139.58.121", "198.51.100.1"}) {
		t.Errorf("collector: %s, clients %v", r.Format().Name(), clients)
	}
}

// TestValidIPv4 checks the quick dotted-quad check against net/netip.
func TestValidIPv4(t *testing.T) {
	for _, s := range []string{"0.0.0.0", "255.255.255.255", "256.1.1.1", "1.2.3", "1.2.3.4.", ".1.2.3", "01.2.3.4", "1.2.3.00",
		"1..2.3", "1.2.3.4.5", "", "1", "10.0.0.1", "1.2.3.-4", "1.2.3.4a", "9999.1.1.1", "0.10.100.200"} {
		a, err := netip.ParseAddr(s)
		want := err == nil && a.Is4()
		if got := validIPv4([]byte(s)); got != want {
			t.Errorf("validIPv4(%q) = %v, netip says %v", s, got, want)
		}
		if _, ok := parseIPv4([]byte(s)); ok != want {
			t.Errorf("parseIPv4(%q) = %v, netip says %v", s, ok, want)
		}
	}
}
