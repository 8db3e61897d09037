package parse

import (
	"slices"
	"strings"
	"testing"
)

func TestFormatCompletions(t *testing.T) {
	got := FormatCompletions("")
	for _, want := range []string{"auto", "combined", "json", "nginx:", "apache:", "syslog+", "container+"} {
		if !slices.Contains(got, want) {
			t.Errorf("offers %q, want %q among them", got, want)
		}
	}
	if len(got) != len(DetectableFormats())+5 {
		t.Errorf("offers %d values, want auto, the %d detectable formats and 4 prefixes", len(got), len(DetectableFormats()))
	}
	for _, pre := range []string{"syslog+", "container+"} {
		after := FormatCompletions(pre + "co")
		if len(after) != len(got)-3 || slices.Contains(after, pre+"auto") || slices.Contains(after, pre+"syslog+") ||
			slices.Contains(after, pre+"container+") || !slices.Contains(after, pre+"combined") || !slices.Contains(after, pre+"nginx:") {
			t.Errorf("after %s: %q", pre, after)
		}
		for _, f := range after {
			if strings.HasSuffix(f, ":") {
				continue // nginx:, apache: want a format string
			}
			if _, err := ParseFormatSpec(f); err != nil {
				t.Errorf("offered %q, refused: %v", f, err)
			}
		}
	}
}
