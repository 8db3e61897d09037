package cmd

import (
	"strconv"
	"strings"

	"github.com/lohisoft/lohibot-audit/internal/failon"
	"github.com/lohisoft/lohibot-audit/render"
	"github.com/spf13/pflag"
)

// addFormatFlag adds --format, offering the formats names.
func addFormatFlag(f *pflag.FlagSet, o *auditOptions, names []string) {
	f.StringVar(&o.Format, "format", "", "output format: "+strings.Join(names, ", ")+" (default table on a terminal, else json)")
	completeWith(f, "format", names...)
}

// reportFormat returns the renderer of --format for a report
// (render.Pick), after --fail-on is checked too: the checks every command
// writing a report makes first.
func (o *auditOptions) reportFormat(env *Env) (render.Renderer, error) {
	r, err := render.Pick(o.Format, env.StdoutTTY)
	if err != nil {
		return nil, err
	}
	if err := failon.Check(o.FailOn); err != nil {
		return nil, err
	}
	return r, nil
}

// documentFormat returns the renderer of --format for a command's output
// other than a report (render.PickDocument).
func (o *auditOptions) documentFormat(env *Env) (render.DocumentRenderer, error) {
	return render.PickDocument(o.Format, env.StdoutTTY)
}

// outputOptions says where standard output goes.
func outputOptions(env *Env) render.Options {
	return render.Options{Terminal: env.StdoutTTY, Width: tableWidth(env)}
}

// addTopFlag adds --top.
func addTopFlag(f *pflag.FlagSet, o *auditOptions) {
	f.Var(&o.Top, "top", "list only the N addresses with the most hits, and N violations (each site's kinds in turn), in table and markdown (0: all; default "+
		strconv.Itoa(render.DefaultTop)+" on a terminal, else all)")
}

// reportOptions says where standard output goes and how many addresses
// --top lets through.
func reportOptions(env *Env, o *auditOptions) render.Options {
	ro := outputOptions(env)
	ro.Top = o.Top.For(env.StdoutTTY)
	return ro
}
