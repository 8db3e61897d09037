package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/proxy"
)

// TestCDNLists: the built-in snapshot is said with its date and age, the
// documented-only list as documented, and the JSON holds every prefix.
func TestCDNLists(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	d := NewCDNLists(proxy.BuiltinEdges(), now)
	var b bytes.Buffer
	tx := NewText(&b, false, 200)
	if err := d.WriteText(tx); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{"cdn:      cloudflare\nsource:   https://www.cloudflare.com/ips-v4\nin force: the built-in snapshot of 2026-08-11 (115d ago;",
		"cdn:      google-lb\n", "in force: the ranges documented as of"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	data, err := json.Marshal(d.Data())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"162.158.0.0/15"`) || !strings.Contains(string(data), `"snapshot":true`) {
		t.Errorf("json %s", data[:200])
	}
}
