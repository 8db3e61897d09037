//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package verify

import "syscall"

// dnsCanDrain says idle sockets can be emptied without waiting, so that
// they may be reused.
const dnsCanDrain = true

// dnsDrain reads and throws away, without waiting, every packet that came
// to s while it was idle, and returns how many there were; ok is false
// when the socket has a pending error (an ICMP error from the resolver,
// say) or cannot be read.
func dnsDrain(s *dnsSocket) (n int, ok bool) {
	s.drained, s.drainOK = 0, true
	err := s.rc.Read(s.drain)
	return s.drained, s.drainOK && err == nil
}

// dnsDrainFunc is the function dnsDrain runs on s's descriptor.
func dnsDrainFunc(s *dnsSocket) func(fd uintptr) bool {
	return func(fd uintptr) bool {
		for {
			_, _, err := syscall.Recvfrom(int(fd), s.buf[:], syscall.MSG_DONTWAIT)
			switch err {
			case nil:
				s.drained++
				continue
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
			default:
				s.drainOK = false
			}
			return true
		}
	}
}
