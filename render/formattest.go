package render

import (
	"fmt"
	"io"

	"github.com/lohisoft/lohibot-audit/parse"
)

// FormatTest prints what parse.TestFormat found, as `format test` shows
// it, escaping the log's text; zone names the zone of times logged
// without an offset.
func FormatTest(w io.Writer, t *parse.FormatTest, zone string) {
	esc := parse.EscapeControl
	if len(t.Candidates) > 0 {
		fmt.Fprintf(w, "candidates (the first %d lines that are neither blank nor comments):\n", t.Candidates[0].Lines)
		for _, c := range t.Candidates {
			if c.Fit == 0 && c.Format.Prefixed() {
				continue // said for the plain format
			}
			mark := " "
			if t.Format != nil && c.Format.Name() == t.Format.Name() {
				mark = "*"
			}
			fmt.Fprintf(w, "%s %-28s %3d of %d fit", mark, c.Format.Name(), c.Fit, c.Lines)
			if c.FirstMiss > 0 {
				fmt.Fprintf(w, "; line %d does not: %s", c.FirstMiss, esc(c.Reason))
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
	}
	switch {
	case t.Format == nil && t.DetectErr != nil:
		fmt.Fprintf(w, "format: none: %s\n", esc(t.DetectErr.Error()))
		if t.Closest != nil {
			fmt.Fprintf(w, "the lines are shown as the closest format, %s, reads them\n", t.Closest.Name())
		}
	case t.Detected:
		fmt.Fprintf(w, "format: %s (detected)\n", t.Format.Name())
	case t.Format != nil:
		fmt.Fprintf(w, "format: %s\n", t.Format.Name())
		if best := bestCandidate(t.Candidates); best != nil && best.Format.Name() != t.Format.Name() {
			fmt.Fprintf(w, "auto-detection reads %d of these %d lines as %s (try --log-format auto)\n", best.Fit, best.Lines, best.Format.Name())
		}
	}
	if t.Format != nil && t.Format.NeedsZone() {
		fmt.Fprintf(w, "times without a UTC offset are read in %s (--timezone)\n", zone)
	}
	if t.Compression != "" {
		fmt.Fprintf(w, "compression: %s\n", t.Compression)
	}
	for _, l := range t.Lines {
		fmt.Fprintln(w)
		switch l.Kind {
		case "blank":
			fmt.Fprintf(w, "line %d: blank\n", l.Line)
			continue
		case "comment":
			fmt.Fprintf(w, "line %d: comment: %s\n", l.Line, esc(l.Text))
			continue
		case "request":
			fmt.Fprintf(w, "line %d: fits\n", l.Line)
		default:
			fmt.Fprintf(w, "line %d: does not fit: %s\n", l.Line, esc(l.Reason))
			fmt.Fprintf(w, "  %s\n", esc(l.Text))
			if len(l.Fields) > 0 {
				fmt.Fprintln(w, "  read before it left the format:")
			}
		}
		width := 18
		for _, f := range l.Fields {
			width = max(width, min(len(f.Name), 32))
		}
		for _, f := range l.Fields {
			fmt.Fprintf(w, "  %-*s %s", width, f.Name, esc(f.Text))
			if f.Value != "" {
				fmt.Fprintf(w, "  → %s", esc(f.Value))
			}
			fmt.Fprintln(w)
		}
		if l.Record != nil {
			fmt.Fprintf(w, "  = %s\n", esc(l.Record.Summary()))
		}
	}
}

// bestCandidate is the candidate auto-detection would choose: the first
// that fits the most lines, more than half of them.
func bestCandidate(cs []parse.CandidateTrace) *parse.CandidateTrace {
	var best *parse.CandidateTrace
	for i := range cs {
		if c := &cs[i]; c.Fit*2 > c.Lines && (best == nil || c.Fit > best.Fit) {
			best = c
		}
	}
	return best
}
