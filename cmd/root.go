// Package cmd is the lohibot-audit command line: flags, files, terminals,
// messages and exit codes. The work is the libraries', in the order a log
// goes through them: parse reads it, crawler says what each crawler calls
// itself and promises, verify says who is genuine, conduct checks what the
// genuine crawler did, audit runs all of it over the inputs, and render,
// emit and watch make the report, the rules and the live blocks. Each
// command maps its flags to their options, opens the files, and maps their
// errors to one line and an exit code (exitCode).
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/buildinfo"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/interrupt"
	"github.com/lohisoft/lohibot-audit/internal/manual"
	"github.com/lohisoft/lohibot-audit/internal/stickyio"
	"github.com/lohisoft/lohibot-audit/internal/tty"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/spf13/cobra"
)

// Version is the program version. A release sets it at build time with
// -ldflags "-X github.com/lohisoft/lohibot-audit/cmd.Version=1.2.3"; left
// empty, it is filled at start from the build information the go command
// records (the module version of `go install …@v1.2.3`), else "dev".
var Version string

func init() {
	if Version == "" {
		Version = buildinfo.Version(debug.ReadBuildInfo())
	}
}

// Env is what a command may touch outside itself. Tests build one with
// in-memory streams; Main builds it from the process.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// StdoutTTY and StderrTTY say whether the streams are terminals: tables
	// and progress lines are for terminals only.
	StdoutTTY, StderrTTY bool
	Getenv               func(string) string
	Now                  func() time.Time
	// HTTPClient, when set, replaces the client used for HTTPS fetches
	// (robots.txt and the IP list); tests point it at an httptest server.
	HTTPClient *http.Client

	// onPhase, when set, is called as a run enters each phase (the phase*
	// names): tests use it to interrupt a run at a known point.
	onPhase func(phase string)
	// cdnURL, when set, rewrites the URL of a CDN edge list before
	// `ips update` fetches it: tests serve the lists themselves.
	cdnURL func(string) string
	// repeated are warnings already said on stderr within their period
	// (verify.Lists.Repeated): reports carry them, warnf leaves them out.
	// Set while the run is set up, read after.
	repeated map[string]bool
}

// The phases of a run, as Env.onPhase is told them.
const (
	phaseRobots  = "robots"                   // fetching robots.txt
	phaseIPList  = "ip-list"                  // loading (fetching) the IP list
	phaseRead    = string(audit.PhaseRead)    // reading the logs
	phaseDNS     = string(audit.PhaseDNS)     // verifying addresses
	phaseConduct = string(audit.PhaseConduct) // conduct checks and building the report
	phaseRules   = "rules"                    // building the rules (emit)
	phaseWrite   = "write"                    // writing the report or the rules
	phasePush    = "push"                     // pushing decisions (emit crowdsec)
)

// phase tells env.onPhase that the run enters phase p.
func (e *Env) phase(p string) {
	if e.onPhase != nil {
		e.onPhase(p)
	}
}

// errFindings is returned when a command finished and its findings call for
// exit 1 (the command has already said why).
var errFindings = fail.New(fail.Findings, errors.New("findings"), "")

// errInterrupted is returned when the run's context was cancelled (Ctrl-C,
// SIGTERM) before the command finished: its results are not printed.
var errInterrupted = interrupt.ErrInterrupted

// writeFailed is the error for output that could not be written (disk
// full, a closed pipe): an I/O failure, not a usage error.
func writeFailed(what string, err error) error {
	return fail.New(fail.Unwritten, fmt.Errorf("cannot write %s: %w", what, err), "")
}

// interruptGrace is how long Main waits, after SIGINT or SIGTERM, for the
// run to stop by itself before it ends the program anyway.
const interruptGrace = time.Second

// Main runs the program with the process's arguments and streams and
// returns its exit code. SIGINT and SIGTERM cancel the run, one received
// while the program started (internal/interrupt) included; every phase
// stops on that, and should one not stop within interruptGrace (a read
// stuck in the kernel), Main removes what forced-exit cleanups were
// registered (interrupt.Wait) and returns fail.ExitInterrupted all the same.
func Main() int {
	// A signal that came while the program started has cancelled ctx
	// already: the command stops at its first step, as it would later.
	ctx, stop := interrupt.Context()
	defer stop()
	env := &Env{
		Stdin:     os.Stdin,
		Stdout:    os.Stdout,
		Stderr:    os.Stderr,
		StdoutTTY: tty.Is(os.Stdout),
		StderrTTY: tty.Is(os.Stderr),
		Getenv:    os.Getenv,
		Now:       time.Now,
	}
	code, forced := interrupt.Wait(ctx, interruptGrace, func() int { return Run(ctx, env, os.Args[1:]) })
	if forced {
		fmt.Fprintln(os.Stderr, "lohibot-audit: interrupted (a step did not stop within a second; ended it)")
		return fail.ExitInterrupted
	}
	return code
}

// Run runs the command line args in env and returns the exit code.
func Run(ctx context.Context, env *Env, args []string) int {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if env.Now == nil {
		env.Now = time.Now
	}
	if env.Stdin == nil {
		env.Stdin = strings.NewReader("")
	}
	if env.Stdout == nil {
		env.Stdout = io.Discard
	}
	if env.Stderr == nil {
		env.Stderr = io.Discard
	}
	if ctx == nil {
		ctx = context.Background()
	}
	// The program's standard output remembers the first write error, so
	// that no command can end well with output lost, and refuses to write
	// once the run is cancelled (errInterrupted).
	out := &stickyio.Output{Ctx: ctx, W: env.Stdout, Refused: errInterrupted}
	e := *env
	e.Stdout = out
	env = &e
	root := newRootCmd(env)
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	code, show := exitCode(err)
	if code == fail.ExitInterrupted {
		fmt.Fprintln(env.Stderr, "lohibot-audit: interrupted")
		return fail.ExitInterrupted
	}
	kind := fail.KindOf(err)
	said := kind == fail.Usage || kind == fail.Unwritten
	// Output that could not be written is exit 3 whatever the command
	// found, said once; only a usage error comes before it.
	if werr := out.Err(); werr != nil && !said {
		printError(env, writeFailed("the output", werr))
		return fail.ExitIncomplete
	}
	if show != nil {
		printError(env, show)
	}
	return code
}

// exitCode maps the error a command returned to the exit code of SPEC §8,
// and returns the error still to be printed, or nil: the one place where
// the errors of the commands and of the packages they call become codes
// (fail.Exit for the kinds).
func exitCode(err error) (code int, show error) {
	var ie *audit.InputError
	switch {
	case err == nil:
		return fail.ExitOK, nil
	case interrupted(err):
		return fail.ExitInterrupted, nil
	case errors.As(err, &ie):
		// The report, and the warnings on stderr, said which inputs.
		return fail.ExitIncomplete, nil
	}
	code, say := fail.Exit(err)
	if !say {
		return code, nil
	}
	return code, err
}

// interrupted reports whether err means the run was cancelled (Ctrl-C,
// SIGTERM) rather than failed.
func interrupted(err error) bool {
	return errors.Is(err, errInterrupted) || errors.Is(err, context.Canceled) || errors.Is(err, parse.ErrStopped)
}

// printError prints err in the program's voice (fail.Lines): one line,
// lowercase, with an optional hint line. Control characters are escaped.
func printError(env *Env, err error) {
	msg, hint := fail.Lines(err)
	fmt.Fprintf(env.Stderr, "lohibot-audit: error: %s\n", sanitize(msg))
	if hint != "" {
		fmt.Fprintf(env.Stderr, "lohibot-audit: hint: %s\n", sanitize(hint))
	}
}

// withHint adds a hint line (what to do next) to an error.
func withHint(err error, hint string) error { return fail.New(fail.Other, err, hint) }

// warnf prints a warning line on stderr.
func warnf(env *Env, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if env.repeated[msg] {
		return
	}
	fmt.Fprintf(env.Stderr, "lohibot-audit: warning: %s\n", sanitize(msg))
}

func newRootCmd(env *Env) *cobra.Command {
	root := &cobra.Command{
		Use:           "lohibot-audit",
		Short:         "Audit what the " + crawlerTitle + " crawler (and its impostors) did on your sites",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	root.SetVersionTemplate("lohibot-audit {{.Version}}\n")
	// The config file fills in the flags a command was not given, for
	// every command that takes --config, before it runs.
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		if f := c.Flags().Lookup("config"); f != nil {
			return loadConfig(env, c, f.Value.String())
		}
		return nil
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fail.Hinted(err, fmt.Sprintf("see '%s --help'", c.CommandPath()))
	})
	root.AddCommand(
		newLogsCmd(env),
		newVerifyCmd(env),
		newRobotsCmd(env),
		newEmitCmd(env),
		newIPsCmd(env),
		newWatchCmd(env),
		newUnblockCmd(env),
		newFormatCmd(env),
		newMergeCmd(env),
		newOptoutCmd(env),
		newVersionCmd(env),
	)
	// The commands' descriptions and examples are the manual's
	// (internal/manual/help), told the default crawler's facts.
	manual.Describe(root, manualValues(crawler.DefaultProfile()))
	registerCompletions(root)
	return root
}

// manualValues are the facts of the crawler p that the help texts name.
func manualValues(p *crawler.Profile) manual.Values {
	return manual.Values{Crawler: p.Title(), IPList: p.IPLists[0], FCrDNS: p.FCrDNS[0], Builtin: p.BuiltinIPs}
}

func newVersionCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			fmt.Fprintf(env.Stdout, "lohibot-audit %s\n", Version)
			return nil
		},
	}
}
