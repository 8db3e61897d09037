//go:build unix

// Package crowdsectest runs a real CrowdSec Local API for tests: Debian's
// crowdsec with its agent off (crowdsec -no-cs), each test with its own
// configuration directory, SQLite database and loopback port, so that
// tests can run in parallel and leave nothing behind. Decisions are read
// back with the real cscli.
//
// When crowdsec or cscli is missing, a test fails if the environment
// variable CI is set (.ci/install-crowdsec installs them) and skips
// otherwise.
package crowdsectest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// install is what installs the tools this package runs.
const install = ".ci/install-crowdsec"

// Machine is the machine every LAPI of this package is made with.
const (
	Machine  = "lohibot-audit-test"
	Password = "test-password-of-a-machine-0123456789"
)

// LAPI is a CrowdSec Local API run for one test.
type LAPI struct {
	// URL is its base URL, http://127.0.0.1:PORT.
	URL string
	// Dir holds its configuration and database.
	Dir string
	// Config is its config.yaml, for cscli -c.
	Config string
	// Credentials is the credentials file of the machine Machine.
	Credentials string
	// Listen is the address it listens on.
	Listen string

	t       testing.TB
	crowd   string
	cscli   string
	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	log     *bytes.Buffer
	running bool
	// Prefix, when set before Start, runs crowdsec under these arguments
	// (such as ip netns exec NAME).
	prefix []string
}

// Options shape a LAPI.
type Options struct {
	// Listen is the address to listen on; empty means a free loopback
	// port.
	Listen string
	// Prefix runs crowdsec under these arguments (ip netns exec NAME).
	Prefix []string
}

// Start starts a Local API with a machine Machine whose credentials are in
// l.Credentials; it is stopped and its files removed when the test ends.
func Start(t testing.TB) *LAPI { return StartWith(t, Options{}) }

// StartWith is Start with options.
func StartWith(t testing.TB, o Options) *LAPI {
	t.Helper()
	l := &LAPI{t: t, crowd: testutil.NeedTool(t, install, "crowdsec"), cscli: testutil.NeedTool(t, install, "cscli"), Dir: t.TempDir(), prefix: o.Prefix}
	l.Listen = o.Listen
	if l.Listen == "" {
		l.Listen = freePort(t)
	}
	l.URL = "http://" + l.Listen
	l.Config = filepath.Join(l.Dir, "config.yaml")
	l.Credentials = filepath.Join(l.Dir, "local_api_credentials.yaml")
	for _, d := range []string{"data", "hub"} {
		if err := os.MkdirAll(filepath.Join(l.Dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(l.Dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("simulation.yaml", "simulation: off\n")
	write("profiles.yaml", `name: default_ip_remediation
filters:
 - Alert.Remediation == true && Alert.GetScope() == "Ip"
decisions:
 - type: ban
   duration: 4h
on_success: break
`)
	write("config.yaml", fmt.Sprintf(`common:
  daemonize: false
  log_media: stdout
  log_level: info
config_paths:
  config_dir: %[1]s/
  data_dir: %[1]s/data/
  simulation_path: %[1]s/simulation.yaml
  hub_dir: %[1]s/hub/
  index_path: %[1]s/hub/.index.json
db_config:
  type: sqlite
  db_path: %[1]s/data/crowdsec.db
  use_wal: true
  flush:
    max_items: 100000
    max_age: 30d
api:
  client:
    credentials_path: %[1]s/local_api_credentials.yaml
  server:
    listen_uri: %[2]s
    profiles_path: %[1]s/profiles.yaml
prometheus:
  enabled: false
`, l.Dir, l.Listen))
	l.Cscli(t, "machines", "add", Machine, "--password", Password, "-f", l.Credentials, "--force")
	l.Restart(t)
	t.Cleanup(l.Stop)
	return l
}

// freePort returns 127.0.0.1:PORT with a port free a moment ago.
func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// Restart starts the Local API (again, on the same port and database) and
// waits until it answers.
func (l *LAPI) Restart(t testing.TB) {
	t.Helper()
	l.mu.Lock()
	if l.running {
		l.mu.Unlock()
		t.Fatal("crowdsectest: the Local API runs already")
	}
	args := append(append([]string(nil), l.prefix...), l.crowd, "-c", l.Config, "-no-cs")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	l.log = &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = &lockedWriter{w: l.log, mu: &l.mu}, &lockedWriter{w: l.log, mu: &l.mu}
	if err := cmd.Start(); err != nil {
		l.mu.Unlock()
		t.Fatalf("crowdsectest: cannot start crowdsec: %v", err)
	}
	l.cmd, l.running, l.exited = cmd, true, make(chan struct{})
	exited := l.exited
	l.mu.Unlock()
	go func() {
		cmd.Wait()
		close(exited)
	}()
	// Wait for it to answer, or to end: a hang, not a slow machine, makes
	// this fail.
	deadline := time.Now().Add(90 * time.Second)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		select {
		case <-exited:
			l.mu.Lock()
			l.running = false
			out := l.log.String()
			l.mu.Unlock()
			t.Fatalf("crowdsectest: crowdsec ended at start:\n%s", out)
		default:
		}
		if l.prefix == nil {
			resp, err := client.Get(l.URL + "/health")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return
				}
			}
		} else if l.logSays("CrowdSec Local API listening") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("crowdsectest: crowdsec did not answer within 90s:\n%s", l.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logSays reports whether crowdsec's output holds s.
func (l *LAPI) logSays(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Contains(l.log.String(), s)
}

// Log is what crowdsec printed.
func (l *LAPI) Log() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.log.String()
}

// Stop stops the Local API and waits for it to end: it is down, its
// database kept for Restart.
func (l *LAPI) Stop() {
	l.mu.Lock()
	if !l.running {
		l.mu.Unlock()
		return
	}
	l.running = false
	cmd, exited := l.cmd, l.exited
	l.mu.Unlock()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}

// Cscli runs cscli with the LAPI's configuration and returns its standard
// output; a failure fails the test.
func (l *LAPI) Cscli(t testing.TB, args ...string) string {
	t.Helper()
	out, err := l.cscliRun(args...)
	if err != nil {
		t.Fatalf("cscli %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func (l *LAPI) cscliRun(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	all := append([]string{"-c", l.Config, "--error"}, args...)
	cmd := exec.CommandContext(ctx, l.cscli, all...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// Decision is one decision in force, as cscli decisions list -o json
// shows it.
type Decision struct {
	ID       int64
	AlertID  int64
	Origin   string
	Scenario string
	Scope    string
	Type     string
	Value    string
	// Left is the time it has left.
	Left time.Duration
	// Message is its alert's.
	Message string
}

// Decisions lists every decision in force, from the alerts cscli alerts
// list -o json shows (every one: --limit 0), sorted by ID. Unlike cscli
// decisions list, which shows one decision per type, scope and value, it
// shows each: a value pushed twice has two.
func (l *LAPI) Decisions(t testing.TB) []Decision {
	t.Helper()
	return parseDecisions(t, l.Cscli(t, "alerts", "list", "-o", "json", "--limit", "0"))
}

// Listed lists the decisions in force as operators see them: cscli
// decisions list -o json --limit 0.
func (l *LAPI) Listed(t testing.TB) []Decision {
	t.Helper()
	return parseDecisions(t, l.Cscli(t, "decisions", "list", "-o", "json", "--limit", "0"))
}

// parseDecisions reads the decisions in force of cscli's JSON alerts.
func parseDecisions(t testing.TB, out string) []Decision {
	t.Helper()
	var alerts []struct {
		ID        int64  `json:"id"`
		Message   string `json:"message"`
		Decisions []struct {
			ID       int64  `json:"id"`
			Origin   string `json:"origin"`
			Scenario string `json:"scenario"`
			Scope    string `json:"scope"`
			Type     string `json:"type"`
			Value    string `json:"value"`
			Duration string `json:"duration"`
		} `json:"decisions"`
	}
	if s := strings.TrimSpace(out); s == "" || s == "null" {
		return nil
	}
	if err := json.Unmarshal([]byte(out), &alerts); err != nil {
		t.Fatalf("cscli -o json: %v:\n%s", err, out)
	}
	var ds []Decision
	for _, a := range alerts {
		for _, d := range a.Decisions {
			left, err := time.ParseDuration(d.Duration)
			if err != nil {
				t.Fatalf("cscli: decision %d: duration %q: %v", d.ID, d.Duration, err)
			}
			if left <= 0 {
				continue
			}
			ds = append(ds, Decision{ID: d.ID, AlertID: a.ID, Origin: d.Origin, Scenario: d.Scenario, Scope: d.Scope,
				Type: d.Type, Value: d.Value, Left: left, Message: a.Message})
		}
	}
	slices.SortFunc(ds, func(a, b Decision) int { return cmp.Compare(a.ID, b.ID) })
	return ds
}

// AddBouncer registers a bouncer and returns its API key.
func (l *LAPI) AddBouncer(t testing.TB, name string) string {
	t.Helper()
	key := "lohibotaudittestbouncerkey" + strconv.Itoa(os.Getpid())
	l.Cscli(t, "bouncers", "add", name, "-k", key)
	return key
}

// AddMachine adds a machine with a password and writes its credentials
// file, returning the file's path.
func (l *LAPI) AddMachine(t testing.TB, name, password string) string {
	t.Helper()
	f := filepath.Join(l.Dir, name+"_credentials.yaml")
	l.Cscli(t, "machines", "add", name, "--password", password, "-f", f, "--force")
	return f
}

// lockedWriter writes under a mutex.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}
