//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package verify

// dnsCanDrain says idle sockets can be emptied without waiting; here they
// cannot, so a socket serves one query and is closed.
const dnsCanDrain = false

func dnsDrain(*dnsSocket) (int, bool) { return 0, false }

func dnsDrainFunc(*dnsSocket) func(fd uintptr) bool { return nil }
