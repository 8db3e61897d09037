//go:build linux

package watchstate

import (
	"net"
	"os"
	"syscall"
)

// peerAllowed says whether the process at the other end of c may ask:
// root, or the user the watch runs as. The socket is 0600 in a 0700
// directory already; this holds too when the directory given as
// --state-dir is open to others, and for a connection made in the moment
// before the socket's mode was set.
func peerAllowed(c net.Conn) bool {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil || cerr != nil || cred == nil {
		return false
	}
	return cred.Uid == 0 || int(cred.Uid) == os.Geteuid()
}
