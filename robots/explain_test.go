package robots

import "testing"

func TestExplain(t *testing.T) {
	rs := ParseSource("robots.txt", "robots.txt", []byte("User-agent: LohiSoftBot\nDisallow: /private/\n"))
	d := rs.Robots.Decide("LohiSoftBot", "/private/a")
	if got, want := rs.Explain("LohiSoftBot", "/private/a", d), "LohiSoftBot is blocked from /private/a by robots.txt line 2: Disallow: /private/"; got != want {
		t.Errorf("Explain = %q, want %q", got, want)
	}
	if got := d.Reason(); got != "line 2: Disallow: /private/" {
		t.Errorf("Reason = %q", got)
	}
	d = rs.Robots.Decide("LohiSoftBot", "/public")
	if got, want := rs.Explain("LohiSoftBot", "/public", d), "LohiSoftBot is allowed /public in robots.txt: "+d.Why; got != want || d.Why == "" {
		t.Errorf("Explain = %q, want %q", got, want)
	}
	if d.Reason() != d.Why {
		t.Errorf("Reason = %q, want the why %q", d.Reason(), d.Why)
	}
}

func TestForeignOrigin(t *testing.T) {
	for _, tc := range []struct{ robots, target, want string }{
		{"https://example.com/robots.txt", "https://example.com/a", ""},
		{"https://example.com/robots.txt", "HTTPS://EXAMPLE.COM/a", ""},
		{"https://example.com/robots.txt", "https://www.example.com/a", "https://example.com"},
		{"https://example.com/robots.txt", "http://example.com/a", "https://example.com"},
		{"https://example.com:8443/robots.txt", "https://example.com/a", "https://example.com:8443"},
		{"https://example.com/robots.txt", "/a", ""},
		{"robots.txt", "https://example.com/a", ""},
	} {
		if got := ForeignOrigin(tc.robots, tc.target); got != tc.want {
			t.Errorf("ForeignOrigin(%q, %q) = %q, want %q", tc.robots, tc.target, got, tc.want)
		}
	}
}

func TestOtherHostWarning(t *testing.T) {
	if w := OtherHostWarning("https://example.com/robots.txt", "https://example.com/a"); w != "" {
		t.Errorf("same origin: %q", w)
	}
	want := "https://www.example.com/a is not on https://example.com: that robots.txt does not apply to it (RFC 9309 §2.3)"
	if w := OtherHostWarning("https://example.com/robots.txt", "https://www.example.com/a"); w != want {
		t.Errorf("other host: %q, want %q", w, want)
	}
}

func TestLineOf(t *testing.T) {
	for w, want := range map[string]int{"line 3: unknown key": 3, "line x: y": 0, "no line": 0, "line 12": 0, "line : x": 0} {
		if got := LineOf(w); got != want {
			t.Errorf("LineOf(%q) = %d, want %d", w, got, want)
		}
	}
}
