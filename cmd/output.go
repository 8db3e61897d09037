package cmd

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/render"
	"github.com/spf13/pflag"
)

// addFormatFlag adds --format, offering the formats names.
func addFormatFlag(f *pflag.FlagSet, o *auditOptions, names []string) {
	f.StringVar(&o.Format, "format", "", "output format: "+strings.Join(names, ", ")+" (default table on a terminal, else json)")
	completeWith(f, "format", names...)
}

// formatName resolves --format against the terminal: table on a terminal,
// else json, when it is not set.
func (o *auditOptions) formatName(env *Env) string {
	switch {
	case o.Format != "":
		return o.Format
	case env.StdoutTTY:
		return "table"
	}
	return "json"
}

// reportFormat returns the renderer of --format for a report, after the
// checks every command writing a report makes first: a format that is not
// for a terminal (html) refused when standard output is one, and --fail-on
// known.
func (o *auditOptions) reportFormat(env *Env) (render.Renderer, error) {
	name := o.formatName(env)
	r, ok := render.Lookup(name)
	if !ok {
		return nil, fail.Usagef("unknown --format %q: use %s", name, orList(render.Names()))
	}
	if err := refuseTerminal(env, r); err != nil {
		return nil, err
	}
	if _, err := failOnMatch(o.FailOn, 0, 0); err != nil {
		return nil, err
	}
	return r, nil
}

// documentFormat returns the renderer of --format for a command's output
// other than a report.
func (o *auditOptions) documentFormat(env *Env) (render.DocumentRenderer, error) {
	name := o.formatName(env)
	if r, ok := render.LookupDocument(name); ok {
		return r, nil
	}
	return nil, fail.Usagef("unknown --format %q: use %s", name, orList(render.DocumentNames()))
}

// outputOptions says where standard output goes.
func outputOptions(env *Env) render.Options {
	return render.Options{Terminal: env.StdoutTTY, Width: tableWidth(env)}
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// stickyWriter remembers the first write error, so that text printed in
// many small writes can be checked once at the end.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	s.err = err
	return n, err
}

// defaultTop is how many addresses a table on a terminal lists when --top
// is not given.
const defaultTop = 20

// topFlag is --top: how many addresses the table and Markdown list. Not
// set, it is defaultTop on a terminal and all elsewhere.
type topFlag struct {
	n   int
	set bool
}

func (t *topFlag) String() string {
	if !t.set {
		return ""
	}
	return strconv.Itoa(t.n)
}

func (t *topFlag) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return fmt.Errorf("%q is not a number of addresses (0 lists all)", s)
	}
	t.n, t.set = n, true
	return nil
}

func (t *topFlag) Type() string { return "N" }

// addTopFlag adds --top.
func addTopFlag(f *pflag.FlagSet, o *auditOptions) {
	f.Var(&o.Top, "top", "list only the N addresses with the most hits, and N violations (each site's kinds in turn), in table and markdown (0: all; default "+
		strconv.Itoa(defaultTop)+" on a terminal, else all)")
}

// reportOptions says where standard output goes and how many addresses
// --top lets through.
func reportOptions(env *Env, o *auditOptions) render.Options {
	ro := outputOptions(env)
	switch {
	case o.Top.set:
		ro.Top = o.Top.n
	case env.StdoutTTY:
		ro.Top = defaultTop
	}
	return ro
}

// refuseTerminal returns a usage error for a format that is not for a
// terminal (html) when standard output is one.
func refuseTerminal(env *Env, f render.Renderer) error {
	if env.StdoutTTY && f.Name() == "html" {
		return fail.Hinted(
			fmt.Errorf("--format html writes a page for a browser, not for a terminal"),
			"redirect it to a file: lohibot-audit logs --format html access.log > report.html")
	}
	return nil
}
