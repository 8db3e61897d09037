package watchstate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
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
		if got := systemdDir(in); got != want {
			t.Errorf("systemdDir(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestChoiceDir(t *testing.T) {
	for _, tt := range []struct {
		flag, env, fallback, dir string
		asked                    bool
	}{
		{"/srv/state", "/var/lib/a:/var/lib/b", "/var/lib/lohibot-audit", "/srv/state", true},
		{"", "/var/lib/a:/var/lib/b", "/var/lib/lohibot-audit", "/var/lib/a", true},
		{"", "", "/var/lib/lohibot-audit", "/var/lib/lohibot-audit", false},
		{"", "", "", "", false},
	} {
		c := Choice{Flag: tt.flag, Env: tt.env, Default: tt.fallback}
		if dir, asked := c.Dir(); dir != tt.dir || asked != tt.asked {
			t.Errorf("%+v.Dir() = %q, %v; want %q, %v", c, dir, asked, tt.dir, tt.asked)
		}
		dir, err := c.Needed()
		switch {
		case tt.dir != "" && (dir != tt.dir || err != nil):
			t.Errorf("%+v.Needed() = %q, %v; want %q", c, dir, err, tt.dir)
		case tt.dir == "" && (fail.KindOf(err) != fail.Usage || err.Error() != "no state directory: give --state-dir DIR"):
			t.Errorf("%+v.Needed() = %q, %v; want the usage error", c, dir, err)
		}
	}
}

// Choice.Take keeps no state with NoState, refusing a Flag too, and
// none with no directory; else it takes the directory chosen, one asked
// for held to work.
func TestChoiceTake(t *testing.T) {
	now := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	quiet := func(string) {}
	if h, err := (Choice{NoState: true, Env: "/nonexistent/env", Default: "/nonexistent/default"}).Take(now, quiet); h != nil || err != nil {
		t.Errorf("NoState: %v, %v; want no state and no error", h, err)
	}
	if _, err := (Choice{NoState: true, Flag: t.TempDir()}).Take(now, quiet); fail.KindOf(err) != fail.Usage || err.Error() != "--state-dir and --no-state: give one" {
		t.Errorf("NoState with a Flag: %v, want the usage error", err)
	}
	if h, err := (Choice{}).Take(now, quiet); h != nil || err != nil {
		t.Errorf("no directory: %v, %v; want no state and no error", h, err)
	}
	dir := t.TempDir()
	h, err := (Choice{Env: dir + ":/elsewhere"}).Take(now, quiet)
	if err != nil || h == nil || h.Dir != dir {
		t.Fatalf("$STATE_DIRECTORY %s: %v, %v; want it held", dir, h, err)
	}
	h.Close()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (Choice{Flag: file}).Take(now, quiet); fail.KindOf(err) != fail.Usage || !strings.HasPrefix(err.Error(), "--state-dir "+file+": ") {
		t.Errorf("a --state-dir that is a file: %v, want a usage error of --state-dir", err)
	}
}

// TestTake: a directory another watch holds is a usage error with a
// hint; one that cannot be used is a usage error when asked for, and
// said (no state kept) when it is the built-in default.
func TestTake(t *testing.T) {
	dir := t.TempDir()
	say := func(m string) { t.Errorf("said %q", m) }
	h, err := Take(dir, true, now, say)
	if err != nil || h == nil {
		t.Fatalf("take: %v", err)
	}
	_, err = Take(dir, false, now, say)
	h.Close()
	if fail.KindOf(err) != fail.Usage || !errors.Is(err, ErrLocked) || !strings.HasPrefix(err.Error(), "state directory "+dir+": ") ||
		!strings.Contains(fail.HintOf(err), "give each watch its own --state-dir") {
		t.Errorf("held by another: %v (hint %q)", err, fail.HintOf(err))
	}

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	under := filepath.Join(file, "state")
	_, err = Take(under, true, now, say)
	if fail.KindOf(err) != fail.Usage || !strings.HasPrefix(err.Error(), "--state-dir "+under+": ") || strings.Contains(err.Error(), "open ") {
		t.Errorf("asked for, unusable: %v", err)
	}
	var said []string
	h, err = Take(under, false, now, func(m string) { said = append(said, m) })
	if h != nil || err != nil || len(said) != 1 || !strings.HasPrefix(said[0], "state: cannot use "+under+" (") ||
		!strings.HasSuffix(said[0], "): verdicts and blocks are not kept across restarts; give --state-dir DIR, or --no-state") {
		t.Errorf("the default, unusable: %v, %v, said %q", h, err, said)
	}

	long := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
	if err := os.Mkdir(long, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Take(long, true, now, say); fail.KindOf(err) != fail.Usage || !strings.HasPrefix(err.Error(), "state directory "+long+": control socket: ") {
		t.Errorf("no control socket: %v", err)
	}
}
