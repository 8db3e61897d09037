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
		Long: `emit writes rules for TARGET (nftables, cloudflare or modsecurity) from access
logs, read and verified as 'logs' does, or from --report, a JSON report an
earlier 'logs --format json' run wrote (so DNS is not asked twice).

Modes (--mode):
  block-spoofed  (default) block the addresses seen claiming to be ` + crawlerTitle + `
                 without being it. The Cloudflare and ModSecurity rules also
                 block the ` + crawlerTitle + ` User-Agent token (any case) from every
                 address but the crawler's, which stops impostors not seen yet.
  block-bot      block the crawler's own addresses (genuine ones seen, and the
                 IP list).
  allow-bot      let the crawler's addresses past other rules.

Targets:
  nftables     an nft -f file: table inet lohibot with IPv4 and IPv6 sets
               (flags interval,timeout, auto-merge), every element timing out
               after --ttl, and a chain on --nft-hook. Loading it replaces the
               table in one transaction, so it can be loaded again and again,
               and each load starts every timeout anew. --set-only writes only
               the sets (into --nft-table), for your own chains to refer to.
               In allow-bot mode an accept ends only this table's chain: use
               --set-only --nft-table 'inet filter' and refer to @crawler_v4
               and @crawler_v6 from the chain that drops.
  cloudflare   --cloudflare-output ruleset (default): the JSON body for PUT
               /zones/{zone_id}/rulesets/phases/http_request_firewall_custom/entrypoint;
               list: Lists API items for the block (or allow) set; expression:
               the bare expression. Addresses that do not fit in 4,096
               characters move to a list ($lohibot_spoofed, or
               --cloudflare-list-name). IPv6 addresses are blocked by their /64.
               The token rule uses contains, which every plan has and which
               also matches the token inside a longer word (NotGPTBotX) from
               addresses that are not the crawler's; --cloudflare-matches
               (Business and Enterprise plans) matches product tokens as the
               audit reads them.
  modsecurity  SecRule rules (phase 1, t:none, deny with 403) for ModSecurity 2
               (Apache) and libmodsecurity 3 (nginx); include the file after
               SecRuleEngine On (allow-bot: before your other rules).
  crowdsec     pushes each spoofer to a CrowdSec Local API as a decision (type
               ban, scope Ip, and for IPv6 also its /64 as scope Range; for
               --ttl; scenario lohibot-audit/spoofed-CRAWLER; the evidence in
               its alert), logged in as the machine of --crowdsec-credentials.
               A decision of ours in force is kept, or extended when less than
               nine tenths of --ttl is left; never pushed twice. When the Local
               API is down or refuses, it exits 3: run it again. --dry-run
               writes the POST /v1/alerts request instead (block-spoofed only).

Several crawlers (--crawler NAME|FILE, repeatable; or a --report of
'logs --crawler', whose crawlers it covers unless --crawler chooses among
them): block-spoofed blocks each crawler's tokens from any address but
that crawler's own, and no block set holds an address of any of them.
Cloudflare writes one rule per crawler, its sets moving to the lists
lohibot_NAME_spoofed (or _crawler) and lohibot_NAME_exempt when they do
not fit (--cloudflare-list-name sets the prefix; the list output is an
object from list name to items); ModSecurity gives crawler i's token rule
the ID --modsec-id-base+i, its address rules after all token rules.

Safety: no rule ever blocks loopback, private, link-local, multicast,
unspecified, carrier-grade NAT or reserved addresses, IPv6 addresses that
carry one (NAT64, 6to4), nor anything in --never-block; block-spoofed never
blocks a genuine address or one in the IP list; unverified addresses are
never blocked. Put your own networks, proxies
and CDN ranges in --never-block: behind a proxy the log shows the proxy's
address unless you use --trust-xff.

-o FILE writes atomically and leaves FILE untouched when only the time in
its header would change; --changed-exit N exits N when FILE did change.
The output is sorted and starts with a header saying what made it, from
which inputs, and when (--fail-on has no effect here).`,
		Example: `  lohibot-audit emit nftables /var/log/nginx/access.log -o /etc/nftables.d/lohibot.nft && nft -f /etc/nftables.d/lohibot.nft
  lohibot-audit logs --format json access.log > audit.json
  lohibot-audit emit cloudflare --report audit.json > ruleset.json
  lohibot-audit emit cloudflare --report audit.json --cloudflare-output list > items.json
  lohibot-audit emit modsecurity --report audit.json -o /etc/modsecurity/lohibot.conf --changed-exit 10
  lohibot-audit emit nftables --mode allow-bot --set-only --nft-table 'inet filter' --report audit.json
  lohibot-audit emit crowdsec --report audit.json --ttl 7d`,
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
