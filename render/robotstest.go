package render

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/robots"
)

// RobotsTestWriter writes what `robots test` found of its URLs.
type RobotsTestWriter func(w io.Writer, results []robots.TestResult) error

// PickRobotsTest returns the writer of `robots test`'s --format: text, a
// table of the verdict, the URL and the line or rule that decides it; or
// json, the results as one JSON array. Another value is a usage error.
func PickRobotsTest(format string) (RobotsTestWriter, error) {
	switch format {
	case "text":
		return writeRobotsTestText, nil
	case "json":
		return func(w io.Writer, results []robots.TestResult) error { return WriteJSON(w, results, true) }, nil
	}
	return nil, fail.Usagef("unknown --format %q: use text or json", format)
}

// writeRobotsTestText writes the results as aligned columns, text from
// the outside world escaped.
func writeRobotsTestText(w io.Writer, results []robots.TestResult) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range results {
		verdict := "allowed"
		if !r.Allowed {
			verdict = "disallowed"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", verdict, parse.EscapeControl(r.URL), parse.EscapeControl(r.Reason()))
	}
	return tw.Flush()
}
