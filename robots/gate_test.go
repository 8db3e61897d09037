package robots

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

func TestGateTestAndCheck(t *testing.T) {
	src := ParseSource("robots.txt", "robots.txt", []byte("User-agent: *\nDisallow: /private/\n"))
	res := src.Robots.Test("ExampleBot", []string{"/private/x", "/blog/"}, "")
	if len(res) != 2 || res[0].Allowed || res[0].Line != 2 || res[0].Rule != "Disallow: /private/" || !res[1].Allowed {
		t.Fatalf("Test = %+v", res)
	}
	if res[0].Reason() == "" {
		t.Error("a deciding rule gives no reason")
	}
	checks, failed := src.Check("ExampleBot", []string{"/private/", "/"}, false, "blocked")
	if failed != 1 || !checks[0].OK || checks[1].OK || !strings.HasSuffix(checks[1].Message, " (expected blocked)") || strings.Contains(checks[0].Message, "expected") {
		t.Errorf("Check = %+v, %d failed", checks, failed)
	}
}

func TestInForce(t *testing.T) {
	single := ParseSource("robots.txt", "robots.txt", []byte("User-agent: *\nDisallow: /\n"))
	if rb, v, err := single.InForce(time.Time{}); rb != single.Robots || v != nil || err != nil {
		t.Errorf("a single robots.txt: %v, %v, %v", rb, v, err)
	}
	dir := t.TempDir()
	for name, text := range map[string]string{"2026-11-20.txt": "User-agent: *\nDisallow: /a/\n", "2026-11-22.txt": "User-agent: *\nDisallow: /b/\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	src := HistorySource(h)
	rb, v, err := src.InForce(time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC))
	if err != nil || v == nil || v.Name != "2026-11-20.txt" || rb.Decide("X", "/a/").Allowed {
		t.Errorf("on 21 November: %v, %v", v, err)
	}
	_, _, err = src.InForce(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	if fail.KindOf(err) != fail.Usage || !strings.Contains(err.Error(), "has no version in force at 2026-11-01T00:00:00Z") || !strings.Contains(fail.HintOf(err), "2026-11-20T00:00:00Z") {
		t.Errorf("before the first version: %v (hint %q)", err, fail.HintOf(err))
	}
}
