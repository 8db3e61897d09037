package cmd

import (
	"context"
	"errors"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/logfiles"
	"github.com/lohisoft/lohibot-audit/proxy"
	"github.com/lohisoft/lohibot-audit/render"
	"github.com/lohisoft/lohibot-audit/robots"
	"github.com/spf13/cobra"
)

func newMergeCmd(env *Env) *cobra.Command {
	o := &auditOptions{}
	var skew time.Duration
	c := &cobra.Command{
		Use:   "merge SNAPSHOT...",
		Short: "Merge the snapshots of several servers into the report one run over all their logs would give",
		Args:  cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, files []string) error {
			o.given = func(name string) bool { return flagGiven(c.Flags(), name) }
			return runMerge(c.Context(), env, o, skew, files)
		},
	}
	f := c.Flags()
	addFormatFlag(f, o, render.Names())
	addTopFlag(f, o)
	addCheckFlags(f, o)
	addOptOutFlags(f, o)
	f.StringVar(&o.FailOn, "fail-on", "", "exit 1 when findings exist: spoofed, violations or any")
	f.DurationVar(&skew, "clock-skew", time.Second, "how far apart two servers' clocks may be: a timing violation between requests of different servers must hold however they differ (0: compare logged times as they are)")
	addCrawlerFlag(f, &o.Crawlers)
	addCacheFlags(f, o)
	addConfigFlag(f, o)
	return c
}

func runMerge(ctx context.Context, env *Env, o *auditOptions, skew time.Duration, files []string) error {
	format, err := o.reportFormat(env)
	if err != nil {
		return err
	}
	if err := o.Flags.Check(); err != nil {
		return err
	}
	if err := audit.CheckDurations(o.OptOutGrace, skew); err != nil {
		return err
	}
	if err := audit.CheckSnapshotArgs(files); err != nil {
		return err
	}
	// Snapshots are named as logs are: a pattern is expanded here.
	inputs, err := logfiles.Expand(files)
	if err != nil {
		return err
	}
	for _, w := range inputs.Warnings() {
		warnf(env, "%s", w)
	}
	files = inputs.Files
	var profiles []*crawler.Profile
	if len(o.Crawlers) > 0 {
		if profiles, err = crawler.Resolve(o.Crawlers); err != nil {
			return err
		}
	}
	if len(profiles) > 0 && len(o.OptedOut) > 0 {
		// Checked before anything is fetched when the crawlers are
		// known; else once the snapshots say which they are.
		if _, err := parseOptedOut(o.OptedOut, profiles, o.OptOutGrace, env.Now()); err != nil {
			return err
		}
	}
	if err := robots.CheckValues(o.Robots); err != nil {
		return err
	}
	env.phase(phaseRobots)
	robots, err := loadRobotsSet(ctx, env, o.Robots)
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return errInterrupted
	}
	ro := reportOptions(env, o)
	ro.Timelines = render.Timelines(format)
	defer audit.MergeMemory(env.Getenv("GOGC"))()
	mo := audit.MergeOptions{
		Snapshots:     audit.SnapshotFiles(files),
		Profiles:      profiles,
		Named:         len(o.Crawlers) > 0,
		Overrides:     o.Flags.Overrides(o.given),
		MaxViolations: o.MaxViolations,
		ClockSkew:     skew,
		OptOutGrace:   o.OptOutGrace,
		Robots:        robots,
		Timelines:     ro.Timelines,
		OnPhase:       func(p audit.Phase) { env.phase(string(p)) },
		Now:           env.Now,
		Proxies: func(trusted []string, trustXFF bool) (*proxy.Set, error) {
			// The CDN edges as `ips update` cached them here; the
			// snapshots' --trusted-proxy values and --trust-xff.
			dir, _ := o.identity(env).Cache()
			set, _, err := (&proxy.Loader{CacheDir: dir}).Set(trusted, trustXFF)
			return set, err
		},
	}
	if len(o.OptedOut) > 0 {
		// The crawlers are the snapshots' unless --crawler names them.
		mo.OptOuts = func(profiles []*crawler.Profile) (map[string]conduct.OptOuts, error) {
			return parseOptedOut(o.OptedOut, profiles, o.OptOutGrace, env.Now())
		}
	}
	rep, err := audit.MergeSnapshots(ctx, mo)
	if ctx.Err() != nil {
		return errInterrupted
	}
	var se *audit.SnapshotError
	if errors.As(err, &se) {
		return fail.Usagef("cannot merge snapshot %s", se.Error())
	}
	if rep == nil && fail.KindOf(err) == fail.Usage {
		return err // an --opted-out value for the snapshots' crawlers
	}
	if rep == nil {
		return fail.New(fail.Incomplete, err, "")
	}
	rep.Version = Version
	rep.GeneratedAt = env.Now().UTC().Truncate(time.Second)
	env.phase(phaseWrite)
	return writeAuditReport(ctx, env, o, format, ro, rep, 0, err)
}
