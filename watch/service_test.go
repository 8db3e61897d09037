package watch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/crowdsec"
	"github.com/lohisoft/lohibot-audit/emit"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/nftset"
	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/lohisoft/lohibot-audit/watchstate"
)

// said collects what a watch says, for tests to wait for.
type said struct{ ch chan string }

func newSaid() *said         { return &said{ch: make(chan string, 64)} }
func (s *said) say(m string) { s.ch <- m }
func (s *said) wait(t *testing.T, prefix string) string {
	t.Helper()
	deadline := time.After(hang)
	for {
		select {
		case m := <-s.ch:
			if strings.HasPrefix(m, prefix) {
				return m
			}
		case <-deadline:
			t.Fatalf("nothing said starting %q", prefix)
			return ""
		}
	}
}

func offlineIdentity(t *testing.T) *verify.Identity {
	t.Helper()
	p, ok := crawler.Builtin(crawler.Default)
	if !ok {
		t.Fatal("no default crawler")
	}
	return verify.NewIdentity(&verify.Verifier{Offline: true}, []*crawler.Profile{p}, nil)
}

// TestService: a watch started with a state directory, metrics, an
// --exec command and CrowdSec serves its metrics and its control socket,
// says a summary and reloads when asked (a failed reload is said and the
// watch goes on), keeps in its state where it blocks, and ends with its
// context.
func TestService(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	if err := os.WriteFile(log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	stateDir := filepath.Join(dir, "state")
	if err := os.Mkdir(stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	s := newSaid()
	held, err := watchstate.Open(stateDir, time.Now(), s.say)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	x := &Exec{Argv: []string{"/bin/true"}, Timeout: time.Minute, Concurrency: 1}
	creds := &crowdsec.Credentials{URL: "http://127.0.0.1:1/", Login: "m", Password: "p"}
	svc, err := Start(context.Background(), ServiceConfig{
		Config: Config{Options: Options{Files: []string{log}, Events: &Events{W: io.Discard}, Say: s.say,
			Exec: x, Version: "v-test", BlockTTL: time.Hour}, Identity: offlineIdentity(t)},
		ExecCommand: "/bin/true  --twice",
		CrowdSec:    creds, CrowdSecFile: "/etc/crowdsec/x.yaml",
		State:   held,
		Metrics: "127.0.0.1:0",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	served := s.wait(t, "metrics: serving at ")
	url := strings.TrimPrefix(served, "metrics: serving at ")
	if x.OnDone == nil {
		t.Fatal("an --exec command's failures are not said")
	}
	x.OnDone([]string{"192.0.2.1", "lohisoftbot", "ptr-mismatch"}, errors.New("exit status 1"))
	if got, want := s.wait(t, "exec "), "exec /bin/true 192.0.2.1 lohisoftbot ptr-mismatch: exit status 1"; got != want {
		t.Errorf("said %q, want %q", got, want)
	}

	ctx, cancel := context.WithCancel(context.Background())
	hup, usr1 := make(chan os.Signal, 1), make(chan os.Signal, 1)
	reloads := 0
	done := make(chan error, 1)
	go func() {
		done <- svc.Serve(ctx, Signals{Reload: hup, Summary: usr1, OnReload: func() error {
			reloads++
			if reloads == 1 {
				return errors.New("no such profile")
			}
			return nil
		}})
	}()

	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte("lohibot_audit_")) {
		t.Errorf("metrics: %d %q", resp.StatusCode, body)
	}
	actx, acancel := context.WithTimeout(ctx, hang)
	ans, err := watchstate.Ask(actx, stateDir, watchstate.Request{Op: watchstate.OpStatus})
	acancel()
	if err != nil || ans.Status == nil || ans.Status.Version != "v-test" {
		t.Errorf("status through the control socket: %+v, %v", ans, err)
	}

	usr1 <- syscall.SIGUSR1
	if got := s.wait(t, "watch: "); !strings.Contains(got, " up; 0 lines, 0 claimed") {
		t.Errorf("summary said %q", got)
	}
	hup <- syscall.SIGHUP
	s.wait(t, "reloading the config, the IP list and robots.txt")
	if got, want := s.wait(t, "reload"), "reload failed: no such profile; going on as before"; got != want {
		t.Errorf("said %q, want %q", got, want)
	}
	hup <- syscall.SIGHUP
	s.wait(t, "reloading")
	s.wait(t, "reloaded: addresses are judged again as they are seen")

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve ended with its context: %v, want nil", err)
	}
	l, err := watchstate.Read(stateDir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want := watchstate.Targets{CrowdSec: creds.URL, CrowdSecCredentials: "/etc/crowdsec/x.yaml", Exec: "/bin/true  --twice"}
	if l.Targets != want {
		t.Errorf("state's targets %+v, want %+v", l.Targets, want)
	}
}

// TestStartErrors: a metrics address that cannot be bound and an
// nftables table that cannot be used are usage errors naming the option.
func TestStartErrors(t *testing.T) {
	base := func() ServiceConfig {
		return ServiceConfig{Config: Config{Options: Options{Files: []string{"-"}, Events: &Events{W: io.Discard}},
			Identity: offlineIdentity(t)}}
	}
	c := base()
	c.Metrics = "192.0.2.1:no-port"
	_, err := Start(context.Background(), c)
	if fail.KindOf(err) != fail.Usage || !strings.HasPrefix(err.Error(), "--metrics 192.0.2.1:no-port: ") ||
		!strings.HasSuffix(err.Error(), ": give a free HOST:PORT, such as 127.0.0.1:9571") || strings.Contains(err.Error(), "listen tcp") {
		t.Errorf("bad metrics address: %v, want a usage error of --metrics", err)
	}
	c = base()
	c.NFTables = &nftset.Options{NFTOptions: emit.NFTOptions{Table: "nofamily lohibot extra"}}
	_, err = Start(context.Background(), c)
	if fail.KindOf(err) != fail.Usage || !strings.HasPrefix(err.Error(), "nftables: ") || !errors.Is(err, nftset.ErrBadOption) {
		t.Errorf("bad table: %v, want a usage error of nftables", err)
	}
	c = base()
	c.NFTables = &nftset.Options{}
	c.NFTNetNS = filepath.Join(t.TempDir(), "no-netns")
	_, err = Start(context.Background(), c)
	if fail.KindOf(err) != fail.Usage || err.Error() != "--nft-netns: no such file or directory" {
		t.Errorf("a network namespace file that is not there: %v, want a usage error of --nft-netns", err)
	}
}

func TestStartErrorHints(t *testing.T) {
	for _, tt := range []struct {
		err       error
		kind      fail.Kind
		msg, hint string
	}{
		{fmt.Errorf("netlink: %w", nftset.ErrUnsupported), fail.Usage, "--nftables: netlink: ", "on this system block with --exec"},
		{&os.SyscallError{Syscall: "sendmsg", Err: syscall.EPERM}, fail.Other, "nftables: sendmsg: operation not permitted", "run as root or with CAP_NET_ADMIN"},
	} {
		err := startError("nftables", tt.err, "")
		if fail.KindOf(err) != tt.kind || !strings.HasPrefix(err.Error(), tt.msg) || !strings.HasPrefix(fail.HintOf(err), tt.hint) {
			t.Errorf("%v: kind %v, %q, hint %q", tt.err, fail.KindOf(err), err, fail.HintOf(err))
		}
	}
}

func TestUnreferenced(t *testing.T) {
	got := unreferenced("", []string{"spoofed_live_v4", "spoofed_live_v6"})
	want := "nftables: no rule in table inet lohibot refers to @spoofed_live_v4 or @spoofed_live_v6, where watch adds spoofers: " +
		"they are not dropped until a chain of yours has 'ip saddr @spoofed_live_v4 drop' and 'ip6 saddr @spoofed_live_v6 drop'"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := unreferenced("ip fw", []string{"spoofed_live_v4"}); !strings.Contains(got, "table ip fw refers to @spoofed_live_v4,") {
		t.Errorf("named table: %q", got)
	}
}

func TestCommandProblem(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	if err := os.WriteFile(run, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		run:                          "",
		"sh":                         "",
		"no-such-command-lohibot":    "not found in $PATH",
		filepath.Join(dir, "absent"): "no such file",
		dir:                          "is a directory",
		plain:                        "is not executable",
	} {
		if got := commandProblem(name); got != want {
			t.Errorf("commandProblem(%s) = %q, want %q", name, got, want)
		}
	}
}

// failingWriter fails while fail is set.
type failingWriter struct{ fail bool }

func (w *failingWriter) Write(b []byte) (int, error) {
	if w.fail {
		return 0, syscall.ENOSPC
	}
	return len(b), nil
}

// TestEventsTo: a failure to write events is said once, and the end of
// it once.
func TestEventsTo(t *testing.T) {
	fw := &failingWriter{fail: true}
	var got []string
	e := EventsTo(fw, true, func(m string) { got = append(got, m) })
	e.line("a")
	e.line("b")
	fw.fail = false
	e.line("c")
	want := []string{"cannot write events: no space left on device: going on; events are lost until writing works again", "events are written again"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("said %q, want %q", got, want)
	}
	if w, l := e.Counts(); w != 1 || l != 2 {
		t.Errorf("counts %d written %d lost, want 1 and 2", w, l)
	}
}

// usageError fails t unless err is a usage error whose message is want.
func usageError(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil || fail.KindOf(err) != fail.Usage || err.Error() != want {
		t.Errorf("%s: %v (kind %v), want the usage error %q", what, err, fail.KindOf(err), want)
	}
}

// An --exec command that cannot run is refused at start, the command
// named as given (escaped), with what is wrong with it.
func TestExecArgv(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ command, want string }{
		{"", `--exec "": give a command, such as --exec /usr/local/bin/lohibot-banip`},
		{"  ", `--exec "  ": give a command, such as --exec /usr/local/bin/lohibot-banip`},
		{"/nonexistent/cmd", "--exec /nonexistent/cmd: no such file: give the path of an executable file"},
		{"lohibot-no-such-command ban", "--exec lohibot-no-such-command: not found in $PATH: give the path of an executable file"},
		{"lohibot-no\x1b[2J ban", `--exec lohibot-no\x1b[2J: not found in $PATH: give the path of an executable file`},
		{dir, "--exec " + dir + ": is a directory: give the path of an executable file"},
		{plain + " --now", "--exec " + plain + ": is not executable: give the path of an executable file"},
	} {
		argv, err := ExecArgv(tt.command)
		usageError(t, tt.command, err, tt.want)
		if argv != nil {
			t.Errorf("%q: argv %q with the error", tt.command, argv)
		}
	}
	argv, err := ExecArgv(" sh  -c  true ")
	if err != nil || !slices.Equal(argv, []string{"sh", "-c", "true"}) {
		t.Errorf("sh -c true: %q, %v", argv, err)
	}
}

// given says the options names were given on the command line.
func given(names ...string) func(string) bool {
	return func(n string) bool { return slices.Contains(names, n) }
}

// An option given on the command line that acts only with a way of
// blocking not asked for is refused, saying what to add.
func TestCheckNeeds(t *testing.T) {
	for _, tt := range []struct {
		asked  Asked
		option string
		want   string
	}{
		{Asked{}, "nft-table", "--nft-table acts only with --nftables: add --nftables, or leave --nft-table out"},
		{Asked{Exec: true}, "set-only", "--set-only acts only with --nftables: add --nftables, or leave --set-only out"},
		{Asked{Exec: true}, "ttl", "--ttl acts only with --nftables or --crowdsec: add --nftables or --crowdsec, or leave --ttl out"},
		{Asked{CrowdSec: true}, "nft-netns", "--nft-netns acts only with --nftables: add --nftables, or leave --nft-netns out"},
		{Asked{NFTables: true}, "exec-timeout", "--exec-timeout acts only with --exec: add --exec, or leave --exec-timeout out"},
		{Asked{NFTables: true, CrowdSec: true}, "exec-concurrency", "--exec-concurrency acts only with --exec: add --exec, or leave --exec-concurrency out"},
	} {
		usageError(t, tt.option, tt.asked.CheckNeeds(given(tt.option)), tt.want)
	}
	all := given("nft-table", "set-only", "ttl", "nft-netns", "exec-timeout", "exec-concurrency")
	if err := (Asked{NFTables: true, Exec: true}).CheckNeeds(all); err != nil {
		t.Errorf("every option with what it needs: %v", err)
	}
	if err := (Asked{CrowdSec: true}).CheckNeeds(given("ttl")); err != nil {
		t.Errorf("--ttl with --crowdsec: %v", err)
	}
	if err := (Asked{}).CheckNeeds(given()); err != nil {
		t.Errorf("nothing given: %v", err)
	}
}

// Check reads --ttl whatever blocks, holds it to 1s-365d only where it
// applies, and after what it needs; a --ttl that is no duration is
// refused first, then an --exec command that cannot run, then an option
// that acts only with a way not asked for; --crowdsec-credentials is for
// --crowdsec only.
func TestAskedCheck(t *testing.T) {
	for _, tt := range []struct {
		name    string
		asked   Asked
		ttl     string
		command string
		given   []string
		want    string
	}{
		{"ttl alone", Asked{}, "1d", "", []string{"ttl"}, "--ttl acts only with --nftables or --crowdsec: add --nftables or --crowdsec, or leave --ttl out"},
		{"ttl zero", Asked{NFTables: true}, "0s", "", []string{"ttl"}, `--ttl "0s": give a duration from 1s to 365d, such as 7d, 36h or 1d12h`},
		{"ttl past a year", Asked{CrowdSec: true}, "366d", "", []string{"ttl"}, `--ttl "366d": give a duration from 1s to 365d, such as 7d, 36h or 1d12h`},
		{"ttl past a year without a way it applies", Asked{Exec: true}, "400d", "sh", []string{"ttl"}, "--ttl acts only with --nftables or --crowdsec: add --nftables or --crowdsec, or leave --ttl out"},
		{"ttl not a duration before the needs", Asked{Exec: true}, "soon", "sh", []string{"ttl"}, `--ttl "soon": give a duration from 1s to 365d, such as 7d, 36h or 1d12h`},
		{"ttl not a duration before the command", Asked{Exec: true}, "soon", "/nonexistent/cmd", nil, `--ttl "soon": give a duration from 1s to 365d, such as 7d, 36h or 1d12h`},
		{"command before the needs", Asked{Exec: true}, "7d", "/nonexistent/cmd", []string{"ttl"}, "--exec /nonexistent/cmd: no such file: give the path of an executable file"},
		{"credentials without crowdsec", Asked{NFTables: true}, "7d", "", []string{"crowdsec-credentials"}, "--crowdsec-credentials is for --crowdsec"},
	} {
		ttl, argv, err := tt.asked.Check(tt.ttl, tt.command, given(tt.given...))
		usageError(t, tt.name, err, tt.want)
		if ttl != 0 || argv != nil {
			t.Errorf("%s: %s, %q with the error", tt.name, ttl, argv)
		}
	}
	// A --ttl past a year, set where it applies to no way of blocking
	// (a config file shared with emit): read, for the state.
	ttl, argv, err := (Asked{Exec: true}).Check("400d", "sh -c true", given())
	if err != nil || ttl != 400*24*time.Hour || !slices.Equal(argv, []string{"sh", "-c", "true"}) {
		t.Errorf("exec with a config's 400d: %s, %q, %v", ttl, argv, err)
	}
	ttl, argv, err = (Asked{CrowdSec: true}).Check("36h", "", given("ttl", "crowdsec-credentials"))
	if err != nil || ttl != 36*time.Hour || argv != nil {
		t.Errorf("crowdsec --ttl 36h: %s, %q, %v", ttl, argv, err)
	}
}

func TestCheckLimits(t *testing.T) {
	const want = "--exec-timeout and --verdict-ttl must be above 0, --exec-concurrency at least 1"
	usageError(t, "exec-timeout 0", CheckLimits(0, 1, time.Hour), want)
	usageError(t, "exec-concurrency 0", CheckLimits(time.Second, 0, time.Hour), want)
	usageError(t, "verdict-ttl -1s", CheckLimits(time.Second, 1, -time.Second), want)
	if err := CheckLimits(time.Nanosecond, 1, time.Nanosecond); err != nil {
		t.Errorf("the least limits: %v", err)
	}
}

// A directory given as a log is refused; a file that does not exist yet
// is waited for, and "-" is standard input.
func TestCheckFiles(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	if err := CheckFiles([]string{"-", log, filepath.Join(dir, "later.log")}); err != nil {
		t.Errorf("files to wait for: %v", err)
	}
	usageError(t, "a directory", CheckFiles([]string{log, dir}),
		dir+" is a directory: give the log files in it, such as "+log)
}

func TestCheckMetrics(t *testing.T) {
	for _, ok := range []string{"", "127.0.0.1:9571", ":9571", "[::1]:9571", "localhost:http"} {
		if err := CheckMetrics(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	usageError(t, "nowhere", CheckMetrics("nowhere"), `--metrics "nowhere": give HOST:PORT, such as 127.0.0.1:9571`)
	if err := CheckMetrics("a\x1bb"); err == nil || strings.ContainsRune(err.Error(), 0x1b) {
		t.Errorf("an escape in the address: %q", err)
	}
}
