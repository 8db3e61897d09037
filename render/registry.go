package render

import (
	"io"
	"slices"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/audit/timeline"
)

// Options say where output goes and how much of it people see.
type Options struct {
	// Terminal says the output goes to a terminal: JSON and YAML then
	// escape the runes a terminal could act on (the text formats always
	// escape text from strangers).
	Terminal bool
	// Width is the most columns a line of a table may take; 0 means no
	// limit. Markdown is never wrapped.
	Width int
	// Top is how many addresses, those with the most hits, the table and
	// Markdown list; 0 means all.
	Top int
	// Timelines are the requests that the HTML report draws per site
	// (nil: none drawn).
	Timelines *timeline.Set
}

// Renderer writes an audit report in one output format.
type Renderer interface {
	// Name is the format's name, as --format takes it.
	Name() string
	// WriteReport writes r to w.
	WriteReport(w io.Writer, r *audit.Report, o Options) error
}

// Document is a command's output other than a report (the verdicts of
// `verify`, the list of `ips show`). JSON and YAML write its Data; csv
// and the formats for people ask it for its own shape.
type Document interface {
	// Data is the value the data formats write, with its field names from
	// its json and yaml tags.
	Data() any
	// WriteCSV writes the document's rows.
	WriteCSV(w io.Writer) error
	// WriteText writes the document for people.
	WriteText(t *Text) error
}

// DocumentRenderer is a Renderer that writes other documents too.
type DocumentRenderer interface {
	Renderer
	WriteDocument(w io.Writer, d Document, o Options) error
}

// renderers are the formats, in the order help text names them.
var renderers = []Renderer{
	textFormat{name: "table"},
	jsonFormat{},
	yamlFormat{},
	csvFormat{},
	textFormat{name: "markdown", md: true},
	htmlFormat{},
}

// Lookup returns the renderer of the format name.
func Lookup(name string) (Renderer, bool) {
	for _, r := range renderers {
		if r.Name() == name {
			return r, true
		}
	}
	return nil, false
}

// LookupDocument returns the renderer of the format name when it writes
// documents other than reports.
func LookupDocument(name string) (DocumentRenderer, bool) {
	r, ok := Lookup(name)
	if !ok {
		return nil, false
	}
	d, ok := r.(DocumentRenderer)
	return d, ok
}

// Names returns the names of the formats that write reports.
func Names() []string {
	out := make([]string, 0, len(renderers))
	for _, r := range renderers {
		out = append(out, r.Name())
	}
	return out
}

// DocumentNames returns the names of the formats that write other
// documents too.
func DocumentNames() []string {
	return slices.DeleteFunc(Names(), func(n string) bool {
		_, ok := LookupDocument(n)
		return !ok
	})
}

type jsonFormat struct{}

func (jsonFormat) Name() string { return "json" }

func (jsonFormat) WriteReport(w io.Writer, r *audit.Report, o Options) error {
	return WriteJSON(w, r, o.Terminal)
}

func (jsonFormat) WriteDocument(w io.Writer, d Document, o Options) error {
	return WriteJSON(w, d.Data(), o.Terminal)
}

type yamlFormat struct{}

func (yamlFormat) Name() string { return "yaml" }

func (yamlFormat) WriteReport(w io.Writer, r *audit.Report, o Options) error {
	return writeYAML(w, r, o.Terminal)
}

func (yamlFormat) WriteDocument(w io.Writer, d Document, o Options) error {
	return writeYAML(w, d.Data(), o.Terminal)
}

type csvFormat struct{}

func (csvFormat) Name() string { return "csv" }

func (csvFormat) WriteReport(w io.Writer, r *audit.Report, _ Options) error {
	return writeReportCSV(w, r)
}

func (csvFormat) WriteDocument(w io.Writer, d Document, _ Options) error {
	return d.WriteCSV(w)
}

// textFormat is the terminal table, or Markdown.
type textFormat struct {
	name string
	md   bool
}

func (f textFormat) Name() string { return f.name }

func (f textFormat) text(w io.Writer, o Options) *Text {
	width := o.Width
	if f.md {
		width = 0
	}
	return NewText(w, f.md, width)
}

func (f textFormat) WriteReport(w io.Writer, r *audit.Report, o Options) error {
	return writeReportText(f.text(w, o), r, o.Top)
}

func (f textFormat) WriteDocument(w io.Writer, d Document, o Options) error {
	t := f.text(w, o)
	if err := d.WriteText(t); err != nil {
		return err
	}
	return t.Err()
}
