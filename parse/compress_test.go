package parse

import "testing"

func TestParseByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{{"512", 512}, {"64KiB", 64 << 10}, {"128MiB", 128 << 20}, {"1G", 1 << 30}, {"2gb", 2 << 30}, {" 3 MB ", 3 << 20}} {
		if got, err := ParseByteSize(tc.in); err != nil || got != tc.want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "lots", "12TiB", "-1", "1.5MiB", "9999999999G"} {
		if got, err := ParseByteSize(in); err == nil {
			t.Errorf("ParseByteSize(%q) = %d, want an error", in, got)
		}
	}
}
