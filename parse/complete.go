package parse

import "strings"

// FormatCompletions are the values shell completion offers for a log
// format being typed (toComplete): auto, every format auto-detection
// knows, and the prefixes of a format string (nginx:, apache:) and of a
// line's header (syslog+, container+); after such a header prefix, the
// same names again behind it.
func FormatCompletions(toComplete string) []string {
	all := append([]string{"auto"}, DetectableFormats()...)
	all = append(all, "nginx:", "apache:")
	for _, h := range headers {
		all = append(all, h.prefix())
	}
	for _, h := range headers {
		pre := h.prefix()
		if !strings.HasPrefix(toComplete, pre) {
			continue
		}
		var out []string
		for _, v := range all {
			if v != "auto" && !isHeaderPrefix(v) {
				out = append(out, pre+v)
			}
		}
		return out
	}
	return all
}

func isHeaderPrefix(v string) bool {
	for _, h := range headers {
		if v == h.prefix() {
			return true
		}
	}
	return false
}
