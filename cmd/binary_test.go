package cmd

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// The tests in this file and a few others run the real program: signals,
// /dev/full and mount namespaces are things of processes.

var (
	binaryOnce sync.Once
	binaryDir  string
	binaryPath string
	binaryErr  error
)

func TestMain(m *testing.M) {
	// A watch of these tests keeps a state only where it is told to.
	defaultStateDir = ""
	code := m.Run()
	if binaryDir != "" {
		os.RemoveAll(binaryDir)
	}
	os.Exit(code)
}

// auditBinary builds the program once per test run and returns its path.
func auditBinary(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		if binaryDir, binaryErr = os.MkdirTemp("", "lohibot-audit-test-"); binaryErr != nil {
			return
		}
		binaryPath = filepath.Join(binaryDir, "lohibot-audit")
		cmd := exec.Command(goTool, "build", "-o", binaryPath, "./lohibot-audit")
		if out, err := cmd.CombinedOutput(); err != nil {
			binaryErr = errors.New(err.Error() + ": " + string(out))
		}
	})
	if binaryErr != nil {
		t.Fatalf("cannot build the program: %v", binaryErr)
	}
	return binaryPath
}

// binaryEnv is a clean environment for the program: its own HOME and XDG
// directories (no user config, no shared cache), no CI.
func binaryEnv(t *testing.T) []string {
	home := t.TempDir()
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CACHE_HOME=" + filepath.Join(home, "cache"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"STATE_DIRECTORY=" + filepath.Join(home, "state"),
		"LC_ALL=C",
	}
}

// binaryRun is the outcome of one run of the program.
type binaryRun struct {
	code           int
	stdout, stderr string
}

// runBinary runs the program with args, stdout to out when it is not nil
// (else captured), and fails the test when it has not ended after a
// minute (a hang, not a slow machine).
func runBinary(t *testing.T, env []string, out *os.File, args ...string) binaryRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, auditBinary(t), args...)
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(nil)
	var stdout, stderr bytes.Buffer
	if out != nil {
		cmd.Stdout = out
	} else {
		cmd.Stdout = &stdout
	}
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%q did not end within a minute; stderr:\n%s", args, stderr.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return binaryRun{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// devFull opens /dev/full, where every write fails with ENOSPC.
func devFull(t *testing.T) *os.File {
	t.Helper()
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		testutil.Missing(t, "cannot open /dev/full: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
