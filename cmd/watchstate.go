package cmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

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
	if o.StateDir != "" {
		return o.StateDir, true
	}
	if d := env.Getenv("STATE_DIRECTORY"); d != "" {
		return watchstate.SystemdDir(d), true
	}
	return defaultStateDir, false
}

// openWatchState takes the state directory for a watch
// (watchstate.Open): nil without one (--no-state, or the default
// directory out of reach, which is said). A directory another watch
// holds, or one asked for that cannot be used, is a configuration error.
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
	h, err := watchstate.Open(dir, env.Now(), say)
	var le *watchstate.ListenError
	switch {
	case err == nil:
		return h, nil
	case errors.Is(err, watchstate.ErrLocked):
		return nil, fail.Hinted(fmt.Errorf("state directory %s: %w", sanitize(dir), err),
			"give each watch its own --state-dir (or --no-state); 'lohibot-audit watch status' asks the one that runs")
	case errors.As(err, &le):
		return nil, fail.Usagef("state directory %s: %v", sanitize(dir), err)
	case !asked:
		say(fmt.Sprintf("state: cannot use %s (%v): verdicts and blocks are not kept across restarts; give --state-dir DIR, or --no-state", dir, fail.PathCause(err)))
		return nil, nil
	}
	return nil, fail.Usagef("--state-dir %s: %v", sanitize(dir), fail.PathCause(err))
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
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
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
	var out []watchstate.Unblocked
	req := watchstate.Request{Op: watchstate.OpUnblock, TTL: int64(ttl / time.Second)}
	for _, a := range addrs {
		req.Addrs = append(req.Addrs, a.String())
	}
	actx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	resp, err := watchstate.Ask(actx, dir, req)
	cancel()
	switch {
	case err == nil:
		out = resp.Unblocked
	case errors.Is(err, watchstate.ErrNotRunning):
		say := func(msg string) { fmt.Fprintf(env.Stderr, "lohibot-audit: %s\n", sanitize(msg)) }
		u, closeU, err := watch.StoppedUnblocker(dir, env.Now(), crowdSecAgent(env), say)
		var ce *watch.CredentialsError
		switch {
		case errors.As(err, &ce):
			return fail.New(fail.Incomplete, err,
				"the last watch pushed decisions with these credentials: make them readable, or end its decisions with cscli decisions delete")
		case err != nil:
			return fail.New(fail.Incomplete, err, "")
		}
		defer closeU()
		out, err = watch.UnblockStopped(ctx, dir, addrs, ttl, now, u, say)
		if errors.Is(err, watchstate.ErrLocked) {
			return fail.New(fail.Incomplete, fmt.Errorf("state directory %s: %w, but it does not answer on its socket", sanitize(dir), err),
				"try again in a moment; if it stays so, restart that watch")
		}
		if err != nil {
			if os.IsPermission(err) || errors.Is(err, fs.ErrPermission) {
				return fail.New(fail.Incomplete, fmt.Errorf("state directory %s: %v", sanitize(dir), fail.PathCause(err)),
					"run as the user watch runs as (root for the packaged service)")
			}
			return fail.New(fail.Incomplete, err, "")
		}
	default:
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
