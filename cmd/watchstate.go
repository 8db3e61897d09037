package cmd

import (
	"context"
	"errors"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lohisoft/lohibot-audit/emit"
	"github.com/lohisoft/lohibot-audit/internal/fail"
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

// stateDirOf is the state directory of o and whether it was asked for
// (--state-dir, $STATE_DIRECTORY) rather than the built-in default; ""
// when there is none.
func stateDirOf(env *Env, o *stateFlags) (string, bool) {
	return watchstate.ChooseDir(o.StateDir, env.Getenv("STATE_DIRECTORY"), defaultStateDir)
}

// openWatchState takes the state directory for a watch
// (watchstate.Take): nil without one (--no-state, or the default
// directory out of reach, which is said).
func openWatchState(env *Env, o *watchOptions, say func(string)) (*watchstate.Held, error) {
	if o.NoState {
		if o.StateDir != "" {
			return nil, fail.Usagef("--state-dir and --no-state: give one")
		}
		return nil, nil
	}
	dir, asked := stateDirOf(env, &o.stateFlags)
	if dir == "" {
		return nil, nil
	}
	return watchstate.Take(dir, asked, env.Now(), say)
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

// statusFormat checks --format: text or json, by default text on a
// terminal.
func statusFormat(env *Env, format string) (string, error) {
	switch format {
	case "":
		if env.StdoutTTY {
			return "text", nil
		}
		return "json", nil
	case "text", "json":
		return format, nil
	}
	return "", fail.Usagef("--format %q: give text or json", sanitize(format))
}

func runWatchStatus(ctx context.Context, env *Env, o *stateFlags, format string) error {
	format, err := statusFormat(env, format)
	if err != nil {
		return err
	}
	dir, _ := stateDirOf(env, o)
	if dir == "" {
		return fail.Usagef("no state directory: give --state-dir DIR")
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
	if len(args) == 0 {
		return fail.Usagef("give the addresses to unblock, such as 'lohibot-audit unblock 203.0.113.7'")
	}
	addrs, err := watchstate.ParseAddrs(args)
	if err != nil {
		return fail.Usagef("%s", sanitize(err.Error()))
	}
	ttl, err := emit.TTLFlag(o.TTL)
	if err != nil {
		return err
	}
	dir, _ := stateDirOf(env, &o.stateFlags)
	if dir == "" {
		return fail.Usagef("no state directory: give --state-dir DIR")
	}
	now := env.Now()
	out, err := watch.Unblock(ctx, dir, addrs, ttl, now, crowdSecAgent(env), watchSay(env))
	if err != nil {
		return err
	}
	failed, lost := watch.WriteUnblocked(env.Stdout, env.StdoutTTY, out, now)
	if lost > 0 {
		return fail.New(fail.Unwritten, errors.New("cannot write to standard output"), "")
	}
	if failed {
		return fail.New(fail.Incomplete, errors.New("not everything could be undone: see each address's errors"), "")
	}
	return nil
}
