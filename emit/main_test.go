package emit

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"testing"
	"time"
)

// TestMain runs the test binary as a helper when LOHIBOT_EMIT_HELPER is
// set: the namespace tests re-run it inside a network namespace.
func TestMain(m *testing.M) {
	switch os.Getenv("LOHIBOT_EMIT_HELPER") {
	case "":
		os.Exit(m.Run())
	case "dial":
		os.Exit(dialHelper())
	default:
		fmt.Fprintln(os.Stderr, "unknown LOHIBOT_EMIT_HELPER")
		os.Exit(2)
	}
}

// dialHelper listens on every address and connects to itself from each
// source address in turn, printing "<addr> connected" or "<addr> blocked".
func dialHelper() int {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		fmt.Println("listen:", err)
		return 1
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	for _, src := range []string{"203.0.113.7", "198.51.100.8", "127.0.0.1", "2001:db8:beef::7", "2001:db8:beef::8"} {
		d := net.Dialer{Timeout: 1500 * time.Millisecond, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
		c, err := d.Dial("tcp", net.JoinHostPort(src, strconv.Itoa(port)))
		if err != nil {
			// A dropped SYN shows as a timeout; anything else is a broken
			// setup, not a block.
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				fmt.Printf("%s blocked\n", src)
			} else {
				fmt.Printf("%s error: %v\n", src, err)
			}
			continue
		}
		c.Close()
		fmt.Printf("%s connected\n", src)
	}
	return 0
}
