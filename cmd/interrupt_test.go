package cmd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// syncBuffer is a bytes.Buffer that a test may read while Run writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runCancelled runs args with stdin, cancels the run's context after
// delay and returns the exit code and streams; it fails the test when Run
// does not return within a few seconds of the cancel.
func runCancelled(t *testing.T, stdin io.Reader, delay time.Duration, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errb := &syncBuffer{}, &syncBuffer{}
	env := &Env{
		Stdin:  stdin,
		Stdout: out,
		Stderr: errb,
		Getenv: func(string) string { return "" },
		Now:    func() time.Time { return fixedNow },
	}
	done := make(chan int, 1)
	go func() { done <- Run(ctx, env, args) }()
	time.Sleep(delay)
	cancel()
	select {
	case code := <-done:
		return code, out.String(), errb.String()
	case <-time.After(5 * time.Second):
		t.Fatalf("Run did not return within 5s of the cancel; stderr so far: %q", errb.String())
		return 0, "", ""
	}
}

// TestLogsInterruptedWhileReading cancels a run reading a pipe that never
// ends and on which no claimed hit ever comes (Ctrl-C on `tail -f | logs
// -`): it stops at once, prints no report and exits 130.
func TestLogsInterruptedWhileReading(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines bool // whether browser lines keep coming, or the pipe is silent
	}{
		{"lines keep coming", true},
		{"silent pipe", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			t.Cleanup(func() { pw.CloseWithError(errors.New("test over")) })
			if tc.lines {
				go func() {
					line := []byte(`203.0.113.5 - - [01/Dec/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 512 "-" "Mozilla/5.0 (X11; Linux x86_64)"` + "\n")
					chunk := bytes.Repeat(line, 200)
					for {
						if _, err := pw.Write(chunk); err != nil {
							return
						}
					}
				}()
			}
			start := time.Now()
			code, out, errOut := runCancelled(t, pr, 300*time.Millisecond, "logs", "--offline", "--no-cache", "--format", "json", "-")
			t.Logf("returned %s after the start", time.Since(start).Round(time.Millisecond))
			if code != ExitInterrupted {
				t.Errorf("exit %d, want %d; stderr: %q", code, ExitInterrupted, errOut)
			}
			if out != "" {
				t.Errorf("an interrupted run printed a report: %.200q", out)
			}
			if strings.TrimSpace(errOut) != "lohibot-audit: interrupted" {
				t.Errorf("stderr %q, want just the interrupted line", errOut)
			}
		})
	}
}

// TestInterruptedDuringDNS cancels runs while their lookups wait on a
// resolver that never answers: the cancelled lookups must not come out as
// unverified verdicts of a complete run.
func TestInterruptedDuringDNS(t *testing.T) {
	silent := serveDNS(t, dns.HandlerFunc(func(dns.ResponseWriter, *dns.Msg) {}))
	log := filepath.Join("..", "testdata", "logs", "combined.log")
	tests := []struct {
		name string
		args []string
	}{
		{"logs", []string{"logs", "--format", "json", log}},
		{"verify", []string{"verify", "--format", "json", "203.0.113.9", "198.51.100.4"}},
		{"emit", []string{"emit", "nftables", log}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append(tc.args, "--resolver", silent, "--dns-timeout", "20s", "--dns-retries", "0", "--no-cache",
				"--ip-list", identityWriteFile(t, "ips.json", `["79.139.58.98"]`))
			code, out, errOut := runCancelled(t, strings.NewReader(""), 500*time.Millisecond, args...)
			if code != ExitInterrupted {
				t.Errorf("exit %d, want %d; stderr: %q", code, ExitInterrupted, errOut)
			}
			if out != "" {
				t.Errorf("an interrupted run printed results: %.300q", out)
			}
			if !strings.HasSuffix(errOut, "lohibot-audit: interrupted\n") {
				t.Errorf("stderr %q, want it to end with the interrupted line", errOut)
			}
		})
	}
}
