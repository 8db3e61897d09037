package watchstate

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/parse"
)

// Held is a state directory a running watch holds: its lock, the state it
// found there, and its control socket.
type Held struct {
	// Dir is the directory.
	Dir string
	// Loaded is the state found at start; nil when there was none, or one
	// that could not be used.
	Loaded *Loaded
	// Listener is the control socket, for Serve.
	Listener net.Listener
	lock     *Lock
}

// ListenError is Open's error for a control socket that cannot be made.
type ListenError struct{ Err error }

func (e *ListenError) Error() string { return "control socket: " + e.Err.Error() }
func (e *ListenError) Unwrap() error { return e.Err }

// Open takes dir for a watch: its lock (ErrLocked when another watch holds
// it; Acquire's error, as it is, when it cannot be used), the state in it,
// read as of now, and its control socket (a *ListenError). A state file
// that cannot be used is said (say), set aside when it is not this
// program's or is damaged, and left out: the watch starts without it.
func Open(dir string, now time.Time, say func(string)) (*Held, error) {
	lock, err := Acquire(dir)
	if err != nil {
		return nil, err
	}
	h := &Held{Dir: dir, lock: lock}
	l, err := Read(dir, now)
	switch {
	case err == nil:
		h.Loaded = l
	case errors.Is(err, fs.ErrNotExist):
	case errors.Is(err, ErrForeign), errors.Is(err, ErrDamaged), errors.Is(err, ErrVersion):
		if aside, aerr := SetAside(dir); aerr == nil {
			say(fmt.Sprintf("state: %s: %v: not used (kept as %s); starting without it", Path(dir), err, aside))
		} else {
			say(fmt.Sprintf("state: %s: %v: not used; starting without it", Path(dir), err))
		}
	default:
		say(fmt.Sprintf("state: %v: starting without it", fail.PathCause(err)))
	}
	ln, err := Listen(dir)
	if err != nil {
		lock.Release()
		return nil, &ListenError{Err: fail.PathCause(err)}
	}
	h.Listener = ln
	return h, nil
}

// Take is Open for a watch that starts, with what a failure means: a
// directory another watch holds, or one whose control socket cannot be
// made, is a usage error (fail.Usage); so is one that cannot be used
// when it was asked for (asked: --state-dir, $STATE_DIRECTORY). The
// built-in default out of reach is said (say), and the watch keeps no
// state: nil, no error.
func Take(dir string, asked bool, now time.Time, say func(string)) (*Held, error) {
	h, err := Open(dir, now, say)
	var le *ListenError
	switch {
	case err == nil:
		return h, nil
	case errors.Is(err, ErrLocked):
		return nil, fail.Hinted(fmt.Errorf("state directory %s: %w", parse.EscapeControl(dir), err),
			"give each watch its own --state-dir (or --no-state); 'lohibot-audit watch status' asks the one that runs")
	case errors.As(err, &le):
		return nil, fail.Usagef("state directory %s: %v", parse.EscapeControl(dir), err)
	case !asked:
		say(fmt.Sprintf("state: cannot use %s (%v): verdicts and blocks are not kept across restarts; give --state-dir DIR, or --no-state", dir, fail.PathCause(err)))
		return nil, nil
	}
	return nil, fail.Usagef("--state-dir %s: %v", parse.EscapeControl(dir), fail.PathCause(err))
}

// Close stops answering on the control socket and lets go of the
// directory. A nil Held does nothing.
func (h *Held) Close() {
	if h == nil {
		return
	}
	h.Listener.Close()
	h.lock.Release()
}

// Choice is how a command chooses its state directory: Flag
// (--state-dir) when given, else the one $STATE_DIRECTORY names (Env:
// systemdDir), else Default; NoState (watch's --no-state) keeps none.
type Choice struct {
	Flag    string
	NoState bool
	Env     string
	Default string
}

// Dir is the state directory c chooses, and whether it was asked for
// (Flag, Env) rather than fallen back on; "" is no directory at all.
func (c Choice) Dir() (dir string, asked bool) {
	if c.Flag != "" {
		return c.Flag, true
	}
	if c.Env != "" {
		return systemdDir(c.Env), true
	}
	return c.Default, false
}

// Needed is the state directory of a command that cannot do without one
// (watch status, unblock): none is a usage error.
func (c Choice) Needed() (string, error) {
	dir, _ := c.Dir()
	if dir == "" {
		return "", fail.Usagef("no state directory: give --state-dir DIR")
	}
	return dir, nil
}

// Take takes the state directory c chooses for a watch that starts
// (Take): nil with NoState, or with no directory at all. NoState with a
// Flag is a usage error.
func (c Choice) Take(now time.Time, say func(string)) (*Held, error) {
	if c.NoState {
		if c.Flag != "" {
			return nil, fail.Usagef("--state-dir and --no-state: give one")
		}
		return nil, nil
	}
	dir, asked := c.Dir()
	if dir == "" {
		return nil, nil
	}
	return Take(dir, asked, now, say)
}

// systemdDir is the state directory $STATE_DIRECTORY names (systemd's
// StateDirectory=): the first of those it lists, separated by colons.
func systemdDir(env string) string {
	d, _, _ := strings.Cut(env, ":")
	return d
}
