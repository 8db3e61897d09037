package render

import "testing"

func TestTop(t *testing.T) {
	var none Top
	if none.For(true) != DefaultTop || none.For(false) != 0 || none.String() != "" {
		t.Errorf("not asked for: %d on a terminal, %d elsewhere, %q; want %d, 0, \"\"", none.For(true), none.For(false), none.String(), DefaultTop)
	}
	for _, tc := range []struct {
		in   string
		want int
	}{{"5", 5}, {" 0 ", 0}, {"120", 120}} {
		var top Top
		if err := top.Set(tc.in); err != nil {
			t.Fatalf("Set(%q): %v", tc.in, err)
		}
		if top.For(true) != tc.want || top.For(false) != tc.want {
			t.Errorf("Set(%q): %d on a terminal, %d elsewhere; want %d both", tc.in, top.For(true), top.For(false), tc.want)
		}
	}
	for _, bad := range []string{"-1", "ten", ""} {
		var top Top
		if err := top.Set(bad); err == nil || err.Error() != `"`+bad+`" is not a number of addresses (0 lists all)` {
			t.Errorf("Set(%q) = %v; want it refused", bad, err)
		}
	}
}
