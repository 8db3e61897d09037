package render

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/watchstate"
)

// TestWatchStatusFormat: text on a terminal and json elsewhere by
// default, either when named; another name is a usage error, escaped.
func TestWatchStatusFormat(t *testing.T) {
	for _, tt := range []struct {
		name     string
		terminal bool
		want     string
	}{
		{"", true, "text"}, {"", false, "json"}, {"json", true, "json"}, {"text", false, "text"},
	} {
		if got, err := WatchStatusFormat(tt.name, tt.terminal); got != tt.want || err != nil {
			t.Errorf("%q, terminal %v: %q, %v; want %q", tt.name, tt.terminal, got, err, tt.want)
		}
	}
	_, err := WatchStatusFormat("table\x1b", true)
	if fail.KindOf(err) != fail.Usage || err.Error() != `--format "table\\x1b": give text or json` {
		t.Errorf("table: %v (kind %v), want the usage error", err, fail.KindOf(err))
	}
}

// TestWatchStatusAs: json is one line that decodes to the status; text is
// WatchStatus's; another format is refused.
func TestWatchStatusAs(t *testing.T) {
	now := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	s := watchstate.Status{Running: true, PID: 42, Version: "v-test", Started: now.Add(-time.Hour), At: now}
	var b strings.Builder
	if err := WatchStatusAs(&b, "json", s, now, now); err != nil {
		t.Fatal(err)
	}
	var back watchstate.Status
	if err := json.Unmarshal([]byte(b.String()), &back); err != nil || back.PID != 42 || back.Version != "v-test" ||
		strings.Count(b.String(), "\n") != 1 || !strings.HasSuffix(b.String(), "}\n") {
		t.Errorf("json %q: %v", b.String(), err)
	}
	var text, want strings.Builder
	if err := WatchStatusAs(&text, "text", s, now, now); err != nil {
		t.Fatal(err)
	}
	WatchStatus(&want, s, now, now)
	if text.String() != want.String() {
		t.Errorf("text %q, want %q", text.String(), want.String())
	}
	if err := WatchStatusAs(&b, "yaml", s, now, now); err == nil {
		t.Error("yaml: no error")
	}
}
