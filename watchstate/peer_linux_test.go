//go:build linux

package watchstate

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// A process of another user that reaches the socket (a --state-dir open
// to others, a socket whose mode was changed) is refused before its
// request is read.
func TestStrangerRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		testutil.Missing(t, "connecting as another user needs root")
	}
	dir, err := os.MkdirTemp("", "watchstate-peer")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	h := &handler{}
	serve(t, dir, h)
	if err := os.Chmod(SocketPath(dir), 0o666); err != nil {
		t.Fatal(err)
	}
	ask := func(uid int, req string) string {
		got := make(chan string, 1)
		go func() {
			// The thread changes user for this connection only, and is
			// never given back: it ends with the goroutine.
			runtime.LockOSThread()
			if uid != 0 {
				if _, _, e := syscall.RawSyscall(syscall.SYS_SETRESUID, ^uintptr(0), uintptr(uid), ^uintptr(0)); e != 0 {
					got <- "setresuid: " + e.Error()
					return
				}
			}
			c, err := net.Dial("unix", filepath.Clean(SocketPath(dir)))
			if err != nil {
				got <- "dial: " + err.Error()
				return
			}
			defer c.Close()
			c.Write([]byte(req + "\n"))
			buf := make([]byte, 4096)
			n, _ := c.Read(buf)
			got <- string(buf[:n])
		}()
		return <-got
	}
	if out := ask(65534, `{"op":"unblock","addrs":["192.0.2.7"],"ttl":60}`); !strings.Contains(out, "refused") || strings.Contains(out, "unblocked") {
		t.Errorf("uid 65534 got %q, want a refusal", out)
	}
	if len(h.asked) != 0 {
		t.Errorf("the handler was asked %d times for a stranger", len(h.asked))
	}
	if out := ask(0, `{"op":"status"}`); !strings.Contains(out, `"status"`) {
		t.Errorf("root got %q, want the status", out)
	}
}
