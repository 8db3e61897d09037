package crawler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

func TestOne(t *testing.T) {
	if p, err := One("googlebot"); err != nil || p.Name != "googlebot" {
		t.Errorf("One(googlebot) = %v, %v", p, err)
	}
	missing := filepath.Join(t.TempDir(), "nobot.yaml")
	_, err := One(missing)
	if fail.KindOf(err) != fail.Usage || !strings.HasPrefix(err.Error(), `unknown crawler "`+missing+`": not a built-in profile, and no such file or directory`) ||
		!strings.Contains(fail.HintOf(err), "or the path of a profile file") {
		t.Errorf("One(missing file) = %v (hint %q)", err, fail.HintOf(err))
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nnot a profile: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := One(bad); fail.KindOf(err) != fail.Usage || fail.HintOf(err) == "" {
		t.Errorf("One(bad file) = %v, want a usage error with a hint", err)
	}
}

func TestUserAgentToken(t *testing.T) {
	for in, want := range map[string]string{"*": "*", " * ": "*", "GPTBot/1.1": "GPTBot", "Mozilla/5.0 (compatible; Googlebot/2.1)": ProductToken("Mozilla/5.0 (compatible; Googlebot/2.1)")} {
		if got, err := UserAgentToken(in); err != nil || got != want {
			t.Errorf("UserAgentToken(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := UserAgentToken("/1.0"); fail.KindOf(err) != fail.Usage || !strings.Contains(err.Error(), "has no product token") {
		t.Errorf("UserAgentToken(/1.0) = %v", err)
	}
}

// TestRobotsToken: --user-agent, when given, wins over --crawler, even
// when empty; else the profile's robots.txt token.
func TestRobotsToken(t *testing.T) {
	g, _ := One("googlebot")
	for _, tc := range []struct {
		name      string
		given     bool
		userAgent string
		want      string
	}{
		{"googlebot", false, "", g.RobotsToken},
		{"googlebot", false, "GPTBot/1.1", g.RobotsToken},
		{"googlebot", true, "GPTBot/1.1", "GPTBot"},
		{"no-such-bot", true, "*", "*"},
	} {
		if got, err := RobotsToken(tc.name, tc.given, tc.userAgent); err != nil || got != tc.want {
			t.Errorf("RobotsToken(%q, %v, %q) = %q, %v; want %q", tc.name, tc.given, tc.userAgent, got, err, tc.want)
		}
	}
	if _, err := RobotsToken("googlebot", true, ""); fail.KindOf(err) != fail.Usage {
		t.Errorf("an empty --user-agent given: %v, want a usage error", err)
	}
	if _, err := RobotsToken(filepath.Join(t.TempDir(), "none.yaml"), false, ""); fail.KindOf(err) != fail.Usage {
		t.Errorf("an unknown --crawler: %v, want a usage error", err)
	}
}
