package parse

import "strings"

// FormatCompletions are the values shell completion offers for a log
// format being typed (toComplete): auto, every format auto-detection
// knows, and the prefixes of a format string (nginx:, apache:) and of a
// syslog-forwarded log (syslog+); after syslog+, the same names again
// behind it.
func FormatCompletions(toComplete string) []string {
	all := append(append([]string{"auto"}, DetectableFormats()...), "nginx:", "apache:", "syslog+")
	if !strings.HasPrefix(toComplete, "syslog+") {
		return all
	}
	var out []string
	for _, v := range all {
		if v != "auto" && v != "syslog+" {
			out = append(out, "syslog+"+v)
		}
	}
	return out
}
