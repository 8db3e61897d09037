//go:build linux

package main

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// elementMonitor reads nftables' element notifications in a network
// namespace from a netlink socket with a receive buffer large enough for a
// botnet's rate (nft monitor lists every set's elements first, which takes
// minutes with a million of them, and a default socket overflows).
type elementMonitor struct {
	fd     int
	closed atomic.Bool
}

// newElementMonitor opens the socket inside the namespace at nsPath.
func newElementMonitor(nsPath string) (*elementMonitor, error) {
	type result struct {
		fd  int
		err error
	}
	ch := make(chan result)
	go func() {
		// The thread enters the namespace and never leaves the lock: it
		// ends with the goroutine.
		runtime.LockOSThread()
		ns, err := os.Open(nsPath)
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer ns.Close()
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{err: fmt.Errorf("setns: %w", err)}
			return
		}
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER)
		if err != nil {
			ch <- result{err: err}
			return
		}
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 256<<20); err != nil {
			unix.Close(fd)
			ch <- result{err: fmt.Errorf("SO_RCVBUFFORCE: %w", err)}
			return
		}
		// Reads wake up now and then to see whether the monitor is closed.
		tv := unix.NsecToTimeval(int64(200 * time.Millisecond))
		if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
			unix.Close(fd)
			ch <- result{err: err}
			return
		}
		if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: 1 << (unix.NFNLGRP_NFTABLES - 1)}); err != nil {
			unix.Close(fd)
			ch <- result{err: err}
			return
		}
		ch <- result{fd: fd}
	}()
	r := <-ch
	if r.err != nil {
		return nil, r.err
	}
	return &elementMonitor{fd: r.fd}, nil
}

// run calls added with the key of every element added (interval ends
// left out), until close; it returns the error that ended it, nil after
// close.
func (m *elementMonitor) run(added func(netip.Addr)) error {
	buf := make([]byte, 1<<20)
	for {
		n, _, err := unix.Recvfrom(m.fd, buf, 0)
		if m.closed.Load() {
			unix.Close(m.fd)
			return nil
		}
		if err == unix.EAGAIN || err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		for b := buf[:n]; len(b) >= unix.NLMSG_HDRLEN; {
			l := int(binary.NativeEndian.Uint32(b))
			if l < unix.NLMSG_HDRLEN || l > len(b) {
				break
			}
			typ := binary.NativeEndian.Uint16(b[4:])
			if typ == unix.NFNL_SUBSYS_NFTABLES<<8|unix.NFT_MSG_NEWSETELEM && l > unix.NLMSG_HDRLEN+4 {
				for _, list := range attrs(b[unix.NLMSG_HDRLEN+4:l], unix.NFTA_SET_ELEM_LIST_ELEMENTS) {
					for _, el := range attrs(list, unix.NFTA_LIST_ELEM) {
						if f := attrs(el, unix.NFTA_SET_ELEM_FLAGS); len(f) == 1 && len(f[0]) == 4 && binary.BigEndian.Uint32(f[0])&unix.NFT_SET_ELEM_INTERVAL_END != 0 {
							continue
						}
						for _, k := range attrs(el, unix.NFTA_SET_ELEM_KEY) {
							for _, v := range attrs(k, unix.NFTA_DATA_VALUE) {
								if a, ok := netip.AddrFromSlice(v); ok {
									added(a)
								}
							}
						}
					}
				}
			}
			b = b[min(len(b), (l+3)&^3):]
		}
	}
}

// close ends run (within 200 ms), which closes the socket.
func (m *elementMonitor) close() { m.closed.Store(true) }

// attrs returns the payloads of the netlink attributes of type typ in b.
func attrs(b []byte, typ uint16) [][]byte {
	var out [][]byte
	for len(b) >= 4 {
		l := int(binary.NativeEndian.Uint16(b))
		t := binary.NativeEndian.Uint16(b[2:]) & 0x3fff // without NLA_F_NESTED and NLA_F_NET_BYTEORDER
		if l < 4 || l > len(b) {
			break
		}
		if t == typ {
			out = append(out, b[4:l])
		}
		b = b[min(len(b), (l+3)&^3):]
	}
	return out
}
