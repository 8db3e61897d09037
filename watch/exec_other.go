//go:build !unix

package watch

import (
	"os/exec"
	"syscall"
)

// ownGroup does nothing: there are no Unix process groups here.
func ownGroup(*exec.Cmd) {}

// signalGroup kills the command itself at SIGKILL (Windows has no other
// signal to send, and no group to send it to); its children are left.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process != nil && sig == syscall.SIGKILL {
		cmd.Process.Kill()
	}
}
