package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/emit"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/interrupt"
	"github.com/spf13/cobra"
)

// emitOptions holds the flags of `emit`.
type emitOptions struct {
	auditOptions
	Mode             string
	Output           string
	Report           string
	TTL              string
	NeverBlock       []string
	CloudflareOutput string
	CloudflareList   string
	CloudflareMatch  bool
	NFTHook          string
	NFTPriority      string
	NFTTable         string
	SetOnly          bool
	ModSecIDBase     int
	ChangedExit      int
	crowdSecFlags
}

func newEmitCmd(env *Env) *cobra.Command {
	o := &emitOptions{}
	c := &cobra.Command{
		Use:   "emit TARGET [FILE...]",
		Short: "Write firewall and WAF rules (nftables, Cloudflare, ModSecurity), or push CrowdSec decisions",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fail.Hinted(
					errors.New("emit needs a TARGET: nftables, cloudflare, modsecurity or crowdsec"),
					"lohibot-audit emit nftables /var/log/nginx/access.log")
			}
			return nil
		},
		ValidArgs: emit.TargetNames(),
		RunE: func(c *cobra.Command, args []string) error {
			o.given = func(name string) bool { return flagGiven(c.Flags(), name) }
			return runEmit(c, env, o, args[0], args[1:])
		},
	}
	f := c.Flags()
	f.StringVar(&o.Mode, "mode", string(emit.BlockSpoofed), "what the rules do: block-spoofed, block-bot or allow-bot")
	f.StringVarP(&o.Output, "output", "o", "", "write the rules to `FILE` (atomically; untouched when unchanged) instead of stdout")
	f.StringVar(&o.Report, "report", "", "read addresses and verdicts from a JSON report of 'logs --format json' (`FILE`, or - for stdin) instead of logs")
	f.StringVar(&o.TTL, "ttl", "7d", "nftables: how long set elements live unless the file is loaded again; crowdsec: how long decisions last (7d, 36h, 1d12h; at most 365d)")
	f.StringArrayVar(&o.NeverBlock, "never-block", nil, "`CIDR` or address that no rule may block (repeatable, or comma separated)")
	f.StringVar(&o.CloudflareOutput, "cloudflare-output", string(emit.CloudflareRuleset), "cloudflare: ruleset (custom rules JSON), list (Lists API items) or expression")
	f.StringVar(&o.CloudflareList, "cloudflare-list-name", "", "cloudflare: match the address set with $`NAME` (an IP list you upload with --cloudflare-output list) instead of inline")
	f.BoolVar(&o.CloudflareMatch, "cloudflare-matches", false, "cloudflare: match User-Agent tokens as product tokens with the matches operator (a regular expression; Business and Enterprise plans) instead of contains")
	f.StringVar(&o.NFTHook, "nft-hook", emit.DefaultNFTHook, "nftables: the chain's hook: input, prerouting or forward")
	f.StringVar(&o.NFTPriority, "nft-priority", emit.DefaultNFTPriority, "nftables: the chain's priority: a number, or raw, mangle, filter or security with an optional + N or - N")
	f.StringVar(&o.NFTTable, "nft-table", emit.DefaultNFTTable, "nftables: the table, as 'FAMILY NAME' (with --set-only, the table your chains live in)")
	f.BoolVar(&o.SetOnly, "set-only", false, "nftables: write only the sets (created when missing, elements replaced), no chain")
	f.IntVar(&o.ModSecIDBase, "modsec-id-base", emit.DefaultModSecIDBase, "modsecurity: the first rule ID; the rules use consecutive IDs from it (1-99999 is ModSecurity's range for local rules)")
	f.IntVar(&o.ChangedExit, "changed-exit", 0, "with -o: exit with this code (1-125) when the file changed, 0 when it did not")
	addCrowdSecFlags(f, &o.crowdSecFlags)
	f.BoolVar(&o.DryRun, "dry-run", false, "crowdsec: write the POST /v1/alerts request (to stdout or -o FILE) instead of pushing it")
	addLogFlags(f, &o.auditOptions)
	addCrawlerFlag(f, &o.Crawlers)
	addIdentityFlags(f, &o.auditOptions)
	addConfigFlag(f, &o.auditOptions)
	_ = f.MarkHidden("fail-on")
	return c
}

// runEmit gathers the input, writes the rules and reports what it did.
func runEmit(c *cobra.Command, env *Env, o *emitOptions, target string, files []string) error {
	ctx := c.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	t, err := emit.TargetArg(target)
	if err != nil {
		return err
	}
	if err := t.CheckFlags(c.Flags().Changed); err != nil {
		return err
	}
	mode, err := emit.ModeFlag(o.Mode)
	if err != nil {
		return err
	}
	never, err := emit.NeverBlockFlag(o.NeverBlock)
	if err != nil {
		return err
	}
	out := emit.Output{File: o.Output, ChangedExit: o.ChangedExit}
	if err := out.Check(); err != nil {
		return err
	}
	opts, err := t.CheckOptions(emit.Settings{TTL: o.TTL, NFTHook: o.NFTHook, NFTPriority: o.NFTPriority, NFTTable: o.NFTTable,
		SetOnly: o.SetOnly, CloudflareOutput: o.CloudflareOutput, CloudflareList: o.CloudflareList,
		CloudflareMatches: o.CloudflareMatch, ModSecIDBase: o.ModSecIDBase})
	if err != nil {
		return err
	}
	push, err := emitCrowdSecSetup(o, t, mode, opts.CrowdSec.TTL)
	if err != nil {
		return err
	}

	in := t.Input(mode, never, env.Now(), Version)
	var incomplete error // an input could not be read whole
	if o.Report != "" {
		if len(files) > 0 {
			return fail.Usagef("give log files or --report, not both")
		}
		if err := emitFromReport(ctx, env, o, &in); err != nil {
			return err
		}
	} else {
		rep, id, err := runAudit(ctx, env, &o.auditOptions, files, nil)
		if rep == nil {
			return err
		}
		incomplete = err
		in.AddAudit(rep, id, len(o.Crawlers) > 0, files)
		warnAll(env, rep.Warnings)
	}

	// An IP list fetch cut short by Ctrl-C leaves a fallback list in
	// force: write no rules from it.
	if ctx.Err() != nil {
		return errInterrupted
	}
	if push != nil {
		return push.run(ctx, env, in, incomplete)
	}
	rules, err := t.Rules(ctx, in, opts, func() { env.phase(phaseRules) })
	if err != nil {
		return err
	}
	emitWarnPlan(env, rules.Plan)
	env.phase(phaseWrite)
	changed, err := out.Write(ctx, env.Stdout, rules.Text)
	if err != nil {
		return err
	}
	if said := out.Said(changed, target, rules); said != "" && env.StderrTTY {
		fmt.Fprintf(env.Stderr, "lohibot-audit: %s\n", said)
	}
	if incomplete != nil {
		return incomplete
	}
	return out.Changed(changed)
}

// emitFromReport fills in from a --report file and the IP list in force
// (emit.Input.FromReport), saying its warnings.
func emitFromReport(ctx context.Context, env *Env, o *emitOptions, in *emit.Input) error {
	rep, err := emitReadReport(ctx, env, o.Report)
	if err != nil {
		return err
	}
	env.phase(phaseIPList)
	warnings, err := in.FromReport(ctx, rep, o.Report, o.Crawlers, o.identity(env))
	for _, w := range warnings {
		warnf(env, "%s", w)
	}
	return err
}

// emitReadReport reads a JSON report; "-" is stdin (emit.ReadReport).
func emitReadReport(ctx context.Context, env *Env, name string) (*audit.Report, error) {
	rep, err := emit.ReadReport(ctx, env.Stdin, name)
	return rep, interrupt.Cause(ctx, err)
}

// emitWarnPlan says what the safety rules kept out of the rules, and the
// emitter's notes (emit.Plan.Remarks). Addresses left out because of
// --never-block are what the user asked for: they are said only on a
// terminal.
func emitWarnPlan(env *Env, p *emit.Plan) {
	for _, r := range p.Remarks() {
		switch {
		case !r.Asked:
			warnf(env, "%s", r.Text)
		case env.StderrTTY:
			fmt.Fprintf(env.Stderr, "lohibot-audit: %s\n", r.Text)
		}
	}
}
