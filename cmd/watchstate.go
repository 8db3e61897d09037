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
		Args:  cobra.NoArgs,
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
		Args:  cobra.ArbitraryArgs,
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
