package watchstate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"
)

// FuzzDecode: a state file is read without panicking whatever it holds,
// and what it keeps writes and reads back the same.
func FuzzDecode(f *testing.F) {
	var b bytes.Buffer
	Encode(&b, sample())
	f.Add(b.String())
	n := now.Unix()
	f.Add(withRecords(fmt.Sprintf(`{"block":{"ip":"2001:db8::1","crawler":"c","target":"crowdsec","prefix":"2001:db8::/64","at":%d,"until":%d}}`, n-10, n+10)))
	f.Add(withRecords(`{"verdict":{"ip":"1.2.3.4","crawler":"\u0000","verdict":"spoofed","judged":1,"expires":2}}`))
	f.Add(withRecords(`{"status":{"pid":1,"files":[{"name":"x"}]}}`))
	f.Add(`{"format":"lohibot-audit watch state","version":1}` + "\n")
	f.Fuzz(func(t *testing.T, data string) {
		l, err := Decode(bytes.NewReader([]byte(data)), now)
		if err != nil {
			if l != nil {
				t.Fatalf("a state with an error: %v", err)
			}
			return
		}
		for _, v := range l.Verdicts {
			if !v.Addr.IsValid() || v.Addr.Zone() != "" || v.Addr.Is4In6() || !v.Expires.After(now) {
				t.Fatalf("kept %+v", v)
			}
		}
		for _, x := range l.Blocks {
			if !x.Addr.IsValid() || x.Addr.Is4In6() || (x.Prefix.IsValid() && !x.Prefix.Contains(x.Addr)) {
				t.Fatalf("kept %+v", x)
			}
		}
		var again bytes.Buffer
		if err := Encode(&again, l.State); err != nil {
			t.Fatal(err)
		}
		l2, err := Decode(&again, now)
		if err != nil {
			t.Fatalf("what was kept does not read back: %v", err)
		}
		if len(l2.Verdicts) != len(l.Verdicts) || len(l2.Blocks) != len(l.Blocks) || len(l2.Holds) != len(l.Holds) || l2.Skipped.Total() != 0 {
			t.Fatalf("read back %d/%d/%d (%+v), want %d/%d/%d", len(l2.Verdicts), len(l2.Blocks), len(l2.Holds), l2.Skipped, len(l.Verdicts), len(l.Blocks), len(l.Holds))
		}
	})
}

// fuzzHandler checks what reaches a watch through the control socket.
type fuzzHandler struct {
	bad chan string
}

func (h *fuzzHandler) Status() Status { return Status{PID: 1} }

func (h *fuzzHandler) Unblock(_ context.Context, addrs []netip.Addr, ttl time.Duration) []Unblocked {
	if ttl <= 0 || ttl > maxTTL {
		h.bad <- fmt.Sprintf("ttl %v", ttl)
	}
	out := make([]Unblocked, len(addrs))
	for i, a := range addrs {
		if !a.IsValid() || a.Zone() != "" || a.Is4In6() || a.IsUnspecified() {
			h.bad <- fmt.Sprintf("address %v", a)
		}
		out[i].Addr = a
	}
	return out
}

// FuzzRequest: whatever a local process writes to the control socket, the
// watch answers one JSON line and goes on, and only valid addresses and
// holds within their bounds reach it.
func FuzzRequest(f *testing.F) {
	f.Add(`{"op":"status"}`)
	f.Add(`{"op":"unblock","addrs":["192.0.2.7","::ffff:198.51.100.1"],"ttl":3600}`)
	f.Add(`{"op":"unblock","addrs":["fe80::1%eth0","0.0.0.0","10.0.0.0/8"],"ttl":-1}`)
	f.Add(`{"op":"unblock","addrs":["192.0.2.7"],"ttl":99999999999999}`)
	f.Add("\x00\xff{")
	dir, err := os.MkdirTemp("", "watchstate-fuzz")
	if err != nil {
		f.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ln, err := Listen(dir)
	if err != nil {
		f.Fatal(err)
	}
	h := &fuzzHandler{bad: make(chan string, 100)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { Serve(ctx, ln, h); close(done) }()
	defer func() { cancel(); <-done }()
	f.Fuzz(func(t *testing.T, req string) {
		if strings.Contains(req, "\n") {
			req = req[:strings.IndexByte(req, '\n')]
		}
		c, err := net.Dial("unix", SocketPath(dir))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte(req + "\n")); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(c).ReadBytes('\n')
		if err != nil {
			t.Fatalf("no answer to %q: %v", req, err)
		}
		var resp Response
		if err := json.Unmarshal(line, &resp); err != nil {
			t.Fatalf("answer %q does not parse: %v", line, err)
		}
		select {
		case b := <-h.bad:
			t.Fatalf("%q reached the watch with %s", req, b)
		default:
		}
	})
}
