package render

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/robots"
)

func TestPickRobotsTest(t *testing.T) {
	results := []robots.TestResult{
		{URL: "/private/x", Line: 2, Rule: "Disallow: /private/"},
		{URL: "/a\x1b[2J", Allowed: true, Why: "no rule in the * group matches"},
	}
	for _, tc := range []struct {
		format, want string
	}{
		{"text", "disallowed  /private/x  line 2: Disallow: /private/\n" +
			"allowed     /a\\x1b[2J   no rule in the * group matches\n"},
		{"json", ""},
	} {
		write, err := PickRobotsTest(tc.format)
		if err != nil {
			t.Fatalf("%s: %v", tc.format, err)
		}
		var b bytes.Buffer
		if err := write(&b, results); err != nil {
			t.Fatalf("%s: %v", tc.format, err)
		}
		if tc.format == "json" {
			var back []robots.TestResult
			if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back) != 2 || back[1].URL != results[1].URL || bytes.Contains(b.Bytes(), []byte("\x1b")) {
				t.Errorf("json: %q (%v), want the results, control characters escaped", b.String(), err)
			}
			continue
		}
		if b.String() != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.format, b.String(), tc.want)
		}
	}
	if _, err := PickRobotsTest("yaml"); fail.KindOf(err) != fail.Usage || err.Error() != `unknown --format "yaml": use text or json` {
		t.Errorf("yaml: %v, want a usage error", err)
	}
}
