package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/lohisoft/lohibot-audit/crowdsec"
	"github.com/lohisoft/lohibot-audit/emit"
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

// crowdSecAgent is this program as it pushes to a Local API.
func crowdSecAgent(env *Env) crowdsec.Agent { return crowdsec.Agent{Version: Version, Now: env.Now} }

// emitPush pushes the decisions of an emit run to a Local API.
type emitPush struct {
	creds crowdsec.Credentials
	ttl   time.Duration
}

// emitCrowdSecSetup checks the crowdsec target's flags before any input is
// read, and returns how to push decisions lasting ttl (--ttl, as
// CheckOptions read it), or nil when the run writes its output (another
// target, or --dry-run).
func emitCrowdSecSetup(o *emitOptions, t emit.Target, mode emit.Mode, ttl time.Duration) (*emitPush, error) {
	if err := t.CheckMode(mode); err != nil {
		return nil, err
	}
	pushes, err := t.Pushes(o.DryRun, o.Output)
	if err != nil || !pushes {
		return nil, err
	}
	creds, err := crowdsec.LoadCredentials(o.CrowdSecCredentials)
	if err != nil {
		return nil, err
	}
	return &emitPush{creds: creds, ttl: ttl}, nil
}

// run pushes in's decisions and says what it did; incomplete is the
// error of an input not read whole.
func (p *emitPush) run(ctx context.Context, env *Env, in emit.Input, incomplete error) error {
	env.phase(phaseRules)
	bans, plan, err := emit.CrowdSecBans(in)
	if err != nil {
		return emit.Explain(err)
	}
	emitWarnPlan(env, plan)
	env.phase(phasePush)
	res, err := crowdSecAgent(env).Push(ctx, p.creds, p.ttl, bans)
	if err != nil {
		return err
	}
	if env.StderrTTY {
		fmt.Fprintf(env.Stderr, "lohibot-audit: crowdsec %s: %s\n", p.creds.URL, res.Summary())
	}
	return incomplete
}
