package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/verify"
	"gopkg.in/yaml.v3"
)

// fixedNow is the time the reports of the tests are made.
var fixedNow = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// hostileStrings are strings from strangers: controls of every kind,
// invalid UTF-8, HTML, JSON and YAML syntax, and nothing at all.
var hostileStrings = []string{
	"", " ", "-", "plain", "LohiSoftBot/1.0 (+https://lohisoft.com/bot)", "79.139.58.98", "2001:db8::1",
	"<script>&amp;</script>", `"quoted" \back\slash`, "\x00\x01\x1b]0;owned\x07", "\t\r\n", "line\nbreak",
	"x\n\ny", "multi\nline\n", "\x7f", "\u0085nel", "\u009b31m", "\u202eevil", "\u2066iso\u2069", "\u2028ls\u2029ps",
	"\u200frlm\u200elrm\u061calm", "\u202aemb\u202c", "tag\U000e0041\U000e007f", "vs\ufe0f\U000e0100", "fill\u3164er", "soft\u00adhy",
	"\xff\xfe", "a\xc3", "é日本🙂", "null", "true", "~", "- item", "key: value", "#comment", "  lead", "trail  ",
	"'single'", "*alias", "&anchor", "!tag", "%directive", "---", "...", "{flow: 1}", "[1, 2]", "0x1F", "1e9", "0777",
	"\ufeffbom", strings.Repeat("long ", 40),
}

// reportFiller fills any value with random content by reflection, so
// that every field of the report, present and future, gets hostile
// strings, nil and empty lists, zero and odd times.
type reportFiller struct{ rng *rand.Rand }

func (f *reportFiller) fill(v reflect.Value, depth int) {
	switch v.Type() {
	case reflect.TypeOf(time.Time{}):
		times := []time.Time{
			{}, time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC), time.Date(2026, 12, 2, 12, 0, 0, 123456789, time.FixedZone("", 3600)),
			time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), time.Unix(0, 0),
		}
		v.Set(reflect.ValueOf(times[f.rng.IntN(len(times))]))
		return
	}
	switch v.Kind() {
	case reflect.String:
		s := hostileStrings[f.rng.IntN(len(hostileStrings))]
		if f.rng.IntN(4) == 0 {
			s += hostileStrings[f.rng.IntN(len(hostileStrings))]
		}
		v.SetString(s)
	case reflect.Bool:
		v.SetBool(f.rng.IntN(2) == 0)
	case reflect.Int, reflect.Int64, reflect.Int32:
		ns := []int64{0, 1, -1, 42, 1 << 40, -1 << 62}
		v.SetInt(ns[f.rng.IntN(len(ns))])
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		ns := []uint64{0, 1, 42, 86400, 1<<32 - 1}
		v.SetUint(ns[f.rng.IntN(len(ns))] & (1<<v.Type().Bits() - 1))
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				f.fill(v.Field(i), depth+1)
			}
		}
	case reflect.Pointer:
		if f.rng.IntN(3) > 0 {
			p := reflect.New(v.Type().Elem())
			f.fill(p.Elem(), depth+1)
			v.Set(p)
		}
	case reflect.Slice:
		switch n := f.rng.IntN(5); n {
		case 0: // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			s := reflect.MakeSlice(v.Type(), n-1, n-1)
			for i := 0; i < s.Len(); i++ {
				f.fill(s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		switch n := f.rng.IntN(4); n {
		case 0: // nil
		case 1:
			v.Set(reflect.MakeMap(v.Type()))
		default:
			m := reflect.MakeMapWithSize(v.Type(), n)
			for range n {
				k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				f.fill(k, depth+1)
				f.fill(e, depth+1)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	default:
		panic(fmt.Sprintf("reportFiller: cannot fill a %s", v.Type()))
	}
}

// randomReports returns reports filled at random, and the empty ones.
func randomReports(n int) []*audit.Report {
	f := &reportFiller{rng: rand.New(rand.NewPCG(7, 8))}
	out := []*audit.Report{{}, {IPs: []audit.IPReport{}, Sites: []audit.SiteReport{}, Violations: []audit.Violation{}, Warnings: []string{}, Inputs: []audit.InputReport{}}}
	for range n {
		var r audit.Report
		f.fill(reflect.ValueOf(&r).Elem(), 0)
		out = append(out, &r)
	}
	return out
}

// auditReports returns reports made by audit.Audit, whose addresses are
// made one at a time: hostile clients (host names among them), user
// agents, paths and sites, with and without verdicts.
func auditReports(t *testing.T, n int) []*audit.Report {
	t.Helper()
	rng := rand.New(rand.NewPCG(9, 10))
	var out []*audit.Report
	for k := range n {
		a := &audit.Audit{}
		results := map[netip.Addr]verify.Result{}
		for i := range rng.IntN(40) {
			rec := &parse.Record{
				File: hostileStrings[rng.IntN(len(hostileStrings))], Line: int64(i + 1),
				Target: hostileStrings[rng.IntN(len(hostileStrings))], Status: []int{200, 403, 429, 503}[rng.IntN(4)],
				UserAgent: "LohiSoftBot " + hostileStrings[rng.IntN(len(hostileStrings))], Host: hostileStrings[rng.IntN(len(hostileStrings))],
				RemoteUser: []string{"", "bob\x1b"}[rng.IntN(2)], Claimed: true,
			}
			if rng.IntN(5) > 0 {
				rec.Time = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC).Add(time.Duration(rng.IntN(600)) * time.Second)
				rec.Start, rec.End, rec.Resolution = rec.Time, rec.Time, time.Second
			}
			switch rng.IntN(4) {
			case 0:
				rec.ClientRaw = hostileStrings[rng.IntN(len(hostileStrings))] + ".example"
			case 1:
				rec.Client = netip.MustParseAddr("79.139.58.98")
			default:
				rec.Client = netip.AddrFrom4([4]byte{203, 0, 113, byte(rng.IntN(8))})
			}
			if rec.Client.IsValid() {
				rec.ClientRaw = rec.Client.String()
				results[rec.Client] = verify.Result{
					Verdict: []verify.Verdict{verify.Genuine, verify.Spoofed, verify.Unverified}[rng.IntN(3)],
					Method:  verify.MethodFCrDNS, PTR: []string{hostileStrings[rng.IntN(len(hostileStrings))]}, Forward: []string{},
				}
			}
			a.Add(rec)
		}
		a.Warn(hostileStrings[rng.IntN(len(hostileStrings))])
		a.AddInput(audit.InputReport{File: "in\x1b.log", Lines: 3}, nil)
		if k%3 == 0 {
			results = nil // identity not checked
		}
		r := a.Report(results, conduct.Config{Budget: 2, BudgetWindow: time.Hour, MinPause: time.Second})
		r.GeneratedAt = fixedNow
		out = append(out, r)
	}
	return out
}

// materialized returns a copy of r with its addresses held in IPs, as
// encoding/json and yaml.v3 see a report.
func materialized(r *audit.Report) *audit.Report {
	m := *r
	m.IPs = r.IPList()
	return &m
}

// wantJSON is the report as encoding/json prints it.
func wantJSON(t *testing.T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// wantYAML is the report as yaml.v3 prints it whole (invalid UTF-8 made
// text, as writeYAML does).
func wantYAML(t *testing.T, v any) string {
	t.Helper()
	n, err := yamlNode(v)
	if err != nil {
		t.Fatal(err)
	}
	yamlValidUTF8(n)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		t.Fatal(err)
	}
	enc.Close()
	return buf.String()
}

// goldenReport reads a JSON report of testdata/golden, made at fixedNow.
func goldenReport(t *testing.T, name string) *audit.Report {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte(`"GENERATED_AT"`), []byte(`"2026-12-02T12:00:00Z"`), 1)
	var r audit.Report
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func allReports(t *testing.T) map[string]*audit.Report {
	t.Helper()
	reports := map[string]*audit.Report{"sample": goldenReport(t, "sample.json"), "crawlers": goldenReport(t, "crawlers.json")}
	for i, r := range randomReports(300) {
		reports[fmt.Sprintf("random %d", i)] = r
	}
	for i, r := range auditReports(t, 60) {
		reports[fmt.Sprintf("audit %d", i)] = r
	}
	return reports
}

// TestWriteReportJSON: the streamed report is byte for byte what
// encoding/json prints for the whole report, on the sample, on reports
// filled at random (every field, hostile strings, nil and empty lists,
// zero times) and on reports made by an audit.
func TestWriteReportJSON(t *testing.T) {
	for name, r := range allReports(t) {
		var got bytes.Buffer
		if err := WriteJSON(&got, r, false); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := wantJSON(t, materialized(r)); got.String() != want {
			t.Fatalf("%s: got\n%s\nwant\n%s", name, got.String(), want)
		}
	}
}

// TestWriteReportYAML: likewise for YAML and yaml.v3.
func TestWriteReportYAML(t *testing.T) {
	for name, r := range allReports(t) {
		var got bytes.Buffer
		if err := writeYAML(&got, r, false); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := wantYAML(t, materialized(r)); got.String() != want {
			t.Fatalf("%s: got\n%s\nwant\n%s", name, got.String(), want)
		}
	}
}

// TestWriteJSONOtherValues: values other than reports are encoding/json's
// output too.
func TestWriteJSONOtherValues(t *testing.T) {
	type inner struct {
		A []string `json:"a,omitempty"`
		B string   `json:"b"`
	}
	values := map[string]any{
		"omitempty": struct{ X inner }{inner{B: "x", A: []string{}}},
		"no fields": struct{}{},
		"a list":    []int{1, 2},
		"time":      time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		"html":      map[string]string{"a": "<b>&\u202e\x7f"},
	}
	for name, v := range values {
		var got bytes.Buffer
		if err := WriteJSON(&got, v, false); err != nil {
			t.Fatal(err)
		}
		if want := wantJSON(t, v); got.String() != want {
			t.Errorf("%s: got\n%s\nwant\n%s", name, got.String(), want)
		}
	}
}

// terminalUnsafe reports the first rune of s that a terminal could act
// on, other than the line breaks and indentation of the layout.
func terminalUnsafe(s string) (rune, bool) {
	for _, r := range s {
		if r != '\n' && (r < 0x20 || parse.IsTerminalUnsafe(r)) {
			return r, true
		}
	}
	return 0, false
}

// TestReportToTerminal: JSON and YAML written to a terminal carry no rune
// a terminal could act on, and read back as the same report; written to a
// pipe they are as before.
func TestReportToTerminal(t *testing.T) {
	for name, r := range allReports(t) {
		for _, format := range []string{"json", "yaml"} {
			var pipe, tty bytes.Buffer
			f, _ := Lookup(format)
			if err := f.WriteReport(&pipe, r, Options{}); err != nil {
				t.Fatal(err)
			}
			if err := f.WriteReport(&tty, r, Options{Terminal: true}); err != nil {
				t.Fatal(err)
			}
			if c, bad := terminalUnsafe(tty.String()); bad {
				t.Fatalf("%s %s: %U reaches the terminal:\n%s", name, format, c, tty.String())
			}
			if !utf8.Valid(tty.Bytes()) {
				t.Fatalf("%s %s: invalid UTF-8 reaches the terminal", name, format)
			}
			var fromPipe, fromTTY any
			unmarshal := json.Unmarshal
			if format == "yaml" {
				unmarshal = yaml.Unmarshal
			}
			if err := unmarshal(pipe.Bytes(), &fromPipe); err != nil {
				t.Fatalf("%s %s: %v", name, format, err)
			}
			if err := unmarshal(tty.Bytes(), &fromTTY); err != nil {
				t.Fatalf("%s %s to a terminal: %v\n%s", name, format, err, tty.String())
			}
			if !reflect.DeepEqual(fromPipe, fromTTY) {
				t.Fatalf("%s %s: the terminal's copy reads back differently:\n%s\nfrom the pipe's\n%s", name, format, tty.String(), pipe.String())
			}
		}
	}
}

// TestJSONTerminalEscape names the runes escaped for a terminal.
func TestJSONTerminalEscape(t *testing.T) {
	for in, want := range map[string]string{
		`"plain é日本🙂"`:                     `"plain é日本🙂"`,
		"\"\x7f\"":                         `"\u007f"`,
		"\"a\u009bb\u0085\"":               `"a\u009bb\u0085"`,
		"\"\u202eevil\u2066x\"":            `"\u202eevil\u2066x"`,
		"\"\u200fRLM \u061cALM\u200eLRM\"": `"\u200fRLM \u061cALM\u200eLRM"`,
		"\"\u200bzero\ufe0f\"":             `"\u200bzero\ufe0f"`,
		"\"tag\U000e0041\"":                `"tag\udb40\udc41"`,
	} {
		if got := string(jsonTerminalEscape([]byte(in))); got != want {
			t.Errorf("jsonTerminalEscape(%q) = %q, want %q", in, got, want)
		}
		var back, orig string
		if err := json.Unmarshal([]byte(want), &back); err != nil {
			t.Errorf("%s does not read back: %v", want, err)
		}
		if err := json.Unmarshal([]byte(in), &orig); err != nil || back != orig {
			t.Errorf("%s reads back as %q, want %q", want, back, orig)
		}
	}
	// YAML spells a rune beyond U+FFFF as \U, which reads back the same.
	in := "- \"tag\U000e0041 \u200f\"\n"
	got := string(yamlTerminalEscape([]byte(in)))
	if want := `- "tag\U000e0041 \u200f"` + "\n"; got != want {
		t.Errorf("yamlTerminalEscape(%q) = %q, want %q", in, got, want)
	}
	var back []string
	if err := yaml.Unmarshal([]byte(got), &back); err != nil || len(back) != 1 || back[0] != "tag\U000e0041 \u200f" {
		t.Errorf("%s reads back as %q (%v)", got, back, err)
	}
}

func TestWriteYAML(t *testing.T) {
	type inner struct {
		UA   []string `yaml:"user_agents"`
		Zero string   `yaml:"zero,omitempty"`
	}
	v := struct {
		Zeta  string    `yaml:"zeta"`
		Alpha inner     `yaml:"alpha"`
		Time  time.Time `yaml:"time"`
		Count int       `yaml:"count"`
		Bool  string    `yaml:"bool"`
		Map   map[string]string
	}{
		Zeta:  "LohiSoftBot/1.0 \xff\xfe",
		Alpha: inner{UA: []string{"ok", "\xc3(" + strings.Repeat("x", 80) + "\x80"}},
		Time:  time.Date(2026, 12, 1, 7, 0, 6, 0, time.UTC),
		Count: 3,
		Bool:  "true",
		Map:   map[string]string{"b\xffkey": "1", "a": "\xe2\x82"},
	}
	var buf bytes.Buffer
	if err := writeYAML(&buf, v, false); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	want := "zeta: LohiSoftBot/1.0 \ufffd\ufffd\n" +
		"alpha:\n" +
		"  user_agents:\n" +
		"    - ok\n" +
		"    - \ufffd(" + strings.Repeat("x", 80) + "\ufffd\n" +
		"time: 2026-12-01T07:00:06Z\n" +
		"count: 3\n" +
		"bool: \"true\"\n" +
		"map:\n" +
		"  a: \ufffd\ufffd\n" +
		"  b\ufffdkey: \"1\"\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if !utf8.ValidString(got) || strings.Contains(got, "!!binary") {
		t.Errorf("not plain UTF-8 YAML: %q", got)
	}
	var back map[string]any
	if err := yaml.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if s, ok := back["zeta"].(string); !ok || s != "LohiSoftBot/1.0 \ufffd\ufffd" {
		t.Errorf("zeta read back as %#v", back["zeta"])
	}
}

// TestWriteReportJSONBlocks: a report whose addresses fill many of the
// blocks they are encoded in ahead of the writer, written as encoding/json
// prints it, to a terminal too.
func TestWriteReportJSONBlocks(t *testing.T) {
	reports := randomReports(300)
	big := *reports[0]
	big.IPs = nil
	for _, r := range reports {
		big.IPs = append(big.IPs, r.IPList()...)
	}
	want := wantJSON(t, materialized(&big))
	if len(want) < 4*64<<10 {
		t.Fatalf("the report is only %d bytes: too small to fill several blocks", len(want))
	}
	for _, tty := range []bool{false, true} {
		var got bytes.Buffer
		if err := WriteJSON(&got, &big, tty); err != nil {
			t.Fatal(err)
		}
		w := want
		if tty {
			w = string(jsonTerminalEscape([]byte(want)))
		}
		if got.String() != w {
			t.Fatalf("tty %v: %d bytes differ from encoding/json's %d", tty, got.Len(), len(w))
		}
	}
}
