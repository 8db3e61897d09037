package watchstate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpen: a state directory is held by one watch at a time; the state
// in it is loaded; a damaged one is said, set aside and left out; a
// control socket that cannot be made is a *ListenError.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	if err := Write(context.Background(), dir, sample()); err != nil {
		t.Fatal(err)
	}
	var said []string
	say := func(m string) { said = append(said, m) }
	h, err := Open(dir, now, say)
	if err != nil {
		t.Fatal(err)
	}
	if h.Loaded == nil || len(h.Loaded.Verdicts) != 2 || len(said) != 0 {
		t.Errorf("loaded %+v, said %q: want the sample's state, nothing said", h.Loaded, said)
	}
	if _, err := Open(dir, now, say); !errors.Is(err, ErrLocked) {
		t.Errorf("a second Open: %v, want ErrLocked", err)
	}
	h.Close()
	var nilHeld *Held
	nilHeld.Close() // no state kept: nothing to do

	if err := os.WriteFile(Path(dir), []byte("not a state\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err = Open(dir, now, say)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	if h.Loaded != nil || len(said) != 1 || !strings.HasPrefix(said[0], "state: "+Path(dir)+": ") ||
		!strings.Contains(said[0], ": not used (kept as ") || !strings.HasSuffix(said[0], "); starting without it") {
		t.Errorf("a foreign state file: loaded %v, said %q", h.Loaded != nil, said)
	}
	if _, err := os.Stat(Path(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the foreign state file was not set aside: %v", err)
	}

	// A socket path too long for the system: the lock is let go.
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
	if err := os.Mkdir(long, 0o700); err != nil {
		t.Fatal(err)
	}
	var le *ListenError
	if _, err := Open(long, now, say); !errors.As(err, &le) || !strings.HasPrefix(err.Error(), "control socket: ") {
		t.Fatalf("a socket path too long: %v, want a ListenError", err)
	}
	if l, err := Acquire(long); err != nil {
		t.Errorf("the lock is still held after a failed Open: %v", err)
	} else {
		l.Release()
	}
}

func TestSystemdDir(t *testing.T) {
	for in, want := range map[string]string{
		"/var/lib/lohibot-audit":            "/var/lib/lohibot-audit",
		"/var/lib/lohibot-audit:/var/lib/b": "/var/lib/lohibot-audit",
		":/var/lib/b":                       "",
	} {
		if got := SystemdDir(in); got != want {
			t.Errorf("SystemdDir(%q) = %q, want %q", in, got, want)
		}
	}
}
