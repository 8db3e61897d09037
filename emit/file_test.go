package emit

import "testing"

func TestSameIgnoringGenerated(t *testing.T) {
	cases := []struct {
		name     string
		old, cur string
		want     bool
	}{
		{"identical", "a\n# generated 2026-12-01T03:00:00Z\nb\n", "a\n# generated 2026-12-01T03:00:00Z\nb\n", true},
		{"only the time differs", "a\n# generated 2026-12-01T03:00:00Z\nb\n", "a\n# generated 2026-12-02T03:00:05Z\nb\n", true},
		{"json description", `{"description": "x, generated 2026-12-01T03:00:00Z; y"}`, `{"description": "x, generated 2027-01-01T00:00:00Z; y"}`, true},
		{"unknown time", "# generated unknown\n", "# generated 2026-12-01T03:00:00Z\n", true},
		{"an address changed", "# generated 2026-12-01T03:00:00Z\n203.0.113.7\n", "# generated 2026-12-02T03:00:00Z\n203.0.113.8\n", false},
		{"the marker is gone", "# generated 2026-12-01T03:00:00Z\nx\n", "#\nx\n", false},
		{"empty old file", "", "# generated 2026-12-01T03:00:00Z\n", false},
	}
	for _, c := range cases {
		if got := SameIgnoringGenerated([]byte(c.old), []byte(c.cur)); got != c.want {
			t.Errorf("%s: SameIgnoringGenerated = %v, want %v", c.name, got, c.want)
		}
	}
}
