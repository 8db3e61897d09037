package fail

import "strings"

// Lines returns err as the program says an error: its message's first
// line, and a hint line (or "") made of the rest of the message, read as
// one line, before err's hint (HintOf). cobra's suggestions
// ("\n\nDid you mean this?\n\tlogs\n") become "did you mean logs?".
func Lines(err error) (msg, hint string) {
	msg, more := splitLines(err.Error())
	hint = HintOf(err)
	if more != "" && hint != "" {
		hint = more + "; " + hint
	} else if more != "" {
		hint = more
	}
	return msg, hint
}

// splitLines splits an error message into its first line and the rest of
// its non-blank lines as one line.
func splitLines(msg string) (first, rest string) {
	first, tail, ok := strings.Cut(msg, "\n")
	if !ok {
		return msg, ""
	}
	var parts, suggestions []string
	suggesting := false
	for _, l := range strings.Split(tail, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
		case l == "Did you mean this?":
			suggesting = true
		case suggesting:
			suggestions = append(suggestions, l)
		default:
			parts = append(parts, l)
		}
	}
	if len(suggestions) > 0 {
		parts = append(parts, "did you mean "+strings.Join(suggestions, " or ")+"?")
	}
	return first, strings.Join(parts, "; ")
}
