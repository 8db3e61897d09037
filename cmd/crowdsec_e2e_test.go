package cmd

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/crowdsectest"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
	"golang.org/x/sys/unix"
)

// The fleet end to end: watch --crowdsec pushes to a real Local API, and
// Debian's crowdsec-firewall-bouncer, in nftables mode in a network
// namespace of its own, pulls the decisions into that namespace's kernel
// sets, as every server of a fleet would. The bouncer reaches the Local
// API, which listens on the test's loopback, through a port on the
// namespace's loopback that the test forwards.

// crowdSecNetNS makes a named network namespace with its loopback up,
// removed when the test ends. Without root, ip or nft it fails when CI is
// set and skips otherwise.
func crowdSecNetNS(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		testutil.Missing(t, "the CrowdSec bouncer test needs root to make a network namespace")
	}
	ip := testutil.NeedTool(t, ".ci/install-crowdsec", "ip")
	testutil.NeedTool(t, ".ci/install-crowdsec", "nft")
	name := fmt.Sprintf("h-crowdsec-%d", os.Getpid())
	if out, err := exec.Command(ip, "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", name, err, out)
	}
	t.Cleanup(func() { exec.Command(ip, "netns", "del", name).Run() })
	if out, err := exec.Command(ip, "netns", "exec", name, ip, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("lo up in %s: %v: %s", name, err, out)
	}
	return name
}

// netnsForward listens on the loopback of the namespace ns and forwards
// every connection to addr, dialled from the test's own namespace; it
// returns the address it listens on, inside ns.
func netnsForward(t *testing.T, ns, addr string) string {
	t.Helper()
	f, err := os.Open("/run/netns/" + ns)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type result struct {
		ln  net.Listener
		err error
	}
	ch := make(chan result)
	go func() {
		// The thread stays locked: it ends with this goroutine instead of
		// going back to the pool in the other namespace. The socket made
		// here stays in it.
		runtime.LockOSThread()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{err: fmt.Errorf("setns: %w", err)}
			return
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		ch <- result{ln, err}
	}()
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		r.ln.Close()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := r.ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				up, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				defer up.Close()
				go func() { io.Copy(up, c); up.(*net.TCPConn).CloseWrite() }()
				io.Copy(c, up)
			})
		}
	})
	return r.ln.Addr().String()
}

// bouncer is crowdsec-firewall-bouncer running in a namespace.
type bouncer struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

func (b *bouncer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.out.Write(p)
}

func (b *bouncer) log() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.out.String()
}

// startBouncer runs crowdsec-firewall-bouncer in nftables mode in ns,
// pulling from the Local API at lapi with key, every 200 ms.
func startBouncer(t *testing.T, ns, lapi, key string) *bouncer {
	t.Helper()
	bin := testutil.NeedTool(t, ".ci/install-crowdsec", "crowdsec-firewall-bouncer")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bouncer.yaml")
	testutil.WriteFile(t, cfg, fmt.Sprintf(`mode: nftables
pid_dir: %s/
update_frequency: 200ms
daemonize: false
log_mode: stdout
log_level: info
api_url: http://%s/
api_key: %s
disable_ipv6: false
deny_action: DROP
deny_log: false
supported_decisions_types:
  - ban
blacklists_ipv4: crowdsec-blacklists
blacklists_ipv6: crowdsec6-blacklists
nftables:
  ipv4:
    enabled: true
    set-only: false
    table: crowdsec
    chain: crowdsec-chain
  ipv6:
    enabled: true
    set-only: false
    table: crowdsec6
    chain: crowdsec6-chain
prometheus:
  enabled: false
`, dir, lapi, key))
	b := &bouncer{done: make(chan struct{})}
	b.cmd = exec.Command("ip", "netns", "exec", ns, bin, "-c", cfg)
	b.cmd.Stdout, b.cmd.Stderr = b, b
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("crowdsec-firewall-bouncer: %v", err)
	}
	go func() { b.cmd.Wait(); close(b.done) }()
	t.Cleanup(func() {
		syscall.Kill(-b.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-b.done:
		case <-time.After(watchHang):
			syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
			<-b.done
		}
	})
	return b
}

// kernelSet lists the elements of a set of the namespace's kernel, one
// per line, "" when the set does not exist (yet).
func kernelSet(t *testing.T, ns, family, table, set string) []string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", ns, "nft", "list", "set", family, table, set).CombinedOutput()
	if err != nil {
		return nil
	}
	s := string(out)
	i, j := strings.Index(s, "elements = {"), strings.LastIndex(s, "}")
	if i < 0 {
		return []string{}
	}
	s = s[i+len("elements = {") : j]
	var elems []string
	for _, e := range strings.Split(s, ",") {
		if f := strings.Fields(e); len(f) > 0 && f[0] != "}" {
			elems = append(elems, f[0])
		}
	}
	return elems
}

func count(items []string, s string) int {
	n := 0
	for _, it := range items {
		if it == s {
			n++
		}
	}
	return n
}

// The decision watch --crowdsec pushes reaches a real bouncer and the
// kernel: the spoofers are in the namespace's sets, exactly once, the
// genuine crawler and a private address never.
func TestWatchCrowdSecBouncerKernelSet(t *testing.T) {
	ns := crowdSecNetNS(t)
	l := crowdsectest.Start(t)
	key := l.AddBouncer(t, "e2e-"+ns)
	b := startBouncer(t, ns, netnsForward(t, ns, l.Listen), key)
	waitBouncer := func(cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(watchHang)
		for !cond() {
			select {
			case <-b.done:
				t.Fatalf("the bouncer ended:\n%s", b.log())
			case <-time.After(20 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("waited in vain; the bouncer said:\n%s", b.log())
			}
		}
	}
	// The bouncer has made its tables and pulled once.
	waitBouncer(func() bool { return kernelSet(t, ns, "ip", "crowdsec", "crowdsec-blacklists") != nil })

	srv, list, log := watchFixture(t)
	w := startWatch(t, &Env{}, log, "--resolver", srv, "--ip-list", list, "--crowdsec", "--crowdsec-credentials", l.Credentials, "--ttl", "1h")
	w.write(liveLine("192.0.2.10", claimUA, "/", 0), liveLine("203.0.113.7", claimUA, "/", 1), liveLine("2001:db8:dead::7", claimUA, "/", 2),
		liveLine("10.0.0.7", claimUA, "/", 3), liveLine("203.0.113.7", claimUA, "/", 4))
	waitFor(t, w.done, w.stderr, func() bool { return len(decisionsOf(t, l)) == 3 })
	waitBouncer(func() bool {
		return count(kernelSet(t, ns, "ip", "crowdsec", "crowdsec-blacklists"), "203.0.113.7") == 1 &&
			count(kernelSet(t, ns, "ip6", "crowdsec6", "crowdsec6-blacklists"), "2001:db8:dead::7") == 1
	})
	w.waitVerdict("192.0.2.10", 1)
	w.waitVerdict("10.0.0.7", 1)
	if code := w.stop(); code != 0 {
		t.Fatalf("watch: exit %d; stderr:\n%s", code, w.stderr.String())
	}
	v4 := kernelSet(t, ns, "ip", "crowdsec", "crowdsec-blacklists")
	v6 := kernelSet(t, ns, "ip6", "crowdsec6", "crowdsec6-blacklists")
	if count(v4, "203.0.113.7") != 1 || count(v4, "192.0.2.10") != 0 || count(v4, "10.0.0.7") != 0 || len(v4) != 1 {
		t.Errorf("IPv4 set: %v, want 203.0.113.7 alone", v4)
	}
	// The bouncer's nftables sets hold addresses, not ranges: of the /64
	// decision it takes the first address (see the README).
	if count(v6, "2001:db8:dead::7") != 1 || len(v6) != 2 || count(v6, "2001:db8:dead::") != 1 {
		t.Errorf("IPv6 set: %v, want 2001:db8:dead::7 and 2001:db8:dead:: (the /64's first address)", v6)
	}
	if got := decisionsOf(t, l); strings.Join(got, " ") != "Ip:2001:db8:dead::7 Ip:203.0.113.7 Range:2001:db8:dead::/64" {
		t.Errorf("decisions %v", got)
	}
}
