package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/crowdsec"
	"github.com/lohisoft/lohibot-audit/emit"
	"github.com/lohisoft/lohibot-audit/follow"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/flagfile"
	"github.com/lohisoft/lohibot-audit/nftset"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/lohisoft/lohibot-audit/watch"
	"github.com/spf13/cobra"
)

// watchOptions holds the flags of `watch`.
type watchOptions struct {
	auditOptions
	FromStart       bool
	NFTables        bool
	NFTTable        string
	SetOnly         bool
	TTL             string
	NeverBlock      []string
	Exec            string
	ExecTimeout     time.Duration
	ExecConcurrency int
	VerdictTTL      time.Duration
	NFTNetNS        string
	CPUProfile      string
	CrowdSec        bool
	crowdSecFlags
	stateFlags
	Metrics string
}

// watchSignals, when set by a test, replaces the process's SIGHUP and
// SIGUSR1 (watch.ProcessSignals).
var watchSignals = watch.ProcessSignals

// watchNotApplicable are the flags of addLogFlags that make no sense for a
// run that never ends.
var watchNotApplicable = []string{"since", "until", "fail-on", "no-progress", "max-dict"}

func newWatchCmd(env *Env) *cobra.Command { return newWatchCmdWith(env, &watchOptions{}) }

// newWatchCmdWith is newWatchCmd with its flags in o.
func newWatchCmdWith(env *Env, o *watchOptions) *cobra.Command {
	c := &cobra.Command{
		Use:   "watch [FILE...]",
		Short: "Follow access logs live: judge new claimants at once, block spoofers in nftables",
		Args:  cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, files []string) error {
			o.given = func(name string) bool { return flagGiven(c.Flags(), name) }
			err := runWatch(c, env, o, files)
			if c.Context().Err() != nil {
				// SIGTERM and SIGINT are how watch is stopped, at any
				// moment, its start included: exit 0.
				return nil
			}
			return err
		},
	}
	f := c.Flags()
	addLogFlags(f, &o.auditOptions)
	for _, name := range watchNotApplicable {
		f.MarkHidden(name)
	}
	addIdentityFlags(f, &o.auditOptions)
	addCrawlerFlag(f, &o.Crawlers)
	addConfigFlag(f, &o.auditOptions)
	f.BoolVar(&o.FromStart, "from-start", false, "read what the files hold first, instead of starting at their end")
	f.BoolVar(&o.NFTables, "nftables", false, "add each new spoofer to the nftables sets of 'emit nftables', through netlink (needs CAP_NET_ADMIN)")
	f.StringVar(&o.NFTTable, "nft-table", "", "nftables table `FAMILY NAME` (default \"inet lohibot\")")
	f.BoolVar(&o.SetOnly, "set-only", false, "nftables: create only the table and sets, no chain (for your own rules to refer to @spoofed_live_v4, @spoofed_live_v6, @spoofed_v4 and @spoofed_v6)")
	f.StringVar(&o.TTL, "ttl", "7d", "nftables: how long each element lives; crowdsec: how long decisions last (7d, 36h, 1d12h; at most 365d)")
	f.StringArrayVar(&o.NeverBlock, "never-block", nil, "`CIDR` or address never to act on (repeatable, or comma separated)")
	f.StringVar(&o.Exec, "exec", "", "run `CMD` ADDRESS CRAWLER REASON for each new spoofer (no shell; CMD is split at spaces)")
	f.DurationVar(&o.ExecTimeout, "exec-timeout", watch.DefaultExecTimeout, "longest time one --exec command may run; then its process group is ended")
	f.IntVar(&o.ExecConcurrency, "exec-concurrency", watch.DefaultExecConcurrency, "most --exec commands running at once")
	f.BoolVar(&o.CrowdSec, "crowdsec", false, "push each spoofer to a CrowdSec Local API as a ban decision (see --crowdsec-credentials)")
	addCrowdSecFlags(f, &o.crowdSecFlags)
	f.DurationVar(&o.VerdictTTL, "verdict-ttl", watch.DefaultVerdictTTL, "how long a verdict stands before the address, seen again, is judged again (DNS answers are cached by their own TTL)")
	f.StringVar(&o.NFTNetNS, "nft-netns", "", "network namespace `FILE` (such as /run/netns/NAME) whose nftables to use")
	f.MarkHidden("nft-netns")
	addStateDirFlag(f, &o.stateFlags)
	f.BoolVar(&o.NoState, "no-state", false, "keep no state: every restart judges every address again and forgets what it blocked")
	f.StringVar(&o.Metrics, "metrics", "", "serve Prometheus metrics at http://`HOST:PORT`/metrics (such as 127.0.0.1:9571)")
	c.AddCommand(newWatchStatusCmd(env))
	f.StringVar(&o.CPUProfile, "cpu-profile", "", "write a pprof CPU profile of the run to `FILE` when it stops (scripts/bench-watch)")
	f.MarkHidden("cpu-profile")
	return c
}

func runWatch(c *cobra.Command, env *Env, o *watchOptions, files []string) error {
	ctx := c.Context()
	for _, name := range watchNotApplicable {
		if c.Flags().Changed(name) {
			return fail.Usagef("--%s does not apply to watch", name)
		}
	}
	if err := o.Flags.Check(); err != nil {
		return err
	}
	read, err := o.readOptions.settings(env.Getenv)
	if err != nil {
		return err
	}
	logFormat, err := parse.ParseFormatSpec(o.LogFormat)
	if err != nil {
		return fail.Hinted(err, "see 'lohibot-audit watch --help' for the formats")
	}
	sources := watchSources(env, o)
	if err := sources.Check(); err != nil {
		return err
	}
	asked := watch.Asked{NFTables: o.NFTables, Exec: flagGiven(c.Flags(), "exec"), CrowdSec: o.CrowdSec}
	ttl, argv, err := asked.Check(o.TTL, o.Exec, c.Flags().Changed)
	if err != nil {
		return err
	}
	var csCreds *crowdsec.Credentials
	if asked.CrowdSec {
		creds, err := crowdsec.LoadCredentials(o.CrowdSecCredentials)
		if err != nil {
			return err
		}
		csCreds = &creds
	}
	if err := watch.CheckLimits(o.ExecTimeout, o.ExecConcurrency, o.VerdictTTL); err != nil {
		return err
	}
	if len(files) == 0 {
		if env.StdinTTY() {
			return fail.Hinted(errors.New("no log files given"), "name the files to follow, or pipe a log and give '-'")
		}
		files = []string{"-"}
	}
	if err := watch.CheckFiles(files); err != nil {
		return err
	}
	sites, err := audit.ParseSites(o.Site)
	if err != nil {
		return err
	}
	if err := watch.CheckMetrics(o.Metrics); err != nil {
		return err
	}
	profiles, err := crawler.Resolve(o.Crawlers)
	if err != nil {
		return err
	}
	// What logs checks before it fetches anything, watch checks before
	// it takes its state directory.
	setup := o.setup(env, profiles)
	if err := setup.Check(); err != nil {
		return err
	}
	optOuts, _ := setup.OptOuts(profiles) // checked above

	say := watchSay(env)
	state, err := stateChoice(env, &o.stateFlags).Take(env.Now(), say)
	if err != nil {
		return err
	}
	defer state.Close()
	g, err := sources.Load(ctx, profiles)
	if err != nil {
		return err
	}
	warnAll(env, g.Warnings())

	sc := watch.ServiceConfig{Config: watch.Config{Options: watch.Options{
		Files:    files,
		Follow:   follow.Options{FromStart: o.FromStart, Stdin: env.Stdin},
		Format:   logFormat,
		SiteOf:   sites.SiteOf(files),
		TrustXFF: o.TrustXFF,
		Location: read.Location,
		Events:   watch.EventsTo(watchEventWriter(env), env.StdoutTTY, say),
		Say:      say,
		Now:      env.Now,
		BlockTTL: ttl,
		Version:  Version,
	}, Identity: g.Identity, Overrides: o.Flags.Overrides(o.given), Robots: g.Robots.For,
		NeverBlock: g.NeverBlock, VerdictTTL: o.VerdictTTL, Concurrency: o.DNSConcurrency, MaxViolations: o.MaxViolations,
		OptOuts: optOuts, OptOutGrace: o.OptOutGrace},
		State: state, Metrics: o.Metrics, CrowdSec: csCreds, CrowdSecFile: o.CrowdSecCredentials}
	if o.NFTables {
		sc.NFTables = &nftset.Options{NFTOptions: emit.NFTOptions{TTL: ttl, Table: o.NFTTable, SetOnly: o.SetOnly}}
		sc.NFTNetNS = o.NFTNetNS
	}
	if asked.Exec {
		sc.Exec = &watch.Exec{Argv: argv, Timeout: o.ExecTimeout, Concurrency: o.ExecConcurrency}
		sc.ExecCommand = o.Exec
	}
	w, err := watch.Start(ctx, sc)
	if err != nil {
		return err
	}
	defer w.Close()
	if o.CPUProfile != "" {
		pf, err := os.Create(o.CPUProfile)
		if err != nil {
			return fail.Usagef("--cpu-profile: %v", fail.PathCause(err))
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return fail.Usagef("--cpu-profile: %v", err)
		}
		defer pprof.StopCPUProfile()
	}
	sig, stopSignals := watchSignals()
	defer stopSignals()
	// SIGTERM and SIGINT are how watch is stopped: exit 0.
	sig.OnReload = func() error { return watchReload(ctx, c, env, o, w.Watcher) }
	return w.Serve(ctx, sig)
}

// watchSources are where o's watch loads what it checks against, at
// start and on SIGHUP.
func watchSources(env *Env, o *watchOptions) watch.Sources {
	return watch.Sources{NeverBlock: o.NeverBlock, Robots: o.Robots, RobotsLoader: robotsLoader(env),
		Identity: func(ctx context.Context, profiles []*crawler.Profile) (*verify.Identity, error) {
			return newIdentityFor(ctx, env, &o.auditOptions, profiles)
		}}
}

// watchSay says msg on stderr, as watch says what happens.
func watchSay(env *Env) func(string) {
	return func(msg string) { fmt.Fprintf(env.Stderr, "lohibot-audit: %s\n", sanitize(msg)) }
}

// watchEventWriter is where events go: standard output itself, not the
// run's output writer, which remembers a failed write to end the run with
// exit 3. For watch a full disk is said once and waited out (SPEC §11),
// and SIGTERM ends it with 0 whatever writes failed before.
func watchEventWriter(env *Env) io.Writer { return stream(env.Stdout) }

// watchReload reads the config file again over the command line's flags,
// and loads the crawler profiles, their IP lists and robots.txt anew for
// w. The crawlers watched stay those of the start.
func watchReload(ctx context.Context, c *cobra.Command, env *Env, o *watchOptions, w *watch.Watcher) error {
	no := &watchOptions{}
	if err := flagfile.Reload(c, newWatchCmdWith(env, no), o.Config, env.Getenv); err != nil {
		return err
	}
	profiles, err := crawler.Resolve(no.Crawlers)
	if err != nil {
		return err
	}
	g, err := watchSources(env, no).Load(ctx, profiles)
	if err != nil {
		return err
	}
	if err := w.Reload(g); err != nil {
		return err
	}
	warnAll(env, g.Warnings())
	return nil
}
