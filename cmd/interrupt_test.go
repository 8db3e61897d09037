package cmd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// The tests here interrupt runs in memory at known events: a pipe read, a
// DNS query, the start of a phase. None waits a fixed time; the only
// timeout detects a hang.

// hangTimeout is how long a cancelled run may take before the test calls
// it a hang: far beyond any slow machine, far below CI's patience.
const hangTimeout = 20 * time.Second

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

// runCancelled runs args with stdin; arm gets the run's cancel func and
// its environment before the run starts, and cancels it at the event it
// chooses. It fails the test when Run has not returned within hangTimeout
// of the cancel.
func runCancelled(t *testing.T, stdin io.Reader, arm func(cancel context.CancelFunc, env *Env), args ...string) (int, string, string) {
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
	arm(cancel, env)
	done := make(chan int, 1)
	go func() { done <- Run(ctx, env, args) }()
	select {
	case code := <-done:
		return code, out.String(), errb.String()
	case <-ctx.Done():
	}
	select {
	case code := <-done:
		return code, out.String(), errb.String()
	case <-time.After(hangTimeout):
		t.Fatalf("Run did not return within %s of the cancel (a hang); stderr so far: %q", hangTimeout, errb.String())
		return 0, "", ""
	}
}

// assertInterrupted checks the outcome of an interrupted run: exit 130,
// no output, and the interrupted line last on stderr.
func assertInterrupted(t *testing.T, code int, out, errOut string) {
	t.Helper()
	if code != fail.ExitInterrupted {
		t.Errorf("exit %d, want %d; stderr: %q", code, fail.ExitInterrupted, errOut)
	}
	if out != "" {
		t.Errorf("an interrupted run printed: %.300q", out)
	}
	if !strings.HasSuffix(errOut, "lohibot-audit: interrupted\n") {
		t.Errorf("stderr %q, want it to end with the interrupted line", errOut)
	}
}

// readSignal is a reader that says (once) when its first Read is under
// way.
type readSignal struct {
	r       io.Reader
	once    sync.Once
	reading chan struct{}
}

func (s *readSignal) Read(p []byte) (int, error) {
	s.once.Do(func() { close(s.reading) })
	return s.r.Read(p)
}

// TestLogsInterruptedWhileReading cancels a run reading a pipe that never
// ends (Ctrl-C on `tail -f | logs -`): while lines keep coming, and while
// the pipe is silent and the read waits.
func TestLogsInterruptedWhileReading(t *testing.T) {
	t.Run("lines keep coming", func(t *testing.T) {
		pr, pw := io.Pipe()
		t.Cleanup(func() { pw.CloseWithError(errors.New("test over")) })
		line := []byte(`203.0.113.5 - - [01/Dec/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 512 "-" "Mozilla/5.0 (X11; Linux x86_64)"` + "\n")
		chunk := bytes.Repeat(line, 200)
		code, out, errOut := runCancelled(t, pr, func(cancel context.CancelFunc, _ *Env) {
			go func() {
				// A pipe write returns once the reader took it: after
				// 50 chunks the run is surely reading.
				for i := 0; ; i++ {
					if i == 50 {
						cancel()
					}
					if _, err := pw.Write(chunk); err != nil {
						return
					}
				}
			}()
		}, "logs", "--offline", "--no-cache", "--format", "json", "-")
		assertInterrupted(t, code, out, errOut)
	})
	t.Run("silent pipe", func(t *testing.T) {
		pr, pw := io.Pipe()
		t.Cleanup(func() { pw.CloseWithError(errors.New("test over")) })
		stdin := &readSignal{r: pr, reading: make(chan struct{})}
		code, out, errOut := runCancelled(t, stdin, func(cancel context.CancelFunc, _ *Env) {
			go func() {
				<-stdin.reading
				cancel()
			}()
		}, "logs", "--offline", "--no-cache", "--format", "json", "-")
		assertInterrupted(t, code, out, errOut)
	})
}

// TestInterruptedDuringDNS cancels runs as their first lookup reaches a
// resolver that never answers: the cancelled lookups must not come out as
// unverified verdicts of a complete run.
func TestInterruptedDuringDNS(t *testing.T) {
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
			asked := make(chan struct{}, 1)
			silent := serveDNS(t, dns.HandlerFunc(func(dns.ResponseWriter, *dns.Msg) {
				select {
				case asked <- struct{}{}:
				default:
				}
			}))
			args := append(tc.args, "--resolver", silent, "--dns-timeout", "50s", "--dns-retries", "0", "--no-cache",
				"--ip-list", testutil.TempFile(t, "ips.json", `["79.139.58.98"]`))
			code, out, errOut := runCancelled(t, strings.NewReader(""), func(cancel context.CancelFunc, _ *Env) {
				go func() {
					<-asked
					cancel()
				}()
			}, args...)
			assertInterrupted(t, code, out, errOut)
		})
	}
}

// TestInterruptedInEveryPhase cancels logs, emit and verify as they enter
// each phase. In the conduct and rules phases the work itself is held up
// until the test ends, so the run can only return by leaving it behind.
func TestInterruptedInEveryPhase(t *testing.T) {
	log := filepath.Join("..", "testdata", "sample", "access.log")
	robots := filepath.Join("..", "testdata", "sample", "robots.txt")
	list := testutil.TempFile(t, "ips.json", `["79.139.58.98", "79.139.58.121"]`)
	common := []string{"--offline", "--no-cache", "--ip-list", list}
	tests := []struct {
		name   string
		cmd    []string
		phases []string
		output bool // -o FILE
	}{
		{"logs json", []string{"logs", "--format", "json", "--robots", robots, log}, []string{phaseRobots, phaseIPList, phaseRead, phaseDNS, phaseConduct, phaseWrite}, false},
		{"logs table", []string{"logs", "--format", "table", log}, []string{phaseConduct, phaseWrite}, false},
		{"emit nftables", []string{"emit", "nftables", log}, []string{phaseIPList, phaseRead, phaseDNS, phaseConduct, phaseRules, phaseWrite}, false},
		{"emit modsecurity -o", []string{"emit", "modsecurity", log}, []string{phaseRules, phaseWrite}, true},
		{"verify", []string{"verify", "--format", "json", "79.139.58.98", "203.0.113.7"}, []string{phaseIPList, phaseDNS, phaseWrite}, false},
		{"emit cloudflare --report -o", []string{"emit", "cloudflare", "--report", emitReportFile(t)}, []string{phaseIPList, phaseRules, phaseWrite}, true},
	}
	for _, tc := range tests {
		for _, phase := range tc.phases {
			t.Run(tc.name+"/"+phase, func(t *testing.T) {
				dir := t.TempDir()
				args := append(append([]string{}, tc.cmd...), common...)
				if tc.output {
					args = append(args, "-o", filepath.Join(dir, "rules.conf"))
				}
				release := make(chan struct{})
				t.Cleanup(func() { close(release) })
				seen := map[string]bool{}
				var mu sync.Mutex
				code, out, errOut := runCancelled(t, strings.NewReader(""), func(cancel context.CancelFunc, env *Env) {
					env.onPhase = func(p string) {
						mu.Lock()
						seen[p] = true
						mu.Unlock()
						if p != phase {
							return
						}
						cancel()
						if p == phaseConduct || p == phaseRules {
							<-release // the work goes on as long as the test
						}
					}
				}, args...)
				assertInterrupted(t, code, out, errOut)
				mu.Lock()
				defer mu.Unlock()
				if !seen[phase] {
					t.Errorf("the run never entered phase %s (saw %v)", phase, seen)
				}
				if entries, _ := os.ReadDir(dir); len(entries) != 0 {
					t.Errorf("an interrupted emit -o left %v", entries)
				}
			})
		}
	}
}

// TestInterruptedReadingOtherInputs cancels commands that read a whole
// input from a pipe that never ends: robots.txt and an earlier report.
func TestInterruptedReadingOtherInputs(t *testing.T) {
	for _, args := range [][]string{
		{"robots", "test", "-", "/"},
		{"robots", "check", "-"},
		{"emit", "nftables", "--offline", "--no-cache", "--report", "-"},
		{"logs", "--offline", "--no-cache", "--robots", "-", filepath.Join("..", "testdata", "sample", "access.log")},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			pr, pw := io.Pipe()
			t.Cleanup(func() { pw.CloseWithError(errors.New("test over")) })
			go pw.Write([]byte("User-agent: *\n")) // a start, and no end
			stdin := &readSignal{r: pr, reading: make(chan struct{})}
			code, out, errOut := runCancelled(t, stdin, func(cancel context.CancelFunc, _ *Env) {
				go func() {
					<-stdin.reading
					cancel()
				}()
			}, args...)
			assertInterrupted(t, code, out, errOut)
		})
	}
}
