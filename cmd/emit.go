package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/crowdsec"
	"github.com/lohisoft/lohibot-audit/emit"
	"github.com/lohisoft/lohibot-audit/internal/atomicfile"
	"github.com/lohisoft/lohibot-audit/internal/ipfmt"
	"github.com/lohisoft/lohibot-audit/internal/nouns"
	"github.com/lohisoft/lohibot-audit/verify"
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

// errRulesChanged is returned, with the --changed-exit code, when -o FILE
// got new rules. It is not a failure: Run should exit with the code
// without printing an error.
var errRulesChanged = errors.New("the rules changed")

// emitTargetFlags are the flags that apply to one target only.
var emitTargetFlags = map[string][]string{
	"nftables":    {"ttl", "nft-hook", "nft-priority", "nft-table", "set-only"},
	"cloudflare":  {"cloudflare-output", "cloudflare-list-name", "cloudflare-matches"},
	"modsecurity": {"modsec-id-base"},
	"crowdsec":    {"ttl", "crowdsec-credentials", "dry-run"},
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
				return &exitError{code: ExitUsage, err: withHint(
					errors.New("emit needs a TARGET: nftables, cloudflare, modsecurity or crowdsec"),
					"lohibot-audit emit nftables /var/log/nginx/access.log")}
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
	t, ok := emit.Lookup(target)
	if !ok {
		return &exitError{code: ExitUsage, err: withHint(
			fmt.Errorf("unknown emit target %q", target),
			"use nftables, cloudflare, modsecurity or crowdsec")}
	}
	for other, names := range emitTargetFlags {
		if other == target {
			continue
		}
		for _, n := range names {
			if c.Flags().Changed(n) && !slices.Contains(emitTargetFlags[target], n) {
				return usageError("--%s is for the %s target, not %s", n, other, target)
			}
		}
	}
	mode, err := emit.ParseMode(o.Mode)
	if err != nil {
		return usageError("--mode %q: use block-spoofed, block-bot or allow-bot", o.Mode)
	}
	never, err := emitParseNeverBlock(o.NeverBlock)
	if err != nil {
		return err
	}
	if o.ChangedExit != 0 && (o.Output == "" || o.Output == "-") {
		return usageError("--changed-exit needs -o FILE: it says whether that file changed")
	}
	if o.ChangedExit < 0 || o.ChangedExit > 125 {
		return usageError("--changed-exit %d: give a code from 1 to 125 (0 to exit 0 either way)", o.ChangedExit)
	}
	opts, err := emitTargetOptions(t, o)
	if err != nil {
		return err
	}
	push, err := emitCrowdSecSetup(o, t.Name, mode)
	if err != nil {
		return err
	}

	in := emit.Input{
		Mode:       mode,
		NeverBlock: never,
		Generated:  env.Now().UTC().Truncate(time.Second),
		Version:    Version,
	}
	if t.Name == "crowdsec" {
		in.Evidence = map[netip.Addr][]crowdsec.Evidence{}
	}
	var incomplete error // an input could not be read whole
	if o.Report != "" {
		if len(files) > 0 {
			return usageError("give log files or --report, not both")
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
	type rules struct {
		plan *emit.Plan
		text []byte
		err  error
	}
	r, err := untilDone(ctx, func() rules {
		env.phase(phaseRules)
		var buf bytes.Buffer
		plan, err := t.Write(&buf, in, opts)
		return rules{plan, buf.Bytes(), err}
	})
	if err != nil {
		return err
	}
	if r.err != nil {
		return emitError(r.err)
	}
	plan := r.plan
	emitWarnPlan(env, plan)
	env.phase(phaseWrite)

	if o.Output == "" || o.Output == "-" {
		if _, err := env.Stdout.Write(r.text); err != nil {
			return writeFailed("the rules", err)
		}
		if incomplete != nil {
			return incomplete
		}
		return nil
	}
	// Should the run have to end at once, no temporary file stays.
	defer onForcedExit(func() { atomicfile.RemoveTemp(o.Output) })()
	changed, err := atomicfile.Write(ctx, o.Output, r.text, 0o644, emit.SameIgnoringGenerated)
	// Cancelled before the rename, the old file stays; after it, the new
	// one is whole and the run is done.
	if err != nil && ctx.Err() != nil {
		return errInterrupted
	}
	if err != nil {
		return &exitError{code: ExitIncomplete, output: true, err: withHint(
			fmt.Errorf("cannot write the rules to %s: %w", o.Output, unwrapPathError(err)),
			"check that the directory exists, is writable and has room; the old file, if any, is as it was")}
	}
	if env.StderrTTY {
		state := "unchanged"
		if changed {
			state = "written"
		}
		fmt.Fprintf(env.Stderr, "lohibot-audit: %s %s: %s %s rules, %s\n", o.Output, state, target, mode, emitCount(plan))
	}
	if incomplete != nil {
		return incomplete
	}
	if changed && o.ChangedExit != 0 {
		return &exitError{code: o.ChangedExit, err: fmt.Errorf("%w: %s", errRulesChanged, o.Output)}
	}
	return nil
}

// emitTargetOptions checks the flags of target t and returns its options,
// so that a bad flag is a usage error before any log is read.
func emitTargetOptions(t emit.Target, o *emitOptions) (emit.Options, error) {
	opts, err := t.Options(emit.Settings{TTL: o.TTL, NFTHook: o.NFTHook, NFTPriority: o.NFTPriority, NFTTable: o.NFTTable,
		SetOnly: o.SetOnly, CloudflareOutput: o.CloudflareOutput, CloudflareList: o.CloudflareList,
		CloudflareMatches: o.CloudflareMatch, ModSecIDBase: o.ModSecIDBase})
	if err != nil {
		return opts, usageError("%s", emitOptionMessage(err))
	}
	return opts, nil
}

// emitOptionMessage words an option error for the command line: the
// flag named as given, without the package's sentinel.
func emitOptionMessage(err error) string {
	var bad *emit.SettingError
	if errors.As(err, &bad) {
		return "--" + bad.Error()
	}
	return strings.TrimPrefix(err.Error(), emit.ErrBadOption.Error()+": ")
}

// emitError turns an emitter's error into the program's voice, with what
// to do next.
func emitError(err error) error {
	switch {
	case errors.Is(err, emit.ErrNoTokens):
		return &exitError{code: ExitUsage, err: withHint(err, "give the crawler's profile file with --crawler FILE, or use the nftables target, which blocks only the addresses seen spoofing")}
	case errors.Is(err, emit.ErrNoCrawlerAddresses):
		return &exitError{code: ExitUsage, err: withHint(err, "give the crawler's IP list with --ip-list, or use the nftables target, which blocks only the addresses seen spoofing")}
	case errors.Is(err, emit.ErrListTooLong):
		return &exitError{code: ExitUsage, err: withHint(err, "block fewer addresses (--since 7d), or use the nftables or modsecurity target")}
	case errors.Is(err, emit.ErrExpressionTooLong):
		return &exitError{code: ExitUsage, err: withHint(err, "the crawler's addresses alone do not fit in a Cloudflare expression; check the IP list")}
	case errors.Is(err, emit.ErrBadOption):
		return usageError("%s", emitOptionMessage(err))
	}
	return fmt.Errorf("cannot write the rules: %w", err)
}

// emitParseNeverBlock parses --never-block values (emit.ParseNeverBlock).
func emitParseNeverBlock(values []string) ([]netip.Prefix, error) {
	never, err := emit.ParseNeverBlock(values)
	var bad *emit.BadPrefixError
	if errors.As(err, &bad) {
		return nil, usageError("--never-block %q is neither an address nor a CIDR such as 192.0.2.0/24", bad.Value)
	}
	return never, err
}

// emitFromReport fills in from a --report file and the IP list in force.
func emitFromReport(ctx context.Context, env *Env, o *emitOptions, in *emit.Input) error {
	rep, err := emitReadReport(ctx, env, o.Report)
	if err != nil {
		return err
	}
	name := o.Report
	if name == "-" {
		name = "stdin"
	}
	in.Sources = []string{"report " + name}
	env.phase(phaseIPList)
	dir, _ := identityCacheDir(env, &o.auditOptions)
	proxies, pw, err := identityProxies(&o.auditOptions, dir)
	if err != nil {
		return err
	}
	for _, w := range pw {
		warnf(env, "%s", w)
	}
	in.Proxies = proxies
	if err := emitReportLists(ctx, env, o, rep, name, in); err != nil {
		return err
	}
	// The report's warnings are an earlier run's: say where they come
	// from, so that none reads as news of this run.
	for _, w := range rep.Warnings {
		warnf(env, "report %s: %s", name, w)
	}
	for _, w := range in.AddReport(rep) {
		warnf(env, "report %s: %s", name, w)
	}
	return nil
}

// emitReportLists fills in.Crawlers for a report: for one that names its
// crawlers (or with --crawler) the crawlers chosen (emitReportCrawlers),
// else the default crawler, each with its IP lists loaded as logs loads
// them (fetched, cached or built in; --offline fetches nothing).
func emitReportLists(ctx context.Context, env *Env, o *emitOptions, rep *audit.Report, name string, in *emit.Input) error {
	named := len(o.Crawlers) > 0 || len(rep.Summary.Crawlers) > 0
	profiles, err := resolveCrawlers(nil)
	if err != nil {
		return err
	}
	names, warnings := crawler.Names(profiles), []string(nil)
	if named {
		if names, profiles, warnings, err = emitReportCrawlers(rep, name, o.Crawlers); err != nil {
			return err
		}
	}
	var known []*crawler.Profile
	for _, p := range profiles {
		if p != nil {
			known = append(known, p)
		}
	}
	override, err := identityListOverride(&o.auditOptions, known)
	if err != nil {
		return err
	}
	dir, warn := identityCacheDir(env, &o.auditOptions)
	if warn != "" {
		warnf(env, "%s", warn)
	}
	mode := ipListAuto
	if o.Offline {
		mode = ipListNoFetch
	}
	loader := identityLoader(env, &o.auditOptions, dir, mode)
	lists := make([]*verify.IPList, len(profiles))
	for i, p := range profiles {
		if p == nil {
			continue
		}
		ll, err := loader.Load(ctx, p, override)
		if err != nil {
			return listFileError(err)
		}
		lists[i] = ll.List
		for _, w := range ll.Warnings {
			warnf(env, "%s", w)
		}
	}
	for _, w := range warnings {
		warnf(env, "%s", w)
	}
	in.Crawlers = emit.CrawlersOf(names, profiles, lists)
	in.Named = named
	if named {
		in.IPListSource = audit.ListSources(names, lists)
	} else {
		in.IPListSource = lists[0].Source
	}
	return nil
}

// emitReadReport reads and parses a JSON report; "-" is stdin.
func emitReadReport(ctx context.Context, env *Env, name string) (*audit.Report, error) {
	var r io.Reader = env.Stdin
	if name != "-" {
		fh, err := openInput(ctx, name)
		if errors.Is(err, errInterrupted) {
			return nil, err
		}
		if err != nil {
			return nil, usageError("cannot read report %s: %v", name, unwrapPathError(err))
		}
		defer fh.Close()
		r = fh
	}
	data, err := readAllContext(ctx, r, emit.MaxReportSize+1)
	if errors.Is(err, errInterrupted) {
		return nil, err
	}
	if err != nil {
		return nil, usageError("cannot read report %s: %v", name, err)
	}
	if len(data) > emit.MaxReportSize {
		return nil, usageError("report %s is larger than %d MiB: is it a report?", name, emit.MaxReportSize>>20)
	}
	rep, err := emit.DecodeReport(data)
	switch {
	case errors.Is(err, emit.ErrNotReport):
		err = fmt.Errorf("%s is %w", name, err)
	case err != nil:
		err = fmt.Errorf("report %s is %s", name, firstLine(err.Error()))
	}
	if err != nil {
		return nil, &exitError{code: ExitUsage, err: withHint(err, "give the output of 'lohibot-audit logs --format json'")}
	}
	return rep, nil
}

// emitWarnPlan says what the safety rules kept out of the rules, and the
// emitter's notes. Addresses left out because of --never-block are what
// the user asked for: they are said only on a terminal.
func emitWarnPlan(env *Env, p *emit.Plan) {
	reasons, byReason := p.SkippedBy()
	var special []string
	for _, r := range reasons {
		var shown []string
		for _, pr := range byReason[r] {
			shown = append(shown, ipfmt.Prefix(pr))
		}
		list := emitShortList(shown)
		switch {
		case r == emit.SkipNeverBlock:
			if env.StderrTTY {
				fmt.Fprintf(env.Stderr, "lohibot-audit: not blocked, as --never-block asks: %s\n", list)
			}
		case r == emit.SkipGenuine || r == emit.SkipListed:
			warnf(env, "not blocked, though reported as spoofing: %s (%s: the report contradicts itself or the IP list changed)", list, r)
		case r == emit.SkipTooWide:
			warnf(env, "left out, wider than the target accepts: %s", list)
		case r == emit.SkipProxy:
			warnf(env, "not blocked, though reported as spoofing: %s (proxy: a CDN's edge or a trusted proxy forwards every visitor's requests, so the report judged the proxy; see --trusted-proxy)", list)
		default:
			special = append(special, fmt.Sprintf("%s (%s)", list, r))
		}
	}
	if len(special) > 0 {
		warnf(env, "left out, as no rule ever matches such addresses: %s; if the server is behind a proxy, its log shows the proxy's address (see --trusted-proxy)", strings.Join(special, ", "))
	}
	for _, n := range p.Notes {
		warnf(env, "%s", n)
	}
}

// emitShortList joins at most five items and counts the rest.
func emitShortList(items []string) string {
	if len(items) <= 5 {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:5], ", "), len(items)-5)
}

// emitCount says how many addresses the rules hold.
func emitCount(p *emit.Plan) string {
	switch p.Mode {
	case emit.AllowBot:
		return nouns.Count(len(p.Allow), "address", "addresses") + " allowed"
	case emit.BlockSpoofed:
		return fmt.Sprintf("%s blocked, %d spared from the token rule", nouns.Count(len(p.Block), "address", "addresses"), len(p.Exempt))
	}
	return nouns.Count(len(p.Block), "address", "addresses") + " blocked"
}
