package verify

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseIPList(t *testing.T) {
	tests := []struct {
		file     string
		want     string // prefixes as IPList.String prints them
		created  time.Time
		wantErr  error
		errMatch string
	}{
		{file: "prefixes.json", want: "79.139.58.98, 79.139.58.121, 2001:db8:5800::/48",
			created: time.Date(2026, 8, 23, 10, 0, 0, 0, time.UTC)},
		{file: "array.json", want: "79.139.58.98, 79.139.58.121"},
		{file: "ips.json", want: "79.139.58.121, 198.51.100.0/24, 2001:db8::7",
			created: time.Date(2026, 8, 23, 10, 0, 0, 0, time.UTC)},
		{file: "bom.json", want: "79.139.58.98"},
		{file: "empty-array.json", wantErr: ErrIPListEmpty},
		{file: "empty-prefixes.json", wantErr: ErrIPListEmpty},
		{file: "no-list.json", wantErr: ErrIPListInvalid, errMatch: `neither "prefixes" nor "ips"`},
		{file: "bad-entry.json", wantErr: ErrIPListInvalid, errMatch: `prefixes[1] "not an address"`},
		{file: "trailing.json", wantErr: ErrIPListInvalid, errMatch: "data after"},
		{file: "truncated.json", wantErr: ErrIPListInvalid},
		{file: "html.json", wantErr: ErrIPListInvalid, errMatch: "want a JSON object or array"},
		{file: "too-wide.json", wantErr: ErrIPListInvalid, errMatch: "wider than /16"},
		{file: "host-bits.json", wantErr: ErrIPListInvalid, errMatch: "host bits set (the prefix is 79.139.58.0/24)"},
		{file: "wrong-family.json", wantErr: ErrIPListInvalid, errMatch: "not IPv4"},
		{file: "both-families.json", wantErr: ErrIPListInvalid, errMatch: "both"},
		{file: "number.json", wantErr: ErrIPListInvalid},
		{file: "zone.json", wantErr: ErrIPListInvalid},
		{file: "bad-time.json", wantErr: ErrIPListInvalid, errMatch: "creationTime"},
	}
	files, _ := filepath.Glob("testdata/iplist/*.json")
	if len(files) != len(tests) {
		t.Errorf("testdata/iplist has %d files, the table %d: keep them in step", len(files), len(tests))
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/iplist", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseIPList(data)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.errMatch) {
					t.Fatalf("err = %v, want %v containing %q", err, tc.wantErr, tc.errMatch)
				}
				if got != nil {
					t.Fatalf("a rejected list must give nothing, got %v", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got.String() != tc.want || !got.CreationTime.Equal(tc.created) {
				t.Fatalf("got %q created %v, want %q created %v", got.String(), got.CreationTime, tc.want, tc.created)
			}
		})
	}
}

func TestParseIPListLimits(t *testing.T) {
	big := "[" + strings.Repeat(`"79.139.58.98",`, IPListMaxPrefixes) + `"79.139.58.98"]`
	if _, err := ParseIPList([]byte(big)); !errors.Is(err, ErrIPListInvalid) || !strings.Contains(err.Error(), "limit") {
		t.Errorf("too many entries: err = %v", err)
	}
	huge := make([]byte, IPListMaxBytes+1)
	if _, err := ParseIPList(huge); !errors.Is(err, ErrIPListTooLarge) {
		t.Errorf("too large: err = %v", err)
	}
}

func TestIPListContains(t *testing.T) {
	l, err := ParseIPList([]byte(`["79.139.58.98", "198.51.100.0/24", "2001:db8::/64", "::ffff:192.0.2.1"]`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		addr string
		want bool
	}{
		{"79.139.58.98", true},
		{"::ffff:79.139.58.98", true},
		{"79.139.58.99", false},
		{"198.51.100.255", true},
		{"198.51.101.0", false},
		{"2001:db8::abcd", true},
		{"2001:DB8:0:0:0:0:0:1", true},
		{"2001:db8:1::1", false},
		{"192.0.2.1", true},
		{"fe80::1%eth0", false},
	}
	for _, tc := range tests {
		if got := l.Contains(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("Contains(%s) = %v, want %v", tc.addr, got, tc.want)
		}
	}
	var none *IPList
	if none.Contains(netip.MustParseAddr("79.139.58.98")) || l.Contains(netip.Addr{}) {
		t.Error("a nil list and the zero address contain nothing")
	}
	b := BuiltinList(lohiProfile)
	if !b.Contains(netip.MustParseAddr("79.139.58.98")) || !b.Contains(netip.MustParseAddr("79.139.58.121")) || len(b.Prefixes) != 2 || b.Source != IPListSourceBuiltin ||
		!b.CreationTime.Equal(lohiProfile.BuiltinIPsDate) || b.CreationTime.IsZero() {
		t.Errorf("built-in list = %v from %q created %s, want the two documented addresses of the page's date", b, b.Source, b.CreationTime)
	}
	if n := BuiltinList(nil); n.Source != IPListSourceNone || len(n.Prefixes) != 0 {
		t.Errorf("built-in list of no profile = %v from %q, want none", n, n.Source)
	}
}

// FuzzParseIPList checks that any input either gives a usable list or an
// error, never a panic, and that a list prints back to an equal list.
func FuzzParseIPList(f *testing.F) {
	files, err := filepath.Glob("testdata/iplist/*.json")
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds in testdata/iplist: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseIPList(data)
		if err != nil {
			if l != nil {
				t.Fatal("error with a list")
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || len(msg) > 400 {
				t.Fatalf("error is not one short line: %q", msg)
			}
			return
		}
		if len(l.Prefixes) == 0 || len(l.Prefixes) > IPListMaxPrefixes {
			t.Fatalf("accepted a list of %d prefixes", len(l.Prefixes))
		}
		var again []string
		for i, p := range l.Prefixes {
			if !p.IsValid() || p != p.Masked() || p.Addr().Is4In6() || p.Addr().Zone() != "" {
				t.Fatalf("bad prefix %v", p)
			}
			if !l.Contains(p.Addr()) {
				t.Fatalf("list does not contain its own prefix %v", p)
			}
			if i > 0 && ipComparePrefix(l.Prefixes[i-1], p) >= 0 {
				t.Fatalf("prefixes not sorted and unique: %v", l.Prefixes)
			}
			again = append(again, `"`+p.String()+`"`)
		}
		l2, err := ParseIPList([]byte("[" + strings.Join(again, ",") + "]"))
		if err != nil || l2.String() != l.String() {
			t.Fatalf("round trip: %v, %v != %v", err, l2, l)
		}
	})
}
