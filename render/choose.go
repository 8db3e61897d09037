package render

import (
	"errors"
	"strings"

	"github.com/lohisoft/lohibot-audit/audit/timeline"
	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// pageOnly is a format whose output is a page for a browser, never for a
// terminal (html).
type pageOnly interface{ pageOnly() }

func (htmlFormat) pageOnly() {}

// Pick returns the renderer of the format name (--format) for a report
// written to a terminal or not; name "" is table on a terminal, else
// json. An unknown name, or a page for a browser (html) written to a
// terminal, is a usage error.
func Pick(name string, terminal bool) (Renderer, error) {
	name = defaultName(name, terminal)
	r, ok := Lookup(name)
	if !ok {
		return nil, fail.Usagef("unknown --format %q: use %s", name, orList(Names()))
	}
	if _, page := r.(pageOnly); page && terminal {
		return nil, fail.Hinted(
			errors.New("--format "+name+" writes a page for a browser, not for a terminal"),
			"redirect it to a file: lohibot-audit logs --format html access.log > report.html")
	}
	return r, nil
}

// PickDocument is Pick for a command's output other than a report.
func PickDocument(name string, terminal bool) (DocumentRenderer, error) {
	name = defaultName(name, terminal)
	if r, ok := LookupDocument(name); ok {
		return r, nil
	}
	return nil, fail.Usagef("unknown --format %q: use %s", name, orList(DocumentNames()))
}

// ShowsWarnings says whether the report, as r writes it, shows its
// warnings to whoever reads it: table and markdown on a terminal do.
// Everywhere else (a cron job writing csv or json) they are for stderr.
func ShowsWarnings(r Renderer, terminal bool) bool {
	_, text := r.(textFormat)
	return text && terminal
}

// defaultName is name, or the format written when it is "".
func defaultName(name string, terminal bool) string {
	switch {
	case name != "":
		return name
	case terminal:
		return "table"
	}
	return "json"
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Timelines returns the set for a run to fill with the requests that r
// draws per site (Options.Timelines: the HTML report's timelines), or nil
// for a format that draws none.
func Timelines(r Renderer) *timeline.Set {
	if _, ok := r.(htmlFormat); ok {
		return &timeline.Set{}
	}
	return nil
}
