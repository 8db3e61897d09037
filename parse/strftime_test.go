package parse

import (
	"strings"
	"testing"
	"time"
)

// TestApacheTimeFormats reads Apache's %{FORMAT}t with strftime formats,
// the fraction tokens and begin:/end:, a time without an offset in the
// reader's zone (with summer time), and refuses dates that do not exist.
func TestApacheTimeFormats(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	const rest = ` "GET / HTTP/1.1" 200 5 "-" "LohiSoftBot/1.0"`
	for _, tc := range []struct {
		name, format, timeText string
		loc                    *time.Location
		want                   string // RFC 3339 in UTC; "" for malformed
		zoneless               bool
		start                  string // when it differs from want
	}{
		{"the issue's format, in New York in winter", `%{%Y-%m-%d %H:%M:%S}t`, "2026-12-01 06:25:01", ny, "2026-12-01T11:25:01Z", true, ""},
		{"in New York in summer", `%{%Y-%m-%d %H:%M:%S}t`, "2026-07-01 06:25:01", ny, "2026-07-01T10:25:01Z", true, ""},
		{"in UTC", `%{%Y-%m-%d %H:%M:%S}t`, "2026-07-01 06:25:01", time.UTC, "2026-07-01T06:25:01Z", true, ""},
		{"with an offset", `%{%Y-%m-%d %H:%M:%S %z}t`, "2026-07-01 06:25:01 +0200", ny, "2026-07-01T04:25:01Z", false, ""},
		{"with microseconds", `%{%Y-%m-%d %H:%M:%S}t.%{usec_frac}t`, "2026-12-01 06:25:01.123456", time.UTC, "2026-12-01T06:25:01.123456Z", true, ""},
		{"with milliseconds", `%{%d/%b/%Y:%H:%M:%S}t.%{msec_frac}t`, "01/Dec/2026:06:25:01.042", time.UTC, "2026-12-01T06:25:01.042Z", true, ""},
		{"end:", `%{end:%Y-%m-%dT%H:%M:%S%z}t`, "2026-12-01T06:25:01+0100", time.UTC, "2026-12-01T05:25:01Z", false, ""},
		{"begin: and a C-locale date", `%{begin:%a %b %e %H:%M:%S %Y}t`, "Tue Dec  1 06:25:01 2026", time.UTC, "2026-12-01T06:25:01Z", true, ""},
		{"%c", `%{%c}t`, "Tue Dec  1 06:25:01 2026", time.UTC, "2026-12-01T06:25:01Z", true, ""},
		{"12-hour clock", `%{%m/%d/%Y %I:%M:%S %p}t`, "12/01/2026 06:25:01 PM", time.UTC, "2026-12-01T18:25:01Z", true, ""},
		{"midnight on a 12-hour clock", `%{%m/%d/%Y %I:%M:%S %p}t`, "12/01/2026 12:25:01 AM", time.UTC, "2026-12-01T00:25:01Z", true, ""},
		{"day of the year", `%{%Y.%j %T}t`, "2026.335 06:25:01", time.UTC, "2026-12-01T06:25:01Z", true, ""},
		{"a full month name, %F and %T", `%{%d %B %Y %T}t`, "01 December 2026 06:25:01", time.UTC, "2026-12-01T06:25:01Z", true, ""},
		{"UTC by name", `%{%Y-%m-%d %H:%M:%S %Z}t`, "2026-12-01 06:25:01 UTC", ny, "2026-12-01T06:25:01Z", false, ""},
		{"seconds since the epoch", `%{%s}t`, "1796106301", ny, "2026-12-01T06:25:01Z", false, ""},
		{"date and time in two fields", `%{%Y-%m-%d}t %{%H:%M:%S}t`, "2026-12-01 06:25:01", time.UTC, "2026-12-01T06:25:01Z", true, ""},
		{"no 30 February", `%{%Y-%m-%d %H:%M:%S}t`, "2026-02-30 06:25:01", time.UTC, "", true, ""},
		{"no hour 24", `%{%Y-%m-%d %H:%M:%S}t`, "2026-12-01 24:25:01", time.UTC, "", true, ""},
		{"no year 0", `%{%Y-%m-%d %H:%M:%S %z}t`, "0000-12-01 06:25:01 +0000", time.UTC, "", false, ""},
		{"year 1 that is year 0 in UTC", `%{%Y-%m-%d %H:%M:%S %z}t`, "0001-01-01 00:25:01 +0100", time.UTC, "", false, ""},
		{"the other format", `%{%Y-%m-%d %H:%M:%S}t`, "01/Dec/2026:06:25:01", time.UTC, "", true, ""},
		{"%D after a time of end:", `%{end:%Y-%m-%d %H:%M:%S}t %D`, "2026-12-01 06:25:01 250000", time.UTC, "2026-12-01T06:25:01Z", true, "2026-12-01T06:25:00.75Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := CompileApache(`%h %l %u ` + tc.format + ` "%r" %>s %b "%{Referer}i" "%{User-Agent}i"`)
			if err != nil {
				t.Fatal(err)
			}
			if f.NeedsZone() != tc.zoneless {
				t.Errorf("NeedsZone() = %v", f.NeedsZone())
			}
			text := "203.0.113.10 - - " + tc.timeText + rest
			if strings.HasSuffix(tc.format, "%D") {
				text = "203.0.113.10 - - " + tc.timeText + rest
				f, err = CompileApache(`%h %l %u ` + strings.TrimSuffix(tc.format, " %D") + ` "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %D`)
				if err != nil {
					t.Fatal(err)
				}
				parts := strings.SplitN(tc.timeText, " ", 3)
				text = "203.0.113.10 - - " + parts[0] + " " + parts[1] + rest + " " + parts[2]
			}
			lp := newLineParser(f, testClaims, nil, "s", false)
			lp.loc = tc.loc
			var rec Record
			keep, reason := lp.parse([]byte(text), &rec)
			if tc.want == "" {
				if reason == "" {
					t.Fatalf("read %q as %v", text, rec.Time)
				}
				return
			}
			if !keep || reason != "" {
				t.Fatalf("%q: %s", text, reason)
			}
			if got := rec.Time.UTC().Format(time.RFC3339Nano); got != tc.want {
				t.Errorf("time %s, want %s", got, tc.want)
			}
			if tc.start != "" && rec.Start.UTC().Format(time.RFC3339Nano) != tc.start {
				t.Errorf("start %s, want %s", rec.Start.UTC().Format(time.RFC3339Nano), tc.start)
			}
		})
	}
}

// TestNginxTimes: $time_iso8601 and $msec.
func TestNginxTimes(t *testing.T) {
	for _, tc := range []struct{ format, text, want string }{
		{`$remote_addr [$time_iso8601] "$http_user_agent"`, `203.0.113.10 [2026-12-01T06:25:01+01:00] "LohiSoftBot"`, "2026-12-01T05:25:01Z"},
		{`$remote_addr $msec "$http_user_agent"`, `203.0.113.10 1796106301.042 "LohiSoftBot"`, "2026-12-01T06:25:01.042Z"},
	} {
		f, err := CompileNginx(tc.format)
		if err != nil {
			t.Fatal(err)
		}
		if f.NeedsZone() {
			t.Errorf("%s needs a zone", tc.format)
		}
		lp := newLineParser(f, testClaims, nil, "s", false)
		var rec Record
		if _, reason := lp.parse([]byte(tc.text), &rec); reason != "" || rec.Time.UTC().Format(time.RFC3339Nano) != tc.want {
			t.Errorf("%s: %v %q", tc.format, rec.Time, reason)
		}
	}
}

// TestTimeFormatErrors: formats of Apache's %{…}t that read no time, or
// a part of one only, are refused when compiled.
func TestTimeFormatErrors(t *testing.T) {
	for _, tc := range []struct{ format, says string }{
		{`%h %{%H:%M:%S}t "%r"`, "give no whole time"},
		{`%h %{%Y-%m-%d}t "%r"`, "give no whole time"},
		{`%h %{%Y-%m}t %{%T}t "%r"`, "not the whole date"},
		{`%h %{%Y-%m-%d %H:%M:%S %L}t "%r"`, "%L is not a strftime conversion"},
		{`%h%{%Y-%m-%d %H:%M:%S}t "%r"`, "two fields with nothing between them"},
		{`%h %{usec_frac}t "%r"`, "give no whole time"},
		{`%h %{%Y-%m-%d %H:%M:%S %}t "%r"`, "ends in '%'"},
	} {
		_, err := CompileApache(tc.format)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want %q", tc.format, err, tc.says)
		}
	}
}

// TestReaderLocation: the reader reads times without an offset in
// Options.Location, the machine's zone without it.
func TestReaderLocation(t *testing.T) {
	f, err := CompileApache(`%h %l %u %{%Y-%m-%d %H:%M:%S}t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"`)
	if err != nil {
		t.Fatal(err)
	}
	data := readServerLog(t, "apache_strftime.log")
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	// The strftime format has no fraction: the fixture's .123456 is
	// not read with it.
	recs, st, _ := readKeep(t, data, Options{Format: f, Location: tokyo})
	if st.Malformed != 2 || len(recs) != 0 {
		t.Fatalf("read %d records, %d malformed", len(recs), st.Malformed)
	}
	f, err = CompileApache(`%h %l %u %{%Y-%m-%d %H:%M:%S}t.%{usec_frac}t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"`)
	if err != nil {
		t.Fatal(err)
	}
	recs, st, _ = readKeep(t, data, Options{Format: f, Location: tokyo})
	if st.Malformed != 0 || len(recs) != 2 || recs[0].Time.UTC().Format(time.RFC3339Nano) != "2026-11-30T21:25:01.123456Z" || recs[0].Resolution != time.Microsecond {
		t.Fatalf("records %v, malformed %d", recs, st.Malformed)
	}
	recs, _, _ = readKeep(t, data, Options{Format: f})
	if want := time.Date(2026, 12, 1, 6, 25, 1, 123456000, time.Local); !recs[0].Time.Equal(want) {
		t.Errorf("without a Location: %v, want %v", recs[0].Time, want)
	}
}

// FuzzStrftime compiles arbitrary strftime formats and reads arbitrary
// text with them: an error or a layout, never a panic, and a time read
// is one a report can carry.
func FuzzStrftime(f *testing.F) {
	for _, s := range []string{"%Y-%m-%d %H:%M:%S", "%d/%b/%Y:%H:%M:%S %z", "%c", "%s", "%Y.%j %I:%M %p", "%e %B %Y %T %Z"} {
		f.Add(s, "2026-12-01 06:25:01")
	}
	f.Add("%d/%b/%Y:%H:%M:%S %z", "01/Dec/2026:06:25:01 +0100")
	f.Fuzz(func(t *testing.T, layout, text string) {
		l, err := compileStrftime(layout)
		if err != nil {
			return
		}
		var tc tcivil
		end := l.match([]byte(text), 0, &tc)
		if end > len(text) {
			t.Fatalf("read past the end: %d of %d", end, len(text))
		}
		if end < 0 {
			return
		}
		var tp timeParts
		tp.add(&tc, false)
		if tm, _, ok := tp.time(time.UTC); ok && !reportableTime(tm) {
			t.Fatalf("%q read %q as %v", layout, text, tm)
		}
	})
}

// TestNetneaExtendedFormat: the "extended" Apache format of netnea's
// tutorials (a strftime time with microseconds, %A, mod_ssl's %{…}x,
// ratios and ModSecurity's variables) reads, and so do trailers.
func TestNetneaExtendedFormat(t *testing.T) {
	f, err := CompileApache(`%h %{GEOIP_COUNTRY_CODE}e %u [%{%Y-%m-%d %H:%M:%S}t.%{usec_frac}t] "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %v %A %p %R %{BALANCER_WORKER_ROUTE}e %X "%{cookie}n" %{UNIQUE_ID}e %{SSL_PROTOCOL}x %{SSL_CIPHER}x %I %O %{ratio}n%% %D %{ModSecTimeIn}e %{ApplicationTime}e %{ModSecTimeOut}e %{ModSecAnomalyScoreIn}e %{ModSecAnomalyScoreOut}e %{grpc-status}^to`)
	if err != nil {
		t.Fatal(err)
	}
	zurich, _ := time.LoadLocation("Europe/Zurich")
	line := `203.0.113.10 CH - [2026-07-01 12:53:11.139981] "GET /index.html HTTP/1.1" 200 7362 "-" "LohiSoftBot/1.0" www.example.org 192.0.2.16 443 proxy-server - + "-" YmFzZTY0aWQ TLSv1.3 TLS_AES_128_GCM_SHA256 963 11973 -% 935006 1542 930596 2156 0 0 -`
	lp := newLineParser(f, testClaims, nil, "s", false)
	lp.loc = zurich
	var rec Record
	if keep, reason := lp.parse([]byte(line), &rec); !keep || reason != "" {
		t.Fatalf("%q", reason)
	}
	if got := rec.Time.UTC().Format(time.RFC3339Nano); got != "2026-07-01T10:53:11.139981Z" || rec.Host != "www.example.org" || !rec.HasDuration || rec.Duration != 935006*time.Microsecond {
		t.Errorf("time %s, site %q, duration %v", got, rec.Host, rec.Duration)
	}
}
