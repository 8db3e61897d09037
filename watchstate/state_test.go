package watchstate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)

func sample() *State {
	a := netip.MustParseAddr("192.0.2.7")
	b := netip.MustParseAddr("2001:db8::7")
	return &State{
		Written: now, PID: 42,
		Targets: Targets{NFTables: "inet lohibot", CrowdSec: "http://127.0.0.1:8080/", CrowdSecCredentials: "/etc/crowdsec/local_api_credentials.yaml"},
		Verdicts: []Verdict{
			{Addr: a, Crawler: "lohisoftbot", Verdict: "spoofed", Method: "fcrdns", Reason: "no-ptr", Judged: now.Add(-time.Minute), Expires: now.Add(14 * time.Minute)},
			{Addr: b, Crawler: "googlebot", Verdict: "genuine", Method: "fcrdns", PTR: []string{"crawl-1.googlebot.com", "odd\"näme<&>"}, Listed: true,
				Judged: now.Add(-time.Minute), Expires: now.Add(14 * time.Minute)},
		},
		Blocks: []Block{
			{Addr: a, Crawler: "lohisoftbot", Target: TargetNFTables, At: now.Add(-time.Minute), Until: now.Add(7 * 24 * time.Hour)},
			{Addr: b, Crawler: "lohisoftbot", Target: TargetCrowdSec, Prefix: netip.MustParsePrefix("2001:db8::/64"), At: now.Add(-time.Minute), Until: now.Add(24 * time.Hour)},
			{Addr: a, Crawler: "lohisoftbot", Target: TargetExec, At: now.Add(-time.Minute)},
		},
		Holds:  []Hold{{Addr: netip.MustParseAddr("198.51.100.1"), At: now.Add(-time.Hour), Until: now.Add(time.Hour)}},
		Status: &Status{PID: 42, Started: now.Add(-time.Hour).UTC(), At: now.UTC(), Files: []FileStatus{{Name: "/var/log/nginx/access.log", Offset: 1234, Line: 10, Lines: 10, State: "following"}}},
	}
}

func encode(t *testing.T, s *State) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Encode(&b, s); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRoundTrip(t *testing.T) {
	in := sample()
	got, err := Decode(bytes.NewReader(encode(t, in)), now)
	if err != nil {
		t.Fatal(err)
	}
	if got.Skipped.Total() != 0 {
		t.Errorf("skipped %+v", got.Skipped)
	}
	want := *in
	if !reflect.DeepEqual(got.Targets, want.Targets) || got.PID != 42 || !got.Written.Equal(now) {
		t.Errorf("header: got %+v %d %v", got.Targets, got.PID, got.Written)
	}
	if len(got.Verdicts) != 2 || len(got.Blocks) != 3 || len(got.Holds) != 1 || got.Status == nil {
		t.Fatalf("got %d verdicts, %d blocks, %d holds, status %v", len(got.Verdicts), len(got.Blocks), len(got.Holds), got.Status)
	}
	for i, v := range got.Verdicts {
		w := want.Verdicts[i]
		if v.Addr != w.Addr || v.Crawler != w.Crawler || v.Verdict != w.Verdict || v.Reason != w.Reason || v.Method != w.Method ||
			!reflect.DeepEqual(v.PTR, w.PTR) || v.Listed != w.Listed || !v.Judged.Equal(w.Judged) || !v.Expires.Equal(w.Expires) {
			t.Errorf("verdict %d: got %+v, want %+v", i, v, w)
		}
	}
	for i, b := range got.Blocks {
		w := want.Blocks[i]
		if b.Addr != w.Addr || b.Target != w.Target || b.Prefix != w.Prefix || !b.At.Equal(w.At) || !b.Until.Equal(w.Until) || b.Crawler != w.Crawler {
			t.Errorf("block %d: got %+v, want %+v", i, b, w)
		}
	}
	if h := got.Holds[0]; h.Addr != want.Holds[0].Addr || !h.Until.Equal(want.Holds[0].Until) {
		t.Errorf("hold: got %+v", h)
	}
	if got.Status.Files[0].Offset != 1234 {
		t.Errorf("status: got %+v", got.Status)
	}
}

func TestWriteRead(t *testing.T) {
	dir := t.TempDir()
	if _, err := Read(dir, now); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no file: got %v", err)
	}
	if err := Write(context.Background(), dir, sample()); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(Path(dir))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	l, err := Read(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Blocks) != 3 {
		t.Errorf("got %d blocks", len(l.Blocks))
	}
}

func TestRefused(t *testing.T) {
	good := encode(t, sample())
	lines := strings.SplitAfter(string(good), "\n")
	flip := bytes.Clone(good)
	i := bytes.Index(flip, []byte("192.0.2.7"))
	flip[i+8] = '8' // 192.0.2.8: still an address, but not what was written
	for _, tt := range []struct {
		name string
		data string
		want error
	}{
		{"empty", "", ErrForeign},
		{"another file", "server {\n  listen 80;\n}\n", ErrForeign},
		{"json of another kind", `{"format":"something else","version":1}` + "\n", ErrForeign},
		{"later version", `{"format":"lohibot-audit watch state","version":2}` + "\n", ErrVersion},
		{"no newline at all", strings.Repeat("x", 100), ErrForeign},
		{"cut short", string(good[:len(good)-len(lines[len(lines)-2])-10]), ErrDamaged},
		{"no trailer", strings.Join(lines[:len(lines)-2], ""), ErrDamaged},
		{"an address changed", string(flip), ErrDamaged},
		{"a line dropped", lines[0] + strings.Join(lines[2:], ""), ErrDamaged},
		{"a line that does not parse", lines[0] + "{nope\n" + strings.Join(lines[1:], ""), ErrDamaged},
		{"after the trailer", string(good) + "{}\n", ErrDamaged},
		{"a line too long", lines[0] + strings.Repeat("x", MaxLine+10) + "\n", ErrDamaged},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Decode(strings.NewReader(tt.data), now)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, %v; want %v", l, err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of more than one line: %q", err)
			}
		})
	}
}

// withRecords is a state file of the header, the lines and a trailer
// that matches them: well formed, whatever the lines say.
func withRecords(lines ...string) string {
	s := &State{Written: now}
	var b bytes.Buffer
	Encode(&b, s)
	head, _, _ := strings.Cut(b.String(), "\n")
	return sealed(head+"\n", lines)
}

func sealed(head string, lines []string) string {
	var body strings.Builder
	body.WriteString(head)
	for _, l := range lines {
		body.WriteString(l + "\n")
	}
	sum := sha256Hex(body.String())
	return body.String() + fmt.Sprintf(`{"end":true,"records":%d,"sha256":"%s"}`+"\n", len(lines), sum)
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestRecordsChecked(t *testing.T) {
	n := now.Unix()
	for _, tt := range []struct {
		name    string
		line    string
		invalid bool
		expired bool
	}{
		{"good verdict", fmt.Sprintf(`{"verdict":{"ip":"192.0.2.1","crawler":"c","verdict":"spoofed","judged":%d,"expires":%d}}`, n-10, n+10), false, false},
		{"mapped address is unmapped", fmt.Sprintf(`{"verdict":{"ip":"::ffff:192.0.2.1","crawler":"c","verdict":"spoofed","judged":%d,"expires":%d}}`, n-10, n+10), false, false},
		{"not an address", fmt.Sprintf(`{"verdict":{"ip":"192.0.2.300","crawler":"c","verdict":"spoofed","judged":%d,"expires":%d}}`, n-10, n+10), true, false},
		{"a range", fmt.Sprintf(`{"block":{"ip":"192.0.2.0/24","crawler":"c","target":"nftables","at":%d,"until":%d}}`, n-10, n+10), true, false},
		{"a zone", fmt.Sprintf(`{"hold":{"ip":"fe80::1%%eth0","at":%d,"until":%d}}`, n-10, n+10), true, false},
		{"unspecified", fmt.Sprintf(`{"hold":{"ip":"0.0.0.0","at":%d,"until":%d}}`, n-10, n+10), true, false},
		{"unknown verdict", fmt.Sprintf(`{"verdict":{"ip":"192.0.2.1","crawler":"c","verdict":"friendly","judged":%d,"expires":%d}}`, n-10, n+10), true, false},
		{"no crawler", fmt.Sprintf(`{"verdict":{"ip":"192.0.2.1","verdict":"spoofed","judged":%d,"expires":%d}}`, n-10, n+10), true, false},
		{"control characters", fmt.Sprintf(`{"verdict":{"ip":"192.0.2.1","crawler":"c\u001b[2J","verdict":"spoofed","judged":%d,"expires":%d}}`, n-10, n+10), true, false},
		{"expired verdict", fmt.Sprintf(`{"verdict":{"ip":"192.0.2.1","crawler":"c","verdict":"spoofed","judged":%d,"expires":%d}}`, n-100, n-10), false, true},
		{"expires before judged", fmt.Sprintf(`{"verdict":{"ip":"192.0.2.1","crawler":"c","verdict":"spoofed","judged":%d,"expires":%d}}`, n+100, n+10), true, false},
		{"centuries ahead", fmt.Sprintf(`{"block":{"ip":"192.0.2.1","crawler":"c","target":"nftables","at":%d,"until":%d}}`, n-10, n+1e10), true, false},
		{"unknown target", fmt.Sprintf(`{"block":{"ip":"192.0.2.1","crawler":"c","target":"iptables","at":%d,"until":%d}}`, n-10, n+10), true, false},
		{"crowdsec prefix elsewhere", fmt.Sprintf(`{"block":{"ip":"192.0.2.1","crawler":"c","target":"crowdsec","prefix":"198.51.100.0/24","at":%d,"until":%d}}`, n-10, n+10), true, false},
		{"crowdsec prefix not masked", fmt.Sprintf(`{"block":{"ip":"2001:db8::1","crawler":"c","target":"crowdsec","prefix":"2001:db8::1/64","at":%d,"until":%d}}`, n-10, n+10), true, false},
		{"nftables without end", fmt.Sprintf(`{"block":{"ip":"192.0.2.1","crawler":"c","target":"nftables","at":%d}}`, n-10), true, false},
		{"exec without end", fmt.Sprintf(`{"block":{"ip":"192.0.2.1","crawler":"c","target":"exec","at":%d}}`, n-10), false, false},
		{"expired hold", fmt.Sprintf(`{"hold":{"ip":"192.0.2.1","at":%d,"until":%d}}`, n-100, n), false, true},
		{"two kinds in one", fmt.Sprintf(`{"hold":{"ip":"192.0.2.1","at":%d,"until":%d},"block":{"ip":"192.0.2.1","crawler":"c","target":"exec","at":%d}}`, n-10, n+10, n-10), true, false},
		{"no kind", `{"other":1}`, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Decode(strings.NewReader(withRecords(tt.line)), now)
			if err != nil {
				t.Fatal(err)
			}
			kept := len(l.Verdicts) + len(l.Blocks) + len(l.Holds)
			switch {
			case tt.invalid:
				if l.Skipped.Invalid != 1 || kept != 0 || l.Skipped.Example == "" {
					t.Errorf("got %+v, %d kept; want it left out as invalid", l.Skipped, kept)
				}
			case tt.expired:
				if l.Skipped.Expired != 1 || kept != 0 {
					t.Errorf("got %+v, %d kept; want it left out as expired", l.Skipped, kept)
				}
			default:
				if l.Skipped.Total() != 0 || kept != 1 {
					t.Errorf("got %+v, %d kept; want it kept", l.Skipped, kept)
				}
			}
		})
	}
}

func TestLastRecordWins(t *testing.T) {
	n := now.Unix()
	l, err := Decode(strings.NewReader(withRecords(
		fmt.Sprintf(`{"verdict":{"ip":"192.0.2.1","crawler":"c","verdict":"unverified","judged":%d,"expires":%d}}`, n-10, n+10),
		fmt.Sprintf(`{"verdict":{"ip":"192.0.2.1","crawler":"d","verdict":"genuine","judged":%d,"expires":%d}}`, n-10, n+10),
		fmt.Sprintf(`{"verdict":{"ip":"192.0.2.1","crawler":"c","verdict":"spoofed","judged":%d,"expires":%d}}`, n-5, n+20),
		fmt.Sprintf(`{"hold":{"ip":"192.0.2.1","at":%d,"until":%d}}`, n-10, n+10),
		fmt.Sprintf(`{"hold":{"ip":"192.0.2.1","at":%d,"until":%d}}`, n-5, n+50),
	)), now)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Verdicts) != 2 || l.Verdicts[0].Verdict != "spoofed" || l.Verdicts[1].Crawler != "d" {
		t.Errorf("verdicts: %+v", l.Verdicts)
	}
	if len(l.Holds) != 1 || l.Holds[0].Until.Unix() != n+50 {
		t.Errorf("holds: %+v", l.Holds)
	}
}

func TestTooManyRecords(t *testing.T) {
	// Not the whole MaxRecords: the bound is checked by count alone, so a
	// smaller stand-in proves it the same way.
	old := maxRecords
	maxRecords = 3
	defer func() { maxRecords = old }()
	n := now.Unix()
	var lines []string
	for i := range 5 {
		lines = append(lines, fmt.Sprintf(`{"hold":{"ip":"192.0.2.%d","at":%d,"until":%d}}`, i+1, n-10, n+10))
	}
	l, err := Decode(strings.NewReader(withRecords(lines...)), now)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Holds) != 3 || l.Skipped.TooMany != 2 {
		t.Errorf("got %d holds, %+v", len(l.Holds), l.Skipped)
	}
}

// bigState is a state of 1,000,000 verdicts and as many blocks.
func bigState() *State {
	s := &State{Written: now}
	base := netip.MustParseAddr("10.0.0.0").As4()
	for i := range 1_000_000 {
		a := netip.AddrFrom4([4]byte{base[0], byte(i >> 16), byte(i >> 8), byte(i)})
		s.Verdicts = append(s.Verdicts, Verdict{Addr: a, Crawler: "lohisoftbot", Verdict: "spoofed", Method: "fcrdns", Reason: "no-ptr", Judged: now, Expires: now.Add(15 * time.Minute)})
		s.Blocks = append(s.Blocks, Block{Addr: a, Crawler: "lohisoftbot", Target: TargetNFTables, At: now, Until: now.Add(7 * 24 * time.Hour)})
	}
	return s
}

// BenchmarkEncode is what watch pays for each write of a large state.
func BenchmarkEncode(b *testing.B) {
	s := bigState()
	for b.Loop() {
		var buf bytes.Buffer
		if err := Encode(&buf, s); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(buf.Len()), "bytes")
	}
}

func BenchmarkEncodeDecode(b *testing.B) {
	s := bigState()
	for b.Loop() {
		var buf bytes.Buffer
		if err := Encode(&buf, s); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(buf.Len()), "bytes")
		l, err := Decode(&buf, now)
		if err != nil || len(l.Blocks) != 1_000_000 {
			b.Fatal(err)
		}
	}
}

// The encoder writes the format as version 1 always has: byte for byte
// the file an earlier lohibot-audit wrote of the same state, which this
// one reads.
func TestEncodeKeepsTheFormat(t *testing.T) {
	want, err := os.ReadFile("testdata/v1-sample.state")
	if err != nil {
		t.Fatal(err)
	}
	if got := encode(t, sample()); !bytes.Equal(got, want) {
		t.Errorf("encoded:\n%s\nwant (testdata/v1-sample.state):\n%s", got, want)
	}
	l, err := Decode(bytes.NewReader(want), now)
	if err != nil || len(l.Verdicts) != 2 || len(l.Blocks) != 3 || len(l.Holds) != 1 || l.Status == nil {
		t.Fatalf("read back: %+v, %v", l, err)
	}
}

// WriteFunc writes the records as they are made, into a temporary file
// beside the state file: they are on disk before the last one is made
// (nothing holds the whole file in memory), and the state file stays
// the old one until the trailer is written.
func TestWriteFuncStreams(t *testing.T) {
	dir := t.TempDir()
	if err := Write(context.Background(), dir, sample()); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(Path(dir))
	err := WriteFunc(context.Background(), dir, now, 7, Targets{}, func(e *Encoder) error {
		for i, v := range manyVerdicts(10_000) {
			if err := e.Verdict(v); err != nil {
				return err
			}
			if i == 5_000 { // about 700 KB made: most of it written
				tmp := tempFiles(t, dir)
				if len(tmp) != 1 {
					t.Fatalf("temporary files %v", tmp)
				}
				fi, err := os.Stat(tmp[0])
				if err != nil || fi.Size() < 500_000 {
					t.Errorf("%d records made, the temporary file holds %v bytes (%v)", i+1, fi.Size(), err)
				}
				if cur, _ := os.ReadFile(Path(dir)); !bytes.Equal(cur, old) {
					t.Error("the state file changed before its trailer was written")
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := Read(dir, now)
	if err != nil || len(l.Verdicts) != 10_000 || l.PID != 7 {
		t.Fatalf("read back: %v", err)
	}
	if tmp := tempFiles(t, dir); len(tmp) != 0 {
		t.Errorf("left behind: %v", tmp)
	}
}

// manyVerdicts are n verdicts of as many addresses.
func manyVerdicts(n int) []Verdict {
	vs := make([]Verdict, n)
	for i := range vs {
		a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		vs[i] = Verdict{Addr: a, Crawler: "lohisoftbot", Verdict: "spoofed", Method: "fcrdns", Reason: "no-ptr", Judged: now, Expires: now.Add(15 * time.Minute)}
	}
	return vs
}

// tempFiles are the files in dir other than the state file.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if e.Name() != FileName {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// A write that fails part way, or whose context ends, leaves the state
// file as it was and no temporary file.
func TestWriteFuncFailureKeepsTheOld(t *testing.T) {
	dir := t.TempDir()
	if err := Write(context.Background(), dir, sample()); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(Path(dir))
	vs := manyVerdicts(10_000)
	boom := errors.New("boom")
	ctx, cancel := context.WithCancel(context.Background())
	for _, tc := range []struct {
		name string
		ctx  context.Context
		fill func(e *Encoder) error
		want error
	}{
		{"fill fails", context.Background(), func(e *Encoder) error {
			for _, v := range vs {
				e.Verdict(v)
			}
			return boom
		}, boom},
		{"context ends", ctx, func(e *Encoder) error {
			for _, v := range vs {
				e.Verdict(v)
			}
			cancel()
			return nil
		}, context.Canceled},
	} {
		err := WriteFunc(tc.ctx, dir, now, 7, Targets{}, tc.fill)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
		if cur, _ := os.ReadFile(Path(dir)); !bytes.Equal(cur, old) {
			t.Errorf("%s: the state file changed", tc.name)
		}
		if tmp := tempFiles(t, dir); len(tmp) != 0 {
			t.Errorf("%s: left behind: %v", tc.name, tmp)
		}
	}
}
