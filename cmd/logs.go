package cmd

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/audit/timeline"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/logfiles"
	"github.com/lohisoft/lohibot-audit/internal/progress"
	"github.com/lohisoft/lohibot-audit/internal/tty"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/render"
	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/spf13/cobra"
)

func newLogsCmd(env *Env) *cobra.Command {
	o := &auditOptions{}
	c := &cobra.Command{
		Use:   "logs [FILE...]",
		Short: "Audit access logs: who claimed to be " + crawlerTitle + ", who really was, and how it behaved",
		Args:  cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, files []string) error {
			o.given = func(name string) bool { return flagGiven(c.Flags(), name) }
			return runLogs(c.Context(), env, o, files)
		},
	}
	f := c.Flags()
	addFormatFlag(f, o, render.Names())
	addTopFlag(f, o)
	addLogFlags(f, o)
	addCrawlerFlag(f, &o.Crawlers)
	addIdentityFlags(f, o)
	addSnapshotFlags(f, &o.snapshotOptions)
	addConfigFlag(f, o)
	return c
}

func runLogs(ctx context.Context, env *Env, o *auditOptions, files []string) error {
	format, err := o.reportFormat(env)
	if err != nil {
		return err
	}
	ro := reportOptions(env, o)
	ro.Timelines = render.Timelines(format)
	snap, err := startSnapshot(env, o)
	if err != nil {
		return err
	}
	rep, _, err := runAudit(ctx, env, o, files, ro.Timelines)
	if rep == nil {
		snap.Abort()
		return err
	}
	env.phase(phaseWrite)
	// The snapshot goes in place before the report is written: a report
	// that cannot be written does not lose it.
	serr := snap.Commit(ctx)
	if ctx.Err() != nil {
		return errInterrupted
	}
	if serr != nil {
		err = serr // exit 3 as an input not read whole is, and said
	}
	return writeAuditReport(ctx, env, o, format, ro, rep, 0, err)
}

// writeAuditReport writes the report of logs, merge or verify --recheck,
// says its warnings on stderr where the report does not show them (but
// the first said, an earlier run's), and returns the error the command
// ends with: err (the run's: an input not read whole), an output not
// written, or --fail-on's findings.
func writeAuditReport(ctx context.Context, env *Env, o *auditOptions, format render.Renderer, ro render.Options, rep *audit.Report, said int, err error) error {
	werr := format.WriteReport(env.Stdout, rep, ro)
	if ctx.Err() != nil {
		return errInterrupted
	}
	// Where the report does not show its warnings (a cron job with csv
	// or json), stderr must say them too.
	if !render.ShowsWarnings(format, env.StdoutTTY) {
		warnAll(env, rep.Warnings[said:])
	}
	if werr != nil {
		return writeFailed("the report", werr)
	}
	if err != nil {
		return err
	}
	return failOnFindings(env, o.FailOn, rep.Summary.SpoofedHits, "spoofed hit", "spoofed hits", rep.Summary.Violations)
}

// warnAll prints each distinct warning once on stderr, in order.
func warnAll(env *Env, warnings []string) {
	said := make(map[string]bool, len(warnings))
	for _, w := range warnings {
		if !said[w] {
			said[w] = true
			warnf(env, "%s", w)
		}
	}
}

// warnEach prints each warning on stderr, in order.
func warnEach(env *Env, warnings []string) {
	for _, w := range warnings {
		warnf(env, "%s", w)
	}
}

// runAudit checks the flags, loads robots.txt and the IP list, and runs
// the audit of files (audit.Run). With an *audit.InputError it returns
// the report of everything read: an input could not be read whole.
// timelines, when not nil, are filled for the HTML report
// (audit.Options.Timelines).
func runAudit(ctx context.Context, env *Env, o *auditOptions, files []string, timelines *timeline.Set) (*audit.Report, *verify.Identity, error) {
	logFormat, err := parse.ParseFormatSpec(o.LogFormat)
	if err != nil {
		return nil, nil, fail.Hinted(err, "see 'lohibot-audit logs --help' for the formats")
	}
	now := env.Now()
	since, until, err := audit.ParseWindow(o.Since, o.Until, now)
	if err != nil {
		return nil, nil, err
	}
	if err := o.Flags.Check(); err != nil {
		return nil, nil, err
	}
	read, err := o.readOptions.settings(env.Getenv)
	if err != nil {
		return nil, nil, err
	}
	if len(files) == 0 {
		if env.StdinTTY() {
			return nil, nil, fail.Hinted(errors.New("no log files given"), "name files, or pipe a log and give '-': zcat access.log.*.gz | lohibot-audit logs -")
		}
		files = []string{"-"}
	}
	logs, err := logfiles.Expand(files)
	if err != nil {
		return nil, nil, err
	}
	files, logs.Stdin = logs.Files, env.Stdin
	siteFlags, err := audit.ParseSites(o.Site)
	if err != nil {
		return nil, nil, err
	}
	profiles, err := crawler.Resolve(o.Crawlers)
	if err != nil {
		return nil, nil, err
	}
	ld, err := o.setup(env, profiles).Load(ctx)
	if err != nil {
		return nil, nil, err
	}
	id := heldIdentity(env, o, ld.Identity, ld.Repeated)
	sites := siteFlags.Choose(files)
	var prog *progress.Reads
	if progressWanted(env, o) {
		prog = progress.StartReads(env.Stderr, progressOptions(env))
	}
	defer prog.Stop()
	rep, err := audit.Run(ctx, audit.Options{
		Inputs:   audit.InputsOf(files, sites, logs.Opener),
		Format:   logFormat,
		TrustXFF: o.TrustXFF,
		Trust:    id.Proxies,
		Now:      env.Now,
		Location: read.Location,
		ZoneName: read.ZoneName,
		MaxDict:  read.MaxDict,
		Subjects: audit.SubjectsHeld(id, audit.Holding{Since: since, Until: until, Overrides: o.Flags.Overrides(o.given),
			MaxViolations: o.MaxViolations, OptOuts: ld.OptOuts, OptOutGrace: o.OptOutGrace}),
		Named:      len(o.Crawlers) > 0,
		Classifier: id,
		Robots:     ld.Robots,
		ReadWarnings: func(ins []audit.InputReport) []string {
			return append(append(logs.Warnings(), siteFlags.Unmatched(files)...), audit.SiteWarnings(sites, ins)...)
		},
		Timelines: timelines,
		Snapshot:  o.snapshot,
		Progress:  prog,
		OnPhase: func(p audit.Phase) {
			if p != audit.PhaseRead {
				prog.Stop()
			}
			env.phase(string(p))
		},
	})
	if rep == nil {
		return nil, nil, err
	}
	rep.Version = Version
	rep.GeneratedAt = env.Now().UTC().Truncate(time.Second)
	return rep, id, err
}

// StdinTTY reports whether standard input is a terminal (nothing piped).
func (e *Env) StdinTTY() bool {
	f, ok := e.Stdin.(*os.File)
	return ok && tty.Is(f)
}
