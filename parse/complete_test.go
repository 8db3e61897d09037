package parse

import (
	"slices"
	"testing"
)

func TestFormatCompletions(t *testing.T) {
	got := FormatCompletions("")
	for _, want := range []string{"auto", "combined", "json", "nginx:", "apache:", "syslog+"} {
		if !slices.Contains(got, want) {
			t.Errorf("offers %q, want %q among them", got, want)
		}
	}
	if len(got) != len(DetectableFormats())+4 {
		t.Errorf("offers %d values, want auto, the %d detectable formats and 3 prefixes", len(got), len(DetectableFormats()))
	}
	after := FormatCompletions("syslog+co")
	if len(after) != len(got)-2 || slices.Contains(after, "syslog+auto") || slices.Contains(after, "syslog+syslog+") ||
		!slices.Contains(after, "syslog+combined") || !slices.Contains(after, "syslog+nginx:") {
		t.Errorf("after syslog+: %q", after)
	}
	for _, f := range after {
		if f == "syslog+nginx:" || f == "syslog+apache:" {
			continue
		}
		if _, err := ParseFormatSpec(f); err != nil {
			t.Errorf("offered %q, refused: %v", f, err)
		}
	}
}
