package watchstate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

func TestChooseDir(t *testing.T) {
	for _, tt := range []struct {
		flag, env, fallback, dir string
		asked                    bool
	}{
		{"/srv/state", "/var/lib/a:/var/lib/b", "/var/lib/lohibot-audit", "/srv/state", true},
		{"", "/var/lib/a:/var/lib/b", "/var/lib/lohibot-audit", "/var/lib/a", true},
		{"", "", "/var/lib/lohibot-audit", "/var/lib/lohibot-audit", false},
		{"", "", "", "", false},
	} {
		if dir, asked := ChooseDir(tt.flag, tt.env, tt.fallback); dir != tt.dir || asked != tt.asked {
			t.Errorf("ChooseDir(%q, %q, %q) = %q, %v; want %q, %v", tt.flag, tt.env, tt.fallback, dir, asked, tt.dir, tt.asked)
		}
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
