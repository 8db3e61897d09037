package parse

import (
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

func TestParseReadSettings(t *testing.T) {
	getenv := func(k string) string {
		if k == "TZ" {
			return ":Europe/Berlin"
		}
		return ""
	}
	s, err := ParseReadSettings("", "64MiB", getenv)
	if err != nil || s.ZoneName != "Europe/Berlin, this machine's zone" || s.MaxDict != 64<<20 {
		t.Errorf("machine's zone: %+v, %v", s, err)
	}
	s, err = ParseReadSettings("America/New_York", "1GiB", getenv)
	if err != nil || s.Location.String() != "America/New_York" || s.ZoneName != "America/New_York" || s.MaxDict != 1<<30 {
		t.Errorf("given zone: %+v, %v", s, err)
	}
	for _, tc := range []struct{ zone, dict, msg string }{
		{"Mars/Olympus", "64MiB", `unknown --timezone "Mars/Olympus"`},
		{"Local", "64MiB", `unknown --timezone "Local"`},
		{"UTC", "512KiB", `bad --max-dict "512KiB": give a size of at least 1MiB`},
		{"UTC", "lots", `bad --max-dict "lots"`},
	} {
		if _, err := ParseReadSettings(tc.zone, tc.dict, getenv); fail.KindOf(err) != fail.Usage || !strings.HasPrefix(err.Error(), tc.msg) {
			t.Errorf("%s, %s: %v, want a usage error starting %q", tc.zone, tc.dict, err, tc.msg)
		}
	}
}
