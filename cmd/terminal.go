package cmd

import (
	"io"

	"github.com/lohisoft/lohibot-audit/internal/progress"
	"github.com/lohisoft/lohibot-audit/internal/stickyio"
	"github.com/lohisoft/lohibot-audit/internal/tty"
)

// tableWidth returns the columns that a table printed to standard output
// may take (tty.Width): that of the stream itself, not of the run's
// output writer around it.
func tableWidth(env *Env) int { return tty.Width(stream(env.Stdout), env.StdoutTTY, env.Getenv) }

// stream is w, or the stream itself when w is the run's output writer.
func stream(w io.Writer) io.Writer {
	if o, ok := w.(*stickyio.Output); ok {
		return o.W
	}
	return w
}

// progressWanted says whether progress lines go to stderr
// (progress.Wanted).
func progressWanted(env *Env, o *auditOptions) bool {
	return progress.Wanted(env.StderrTTY, o.NoProgress, env.Getenv)
}

// progressOptions draws progress lines to the width of standard error,
// asked at each redraw.
func progressOptions(env *Env) progress.Options {
	return progress.Options{Width: func() int { return tty.Width(env.Stderr, env.StderrTTY, env.Getenv) }}
}
