package cmd

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lohisoft/lohibot-audit/emit"
	"github.com/lohisoft/lohibot-audit/render"
	"github.com/lohisoft/lohibot-audit/watch"
	"github.com/lohisoft/lohibot-audit/watchstate"
)

// defaultStateDir is the state directory when neither --state-dir nor
// $STATE_DIRECTORY (systemd's StateDirectory=) names one. The tests of
// this package empty it: their watches keep no state unless they say
// where.
var defaultStateDir = watchstate.DefaultDir

// stateFlags are the flags of the state directory.
type stateFlags struct {
	StateDir string
	NoState  bool
}

func addStateDirFlag(f *pflag.FlagSet, o *stateFlags) {
	f.StringVar(&o.StateDir, "state-dir", "", "watch's state directory `DIR`: its verdicts, blocks, unblocked addresses and control socket (default $STATE_DIRECTORY, else "+watchstate.DefaultDir+")")
}

// stateChoice is how the flags o and the environment choose the state
// directory.
func stateChoice(env *Env, o *stateFlags) watchstate.Choice {
	return watchstate.Choice{Flag: o.StateDir, NoState: o.NoState, Env: env.Getenv("STATE_DIRECTORY"), Default: defaultStateDir}
}

// newWatchStatusCmd is `watch status`.
func newWatchStatusCmd(env *Env) *cobra.Command {
	var o stateFlags
	var format string
	c := &cobra.Command{
		Use:   "status",
		Short: "Show what the running watch (or the last one) follows, judged and blocked",
		Long: `watch status asks the watch that runs with the state directory through its
control socket (0600, in a 0700 directory: run it as the user watch runs as,
root for the packaged service) and shows what it follows (each file's
position, lines, malformed lines and when its last line came), each crawler's
claims and verdicts, the addresses blocked per target (nftables, crowdsec,
exec) and those held out of blocking by unblock, how the resolvers answer
(queries, failures, latency), and what waits. When no watch runs, it shows
what the last one wrote into its state when it stopped.`,
		Example: `  lohibot-audit watch status
  lohibot-audit watch status --state-dir /var/lib/lohibot-audit --format json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runWatchStatus(c.Context(), env, &o, format)
		},
	}
	addStateDirFlag(c.Flags(), &o)
	c.Flags().StringVar(&format, "format", "", "output `FORMAT`: text or json (default text on a terminal, else json)")
	return c
}

func runWatchStatus(ctx context.Context, env *Env, o *stateFlags, format string) error {
	format, err := render.WatchStatusFormat(format, env.StdoutTTY)
	if err != nil {
		return err
	}
	dir, err := stateChoice(env, o).Needed()
	if err != nil {
		return err
	}
	s, written, err := watchstate.StatusOf(ctx, dir, env.Now())
	if err != nil {
		return err
	}
	return render.WatchStatusAs(env.Stdout, format, s, written, env.Now())
}

// unblockOptions are the flags of unblock.
type unblockOptions struct {
	stateFlags
	TTL string
}

// newUnblockCmd is `unblock`.
func newUnblockCmd(env *Env) *cobra.Command {
	o := &unblockOptions{}
	c := &cobra.Command{
		Use:   "unblock ADDRESS...",
		Short: "Take addresses out of watch's blocks and hold them out of blocking",
		Long: `unblock takes each address out of what watch blocked: the nftables sets
(spoofed_live_v4/v6, and emit's spoofed_v4/v6 where they hold the address
alone; a wider range emit's file put there stays, and is named), the
CrowdSec decisions watch --crowdsec pushed for it (its /64 too when that was
pushed), and holds it out of blocking for --ttl: an operator's word beats a
verdict, and watch blocks it again only once the hold has ended and it is
judged spoofed anew. An --exec command cannot be undone: unblock says when one
ran for the address. Each address is one unblock event, in the running
watch's events and on stdout (a JSON line, or a line for people on a
terminal).

With a running watch (its state directory), the watch does it; without one,
unblock does it with what the state says (the nftables table, the CrowdSec
credentials) and writes the hold into the state for the next watch; with no
state there, it says so and takes the addresses out of the sets of the
default table (inet lohibot) in its own network namespace.`,
		Example: `  lohibot-audit unblock 203.0.113.7
  lohibot-audit unblock --ttl 30d 203.0.113.7 2001:db8::7`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runUnblock(c.Context(), env, o, args)
		},
	}
	addStateDirFlag(c.Flags(), &o.stateFlags)
	c.Flags().StringVar(&o.TTL, "ttl", "7d", "how long the addresses are held out of blocking, a `DURATION` such as 7d, 36h or 1d12h (at most 365d)")
	return c
}

func runUnblock(ctx context.Context, env *Env, o *unblockOptions, args []string) error {
	addrs, err := watchstate.AddrArgs(args)
	if err != nil {
		return err
	}
	ttl, err := emit.TTLFlag(o.TTL)
	if err != nil {
		return err
	}
	dir, err := stateChoice(env, &o.stateFlags).Needed()
	if err != nil {
		return err
	}
	now := env.Now()
	out, err := watch.Unblock(ctx, dir, addrs, ttl, now, crowdSecAgent(env), watchSay(env))
	if err != nil {
		return err
	}
	return watch.WriteUnblocked(env.Stdout, env.StdoutTTY, out, now)
}
