package cmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/crowdsec"
	"github.com/lohisoft/lohibot-audit/emit"
	"github.com/lohisoft/lohibot-audit/internal/nouns"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// crowdSecFlags are the CrowdSec flags of emit and watch.
type crowdSecFlags struct {
	CrowdSecCredentials string
	// DryRun is emit's --dry-run.
	DryRun bool
}

func addCrowdSecFlags(f *pflag.FlagSet, o *crowdSecFlags) {
	f.StringVar(&o.CrowdSecCredentials, "crowdsec-credentials", crowdsec.DefaultCredentialsFile,
		"crowdsec: the Local API machine's credentials `FILE` (url, login, password), as 'cscli machines add' writes it")
}

// loadCrowdSecCredentials reads the credentials file; a file that cannot
// be used is a configuration error.
func loadCrowdSecCredentials(path string) (crowdsec.Credentials, error) {
	c, err := crowdsec.ReadCredentials(path)
	if err != nil {
		return c, &exitError{code: ExitUsage, err: withHint(errors.New(unwrapPathError(err).Error()),
			"give a Local API machine's credentials with --crowdsec-credentials FILE ('cscli machines add NAME --auto -f FILE' writes one)")}
	}
	return c, nil
}

// newCrowdSecClient is the client of the machine c.
func newCrowdSecClient(env *Env, c crowdsec.Credentials, scenarios []string) *crowdsec.Client {
	return &crowdsec.Client{Credentials: c, UserAgent: "lohibot-audit/" + Version, Scenarios: scenarios, Now: env.Now}
}

// emitPush pushes the decisions of an emit run to a Local API.
type emitPush struct {
	creds crowdsec.Credentials
	ttl   time.Duration
}

// emitCrowdSecSetup checks the crowdsec target's flags before any input is
// read, and returns how to push, or nil when the run writes its output
// (another target, or --dry-run).
func emitCrowdSecSetup(o *emitOptions, target string, mode emit.Mode) (*emitPush, error) {
	if target != "crowdsec" {
		return nil, nil
	}
	if mode != emit.BlockSpoofed {
		return nil, usageError("--mode %s: the crowdsec target bans spoofers only (block-spoofed)", mode)
	}
	if o.DryRun {
		return nil, nil
	}
	if o.Output != "" {
		return nil, usageError("-o is for --dry-run: without it the crowdsec target pushes its decisions to the Local API")
	}
	creds, err := loadCrowdSecCredentials(o.CrowdSecCredentials)
	if err != nil {
		return nil, err
	}
	ttl, err := emit.ParseTTL(o.TTL)
	if err != nil {
		return nil, usageError("--ttl %q: %v", o.TTL, err)
	}
	return &emitPush{creds: creds, ttl: ttl}, nil
}

// run pushes in's decisions and says what it did; incomplete is the
// error of an input not read whole.
func (p *emitPush) run(ctx context.Context, env *Env, in emit.Input, incomplete error) error {
	env.phase(phaseRules)
	bans, plan, err := emit.CrowdSecBans(in)
	if err != nil {
		return emitError(err)
	}
	emitWarnPlan(env, plan)
	env.phase(phasePush)
	var scenarios []string
	for _, b := range bans {
		if s := crowdsec.Scenario(b.Crawler); !slices.Contains(scenarios, s) {
			scenarios = append(scenarios, s)
		}
	}
	pusher := &crowdsec.Pusher{Client: newCrowdSecClient(env, p.creds, scenarios), TTL: p.ttl, Version: Version, Now: env.Now}
	res, err := pusher.Push(ctx, bans)
	if err != nil {
		if ctx.Err() != nil {
			return errInterrupted
		}
		hint := "check that the Local API runs and takes this machine's login (cscli machines list); run again then: nothing is pushed twice"
		return &exitError{code: ExitIncomplete, output: true, err: withHint(
			fmt.Errorf("crowdsec: %d of %s in force, then: %w", len(res.Done), nouns.Count(len(bans), "decision", "decisions"), err), hint)}
	}
	if env.StderrTTY {
		fmt.Fprintf(env.Stderr, "lohibot-audit: crowdsec %s: %s\n", p.creds.URL, crowdSecSummary(res))
	}
	return incomplete
}

// crowdSecSummary says what a push did.
func crowdSecSummary(r crowdsec.Result) string {
	parts := []string{
		nouns.Count(r.Added, "decision", "decisions") + " added",
		fmt.Sprintf("%d extended", r.Extended),
		fmt.Sprintf("%d in force already", r.Kept),
	}
	if r.Removed > 0 {
		parts = append(parts, nouns.Count(r.Removed, "older decision", "older decisions")+" ended")
	}
	return strings.Join(parts, ", ")
}

// watchCrowdSecCredentials checks watch's CrowdSec flags and reads the
// credentials: nil without --crowdsec.
func watchCrowdSecCredentials(c *cobra.Command, o *watchOptions) (*crowdsec.Credentials, error) {
	if !o.CrowdSec {
		if c.Flags().Changed("crowdsec-credentials") {
			return nil, usageError("--crowdsec-credentials is for --crowdsec")
		}
		return nil, nil
	}
	if ttl, err := emit.ParseTTL(o.TTL); err != nil || ttl < time.Second || ttl > emit.MaxTTL {
		return nil, usageError("--ttl %q: give a duration from 1s to 365d, such as 7d, 36h or 1d12h", o.TTL)
	}
	creds, err := loadCrowdSecCredentials(o.CrowdSecCredentials)
	if err != nil {
		return nil, err
	}
	return &creds, nil
}

// newWatchCrowdSec is the queue watch pushes the spoofers of the crawlers
// named to, through the machine creds.
func newWatchCrowdSec(env *Env, creds crowdsec.Credentials, crawlers []string, ttl time.Duration, say func(string)) *crowdsec.Queue {
	scenarios := make([]string, len(crawlers))
	for i, n := range crawlers {
		scenarios[i] = crowdsec.Scenario(n)
	}
	return &crowdsec.Queue{
		// A listing of every decision takes long on a Local API that holds
		// many: a running watch looks each spoofer up.
		Pusher: &crowdsec.Pusher{Client: newCrowdSecClient(env, creds, scenarios), TTL: ttl, Version: Version, Now: env.Now, LookupEach: -1},
		Say:    say,
	}
}
