package watchstate

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
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

// Close stops answering on the control socket and lets go of the
// directory. A nil Held does nothing.
func (h *Held) Close() {
	if h == nil {
		return
	}
	h.Listener.Close()
	h.lock.Release()
}

// SystemdDir is the state directory $STATE_DIRECTORY names (systemd's
// StateDirectory=): the first of those it lists, separated by colons.
func SystemdDir(env string) string {
	d, _, _ := strings.Cut(env, ":")
	return d
}
