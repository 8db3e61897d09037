package parse

import (
	"strings"
	"testing"
)

func TestContainerHeaderLen(t *testing.T) {
	const msg = `79.139.58.98 - - [04/Dec/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 612 "-" "LohiSoftBot/1.0"`
	for _, h := range []string{
		"2026-12-04T10:00:00.123456789Z stdout F ", // CRI (containerd, CRI-O)
		"2026-12-04T10:00:00.123456789Z stderr P ", // CRI, part of a long line
		"2026-12-04T10:00:00.123456789+01:00 stdout F ",
		"2026-12-04T10:00:00.123456789Z ",          // docker logs --timestamps
		"web-1  | ",                                // docker compose logs
		"my_app.web_1 | ",                          // compose v1, long names
		"web-1  | 2026-12-04T10:00:00.123456789Z ", // docker compose logs --timestamps
	} {
		if n := containerHeaderLen([]byte(h + msg)); n != len(h) {
			t.Errorf("header of %q: %d bytes, want %d", h, n, len(h))
		}
	}
	for _, l := range []string{
		msg, // no prefix: a combined line
		"",
		"web-1  |",
		"web-1  |x",
		"web 1  | " + msg, // the first word is taken for the name: no "| " after it
		"<190>Dec  1 06:25:01 web1 nginx: " + msg, // syslog
		"2026-12-04 10:00:00 " + msg,              // not RFC 3339 (W3C's date and time)
		"2026-12-04T10:00:00.5 " + msg,            // no zone
		strings.Repeat("a", 129) + " | " + msg,
	} {
		if n := containerHeaderLen([]byte(l)); n >= 0 {
			t.Errorf("%q has a header of %d bytes, want none", l, n)
		}
	}
}

// TestContainerLogs reads the same nginx lines as the container runtimes
// write them to files: each is detected as container+combined (or its
// given format is read after the prefix), and every record is the one the
// plain line gives, with its own line number.
func TestContainerLogs(t *testing.T) {
	plain := []string{
		`203.0.113.10 - - [04/Dec/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 612 "-" "Mozilla/5.0"`,
		`79.139.58.98 - - [04/Dec/2026:10:00:01 +0000] "GET /robots.txt HTTP/1.1" 200 80 "-" "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"`,
		`198.51.100.23 - - [04/Dec/2026:10:00:02 +0000] "GET /a HTTP/1.1" 404 0 "-" "LohiSoftBot/1.0"`,
	}
	wrap := map[string]func(i int, l string) string{
		"cri": func(i int, l string) string {
			return "2026-12-04T10:00:0" + string(rune('3'+i)) + ".123456789Z stdout F " + l
		},
		"compose":    func(i int, l string) string { return "nginx-1  | " + l },
		"compose -t": func(i int, l string) string { return "nginx-1  | 2026-12-04T10:00:03.5Z " + l },
		"docker -t":  func(i int, l string) string { return "2026-12-04T10:00:03.000000001Z " + l },
	}
	want := readString(t, strings.Join(plain, "\n")+"\n", nil)
	if len(want) != 3 {
		t.Fatalf("plain lines: %d records, want 3", len(want))
	}
	for name, w := range wrap {
		var b strings.Builder
		for i, l := range plain {
			b.WriteString(w(i, l) + "\n")
		}
		for _, given := range []*Format{nil, Combined} {
			r := NewReader(strings.NewReader(b.String()), Options{Claims: testClaims, Name: "c.log", Format: given, KeepAll: true, Site: "s.example"})
			got := readAll(t, r)
			if f := r.Format(); f == nil || f.Name() != "container+combined" {
				t.Errorf("%s (given %v): format %v, want container+combined", name, given, f)
			}
			if st := r.Stats(); st.Malformed != 0 {
				t.Errorf("%s: %d malformed: %v", name, st.Malformed, r.Examples())
			}
			if len(got) != len(want) {
				t.Fatalf("%s: %d records, want %d", name, len(got), len(want))
			}
			for i := range got {
				g, w := got[i], want[i]
				if g.Client != w.Client || !g.Time.Equal(w.Time) || g.UserAgent != w.UserAgent || g.Path() != w.Path() ||
					g.Status != w.Status || g.Claimed != w.Claimed || g.Line != int64(i+1) {
					t.Errorf("%s line %d: %+v, want %+v", name, i+1, g, w)
				}
			}
		}
	}
}

func TestContainerFormatSpec(t *testing.T) {
	f, err := ParseFormatSpec("container+combined")
	if err != nil || f.Name() != "container+combined" || f.Syslog() {
		t.Fatalf("container+combined: %v, %v", f, err)
	}
	if f, err := ParseFormatSpec(f.Name()); err != nil || f.Name() != "container+combined" {
		t.Errorf("the name read back: %v, %v", f, err)
	}
	for _, bad := range []string{"container+", "container+auto", "container+syslog+combined", "syslog+container+combined", "container+nope"} {
		if _, err := ParseFormatSpec(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestCaddyInAContainer: Caddy writing its access log to stdout mixes in
// its default logger's messages; they are neither requests nor malformed.
func TestCaddyInAContainer(t *testing.T) {
	in := `caddy  | {"level":"info","ts":1761019822.3152757,"msg":"using config from file","file":"/etc/caddy/Caddyfile"}
caddy  | {"level":"info","ts":1761019828.6153953,"logger":"http.log.access","msg":"handled request","request":{"remote_ip":"79.139.58.98","remote_port":"46628","client_ip":"79.139.58.98","proto":"HTTP/1.1","method":"GET","host":"localhost","uri":"/","headers":{"User-Agent":["LohiSoftBot/1.0"]}},"duration":0.001,"size":0,"status":304}
caddy  | {"level":"warn","ts":1761019831.8274047,"msg":"exiting","signal":"SIGTERM"}
caddy  | {"level":"info","ts":1761019829.6153953,"logger":"http.log.access","msg":"handled request","request":{"remote_ip":"203.0.113.10","client_ip":"203.0.113.10","proto":"HTTP/1.1","method":"GET","host":"localhost","uri":"/a","headers":{"User-Agent":["Mozilla/5.0"]}},"duration":0.001,"size":0,"status":200}
caddy  | {"level":"info","ts":1761019829.6153953,"logger":"http.log.access","msg":"handled request","request":{"remote_ip":"203.0.113.10","client_ip":"203.0.113.10","proto":"HTTP/1.1","method":"GET","host":"localhost","uri":"/a","headers":{"User-Agent":["Mozilla/5.0"]}},"duration":0.001,"size":0,"status":200}
caddy  | {"no":"level or msg"}
`
	r := NewReader(strings.NewReader(in), Options{Claims: testClaims, Name: "caddy.log"})
	got := readAll(t, r)
	if f := r.Format(); f == nil || f.Name() != "container+caddy" {
		t.Fatalf("format %v, want container+caddy (%v)", f, r.Err())
	}
	if len(got) != 1 || got[0].Client.String() != "79.139.58.98" || !got[0].Claimed || got[0].Line != 2 {
		t.Fatalf("records %+v, want the claim on line 2", got)
	}
	if st := r.Stats(); st.Malformed != 1 {
		t.Errorf("%d malformed, want 1 (the object that is no logger's entry): %v", st.Malformed, r.Examples())
	}
}

// readString reads in with the format given (nil: detect), keeping every
// well-formed line.
func readString(t *testing.T, in string, f *Format) []*Record {
	t.Helper()
	r := NewReader(strings.NewReader(in), Options{Claims: testClaims, Name: "plain.log", Format: f, KeepAll: true, Site: "s.example"})
	recs := readAll(t, r)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}
