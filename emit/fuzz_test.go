package emit

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// fuzzInput decodes bytes into an Input: the first byte picks the mode,
// then records of a role byte, an address (4 or 16 bytes) and, for
// prefixes, a length byte.
func fuzzInput(data []byte) Input {
	in := Input{Crawlers: []CrawlerInput{{Tokens: lohiTokens}}}
	if len(data) == 0 {
		return in
	}
	in.Mode = Modes[int(data[0])%len(Modes)]
	data = data[1:]
	for len(data) > 0 {
		role := data[0]
		data = data[1:]
		n := 4
		if role&0x80 != 0 {
			n = 16
		}
		if len(data) < n {
			return in
		}
		a, _ := netip.AddrFromSlice(data[:n])
		data = data[n:]
		bits := a.BitLen()
		if len(data) > 0 && role&0x40 != 0 {
			bits = int(data[0]) % (a.BitLen() + 1)
			data = data[1:]
		}
		p, _ := a.Prefix(bits)
		switch role & 0x3 {
		case 0:
			in.one().Spoofed = append(in.one().Spoofed, a)
		case 1:
			in.one().Genuine = append(in.one().Genuine, a)
		case 2:
			in.one().Listed = append(in.one().Listed, p)
		case 3:
			in.NeverBlock = append(in.NeverBlock, p)
		}
	}
	return in
}

// fuzzEncode is the inverse of fuzzInput, for seeds.
func fuzzEncode(in Input) []byte {
	mode := 0
	for i, m := range Modes {
		if m == in.Mode {
			mode = i
		}
	}
	out := []byte{byte(mode)}
	add := func(role byte, a netip.Addr, bits int) {
		if a.Is6() {
			role |= 0x80
		}
		if bits >= 0 {
			role |= 0x40
		}
		out = append(out, role)
		out = append(out, a.AsSlice()...)
		if bits >= 0 {
			out = append(out, byte(bits))
		}
	}
	for _, a := range in.one().Spoofed {
		add(0, a, -1)
	}
	for _, a := range in.one().Genuine {
		add(1, a, -1)
	}
	for _, p := range in.one().Listed {
		add(2, p.Addr(), p.Bits())
	}
	for _, p := range in.NeverBlock {
		add(3, p.Addr(), p.Bits())
	}
	return out
}

// FuzzEmit checks the safety property, and that nothing panics, on inputs
// made from arbitrary bytes.
func FuzzEmit(f *testing.F) {
	for _, m := range Modes {
		f.Add(fuzzEncode(fixtureInput(m)))
	}
	f.Add([]byte{})
	f.Add([]byte{2, 0x42, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		checkAllTargets(t, fuzzInput(data))
	})
}

// FuzzProvenance feeds arbitrary source names, IP list source and version
// into the header: the nftables and ModSecurity files keep their header
// as comment lines, and the Cloudflare JSON stays valid, bounded and free
// of the text outside string values.
func FuzzProvenance(f *testing.F) {
	for _, m := range Modes {
		in := hostileInput(m)
		f.Add(strings.Join(in.Sources, "\x00"), in.IPListSource, in.Version)
	}
	f.Add("/var/log/nginx/access.log", "built-in", "1.0.0")
	f.Fuzz(func(t *testing.T, sources, ipList, version string) {
		in := fixtureInput(BlockSpoofed)
		in.Sources = strings.Split(sources, "\x00")
		in.IPListSource, in.Version = ipList, version
		want := map[string]int{}
		for name, write := range map[string]func(*bytes.Buffer, Input) error{
			"nft": func(b *bytes.Buffer, in Input) error { _, err := NFTables(b, in, NFTOptions{}); return err },
			"modsec": func(b *bytes.Buffer, in Input) error {
				_, err := ModSecurity(b, in, ModSecOptions{})
				return err
			},
		} {
			var b bytes.Buffer
			if err := write(&b, in); err != nil {
				t.Fatal(err)
			}
			header, body, _ := strings.Cut(b.String(), "\n\n")
			for _, line := range strings.Split(header, "\n") {
				if !strings.HasPrefix(line, "#") || strings.HasSuffix(line, `\`) {
					t.Fatalf("%s header line is not a closed comment: %q", name, line)
				}
			}
			want[name] = strings.Count(header, "\n")
			var plain bytes.Buffer
			if err := write(&plain, fixtureInput(BlockSpoofed)); err != nil {
				t.Fatal(err)
			}
			_, plainBody, _ := strings.Cut(plain.String(), "\n\n")
			if body != plainBody {
				t.Fatalf("%s: provenance changed the rules:\n%s", name, testutil.LineDiff(plainBody, body))
			}
		}
		var cf bytes.Buffer
		if _, err := Cloudflare(&cf, in, CloudflareOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := checkCFRuleset(cf.Bytes()); err != nil {
			t.Fatalf("%v\n%s", err, cf.String())
		}
		var rs cfRuleset
		if err := json.Unmarshal(cf.Bytes(), &rs); err != nil || !strings.Contains(rs.Description, "generated ") {
			t.Fatalf("description lost its generated marker: %q (%v)", rs.Description, err)
		}
	})
}

// FuzzParseTTL checks that ParseTTL never panics and that what it accepts
// and FormatNFTDuration prints parses back to the same duration.
func FuzzParseTTL(f *testing.F) {
	for _, s := range []string{"7d", "1d12h", "36h", "90m", "1s", "365d", "0d", "-1d", "d", "9999999d", "1d-5h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseTTL(s)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("ParseTTL(%q) = %v, negative", s, d)
		}
		out, err := FormatNFTDuration(d)
		if err != nil {
			return
		}
		back, err := ParseTTL(out)
		if err != nil || back != d {
			t.Fatalf("ParseTTL(%q) = %v, printed %q, parsed back %v, %v", s, d, out, back, err)
		}
	})
}

// FuzzParseNFTPriority checks that an accepted priority is in nft's own
// form (it parses back to itself) and holds nothing but the allowed words.
func FuzzParseNFTPriority(f *testing.F) {
	for _, s := range []string{"", "-10", "filter", "filter - 10", "raw+5", "security -3", "dstnat", "filter; drop"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseNFTPriority(s)
		if err != nil {
			return
		}
		back, err := ParseNFTPriority(p)
		if err != nil || back != p {
			t.Fatalf("ParseNFTPriority(%q) = %q, which parses back to %q, %v", s, p, back, err)
		}
		if strings.ContainsAny(p, ";{}\n\"#") {
			t.Fatalf("ParseNFTPriority(%q) = %q", s, p)
		}
	})
}

// TestFuzzSeedsFromTestdata runs the checks FuzzEmit makes on inputs
// encoded in testdata/fuzz-inputs/*.json (Input values), so that
// interesting cases found once stay covered.
func TestFuzzSeedsFromTestdata(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz-inputs", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no files match testdata/fuzz-inputs/*.json")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var in Input
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&in); err != nil {
				t.Fatal(err)
			}
			in.Generated = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
			checkAllTargets(t, in)
		})
	}
}
