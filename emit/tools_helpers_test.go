package emit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// The real-tool tests need nft, apache2 with mod_security2 and nginx with
// the ModSecurity module (.ci/install-rule-checkers installs them). When a
// tool is missing they fail if the environment variable CI is set and skip
// otherwise.

// needFile returns path if it exists, or fails (CI) / skips the test.
func needFile(t *testing.T, path, what string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		testutil.Missing(t, "%s is not installed: %v (run .ci/install-rule-checkers)", what, err)
	}
	return path
}

var (
	netnsOnce   sync.Once
	netnsPrefix []string
	netnsErr    error
)

// netnsCommand returns a command that runs argv in a new, empty network
// namespace, so nft never touches the host's firewall: unshare -rn (a user
// namespace mapping us to root) where unprivileged user namespaces are
// allowed, else unshare -n as root or through sudo -n.
func netnsCommand(t *testing.T, ctx context.Context, argv ...string) *exec.Cmd {
	t.Helper()
	netnsOnce.Do(func() {
		unshare, err := exec.LookPath("unshare")
		if err != nil {
			netnsErr = err
			return
		}
		candidates := [][]string{{unshare, "-rn"}}
		if os.Geteuid() == 0 {
			candidates = append(candidates, []string{unshare, "-n"})
		} else if sudo, err := exec.LookPath("sudo"); err == nil {
			candidates = append(candidates, []string{sudo, "-n", unshare, "-n"})
		}
		var msgs []string
		for _, c := range candidates {
			out, err := exec.Command(c[0], append(c[1:], "true")...).CombinedOutput()
			if err == nil {
				netnsPrefix = c
				return
			}
			msgs = append(msgs, fmt.Sprintf("%s: %v %s", strings.Join(c, " "), err, bytes.TrimSpace(out)))
		}
		netnsErr = errors.New(strings.Join(msgs, "; "))
	})
	if netnsErr != nil {
		testutil.Missing(t, "cannot make a network namespace: %v", netnsErr)
	}
	args := append(append([]string{}, netnsPrefix[1:]...), argv...)
	return exec.CommandContext(ctx, netnsPrefix[0], args...)
}

// runNetns runs a shell script in a new network namespace and returns its
// combined output.
func runNetns(t *testing.T, script string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := netnsCommand(t, ctx, "sh", "-ec", script)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// writeTemp writes data to name in a new temporary directory and returns
// the path.
func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// worldReadableDir makes a temporary directory that a server dropping
// privileges to www-data can still read (when the tests run as root).
func worldReadableDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "lohibot-emit-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// server is a web server process a test started; stop ends it.
type server struct {
	cmd  *exec.Cmd
	done chan error
	out  *bytes.Buffer
}

// startServer starts argv (a server that stays in the foreground), waits
// until 127.0.0.1:port accepts connections, and stops the server when the
// test ends.
func startServer(t *testing.T, port int, logFile string, argv ...string) *server {
	t.Helper()
	s := &server{cmd: exec.Command(argv[0], argv[1:]...), done: make(chan error, 1), out: new(bytes.Buffer)}
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", argv[0], err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() { s.stop(t) })
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return s
		}
		select {
		case err := <-s.done:
			s.done <- err
			log, _ := os.ReadFile(logFile)
			t.Fatalf("%s exited before serving: %v\n%s\n%s", argv[0], err, s.out, log)
		default:
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logFile)
			t.Fatalf("%s did not listen on port %d within 15s\n%s\n%s", argv[0], port, s.out, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends the server's process group (only processes this test started)
// and waits for it.
func (s *server) stop(t *testing.T) {
	pgid := s.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-s.done
	}
}

// statusFrom makes one GET request to 127.0.0.1:port from the loopback
// source address src with the given User-Agent and returns the status.
func statusFrom(t *testing.T, port int, src, userAgent string) int {
	t.Helper()
	d := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	client := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true},
	}
	req, err := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/", port), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET from %s: %v", src, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
