package cmd

import (
	"context"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/logfiles"
	"github.com/lohisoft/lohibot-audit/render"
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
	warnEach(env, inputs.Warnings())
	files = inputs.Files
	var profiles []*crawler.Profile
	if len(o.Crawlers) > 0 {
		if profiles, err = crawler.Resolve(o.Crawlers); err != nil {
			return err
		}
	}
	// The crawlers are the snapshots' unless --crawler names them: the
	// opt-outs are checked once they are known. The verdicts are the
	// snapshots' too: no identity is loaded.
	setup := o.setup(env, profiles)
	setup.Identity = nil
	ld, err := setup.Load(ctx)
	if err != nil {
		return err
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
		Robots:        ld.Robots,
		Timelines:     ro.Timelines,
		OnPhase:       func(p audit.Phase) { env.phase(string(p)) },
		Now:           env.Now,
		// The CDN edges as `ips update` cached them here; the snapshots'
		// --trusted-proxy values and --trust-xff.
		Proxies: o.identity(env).ProxiesFor,
	}
	if len(o.OptedOut) > 0 {
		mo.OptOuts = setup.OptOuts
	}
	rep, err := mo.Merge(ctx)
	if rep == nil {
		return err
	}
	rep.Version = Version
	rep.GeneratedAt = env.Now().UTC().Truncate(time.Second)
	env.phase(phaseWrite)
	return writeAuditReport(ctx, env, o, format, ro, rep, 0, err)
}
