package cmd

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// TestSignalsFromTheStart signals real runs of every command that waits
// on its input (logs, emit, verify, robots check, watch: each reads a
// stdin that never ends) with SIGINT or SIGTERM 0 to 50 ms after the
// program was started, many times: the moments when a signal used to be
// lost. Every run must end, and none may be still running after 10 s
// (a hang, not a margin: a run that honours the signal ends within about
// a second). A run ends with the command's exit code for an interrupted
// run (130; watch's is 0), or, when the signal came before the Go runtime
// could catch anything, killed by the signal itself: both honour it, and
// the test counts each.
func TestSignalsFromTheStart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the program 60 times")
	}
	bin := auditBinary(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 21))
	list := testutil.TempFile(t, "ips.json", `["79.139.58.98"]`)
	commands := []struct {
		name string
		args []string
		code int // the exit code of an interrupted run
	}{
		{"logs", []string{"logs", "--offline", "--no-cache", "--ip-list", list, "--format", "json", "-"}, fail.ExitInterrupted},
		{"emit", []string{"emit", "nftables", "--offline", "--no-cache", "--ip-list", list, "-"}, fail.ExitInterrupted},
		{"verify", []string{"verify", "--offline", "--no-cache", "--ip-list", list, "--format", "json", "-"}, fail.ExitInterrupted},
		{"robots-check", []string{"robots", "check", "-"}, fail.ExitInterrupted},
		{"watch", []string{"watch", "--offline", "--no-cache", "--ip-list", list, "-"}, 0},
	}
	const runs = 12
	const bound = 10 * time.Second
	counts := map[string]int{}
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			for run := range runs {
				sig := []os.Signal{syscall.SIGINT, syscall.SIGTERM}[r.IntN(2)]
				delay := time.Duration(r.IntN(51)) * time.Millisecond
				what := fmt.Sprintf("run %d, %v after %s", run, sig, delay)
				pr, pw, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(bin, c.args...)
				cmd.Env = binaryEnv(t)
				cmd.Stdin = pr
				var stdout, stderr syncBuffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				pr.Close() // the child has its copy; pw stays open: stdin never ends
				exited := make(chan error, 1)
				go func() { exited <- cmd.Wait() }()
				time.Sleep(delay) // the moment, not a margin
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				select {
				case err = <-exited:
				case <-time.After(bound):
					cmd.Process.Kill()
					<-exited
					pw.Close()
					t.Fatalf("%s: still running %s after the signal; stderr:\n%s", what, bound, stderr.String())
				}
				pw.Close()
				var ee *exec.ExitError
				code := 0
				if errors.As(err, &ee) {
					code = ee.ExitCode()
					if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
						if ws.Signal() != sig {
							t.Errorf("%s: killed by %v", what, ws.Signal())
						}
						counts["killed by the signal before the runtime started"]++
						continue
					}
				} else if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if code != c.code {
					t.Errorf("%s: exit %d, want %d; stderr:\n%s", what, code, c.code, stderr.String())
					continue
				}
				counts[fmt.Sprintf("exit %d", code)]++
				if c.code == fail.ExitInterrupted {
					if out := stdout.String(); out != "" {
						t.Errorf("%s: printed after the signal:\n%.300s", what, out)
					}
					if e := stderr.String(); !strings.Contains(e, "lohibot-audit: interrupted") {
						t.Errorf("%s: stderr does not say it was interrupted:\n%s", what, e)
					}
				}
			}
		})
	}
	t.Logf("every signal honoured: %v", counts)
}
