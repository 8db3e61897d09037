//go:build linux

// Command benchwatch measures `lohibot-audit watch` as it runs: the time
// from a spoofer's line being written to its address being in the kernel's
// nftables set (inside a network namespace, with a prompt loopback DNS
// server), the lines per second it follows while judging, the CPU it
// takes at a steady 2,000 lines/s, and its RSS over time. It needs root.
// Run it through scripts/bench-watch.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
)

func main() {
	bin := flag.String("bin", "", "the lohibot-audit binary")
	ns := flag.String("netns", "", "name of the network namespace (made with ip netns add)")
	spoofers := flag.Int("spoofers", 1000, "spoofers for the latency figure")
	steady := flag.Duration("steady", time.Minute, "how long to write 2,000 lines/s for the CPU figure")
	long := flag.Duration("long", 10*time.Minute, "how long to run for the RSS figure")
	realistic := flag.Duration("realistic", time.Minute, "how long to run the realistic steady case (0: not at all)")
	profile := flag.String("cpuprofile", "", "write a pprof CPU profile of the realistic steady case to `FILE`")
	only := flag.Bool("only-realistic", false, "run the realistic steady case alone")
	botnet := flag.Duration("botnet", 0, "how long to write new spoofers at -rate into sets holding -prefill addresses (0: not at all)")
	rate := flag.Int("rate", 10000, "botnet: new spoofers a second")
	fill := flag.Int("prefill", 1000000, "botnet: addresses each IPv4 set holds before")
	botProfile := flag.String("botnet-cpuprofile", "", "write a pprof CPU profile of the botnet case to `FILE`")
	flag.BoolVar(&keepState, "state", true, "let watch keep its state (in the bench's temporary directory), as it does by default; -state=false runs it with --no-state")
	onlyBotnet := flag.Bool("only-botnet", false, "run the botnet case alone (for a minute unless -botnet says)")
	flag.Parse()
	if *onlyBotnet && *botnet == 0 {
		*botnet = time.Minute
	}
	if *botnet > 0 {
		if err := runBotnet(*bin, *ns, *botnet, *rate, *fill, *botProfile); err != nil {
			fmt.Fprintln(os.Stderr, "benchwatch:", err)
			os.Exit(1)
		}
	}
	if *onlyBotnet {
		return
	}
	if *realistic > 0 {
		if err := runRealistic(*bin, *ns, *realistic, *profile); err != nil {
			fmt.Fprintln(os.Stderr, "benchwatch:", err)
			os.Exit(1)
		}
	}
	if *only {
		return
	}
	if err := run(*bin, *ns, *spoofers, *steady, *long); err != nil {
		fmt.Fprintln(os.Stderr, "benchwatch:", err)
		os.Exit(1)
	}
}

// freshTable deletes the table an earlier case made, so that each case
// starts without it (an address already in a set is not notified again).
func freshTable(ns string) {
	exec.Command("ip", "netns", "exec", ns, "nft", "delete", "table", "inet", "lohibot").Run()
}

func line(addr string, t time.Time, claimed bool) string {
	ua := "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"
	if claimed {
		ua = "Mozilla/5.0 (compatible; " + crawler.DefaultTitle() + "/1.0; +https://lohisoft.com/bot)"
	}
	return fmt.Sprintf("%s - - [%s] \"GET /articles/%d HTTP/1.1\" 200 5120 \"-\" \"%s\"\n", addr, t.UTC().Format("02/Jan/2006:15:04:05 -0700"), t.UnixNano()%100000, ua)
}

// spoofer is the i-th spoofing address: public, outside every range that
// is never blocked.
func spoofer(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(11 + i>>16%200), byte(i >> 8), byte(i), 7})
}

type proc struct {
	cmd    *exec.Cmd
	stderr *bufio.Scanner
	lines  chan string
}

func (p *proc) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100
}

// rss is watch's resident memory now, and its peak so far (VmHWM: what
// /usr/bin/time -v of the bench cannot tell apart from the bench's own).
func (p *proc) rss() string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	now, peak := "?", "?"
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			now = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			peak = strings.TrimSpace(v)
		}
	}
	return now + " (peak " + peak + ")"
}

// stateFile says how large watch's state file is, and when it was last
// written; "" without state.
func stateFile(dir string) string {
	if !keepState {
		return ""
	}
	fi, err := os.Stat(filepath.Join(dir, "state", "watch.state"))
	if err != nil {
		return "none (" + err.Error() + ")"
	}
	return fmt.Sprintf("%.1f MB, written %s ago", float64(fi.Size())/1e6, time.Since(fi.ModTime()).Round(time.Second))
}

// summary asks for a summary line (SIGUSR1) and returns it.
func (p *proc) summary() string {
	p.cmd.Process.Signal(syscall.SIGUSR1)
	for l := range p.lines {
		if strings.Contains(l, "watch: ") {
			return l
		}
	}
	return ""
}

// linesRead returns the lines followed so far.
func (p *proc) linesRead() int64 {
	l := p.summary()
	if i := strings.Index(l, " lines, "); i > 0 {
		f := strings.Fields(l[:i])
		n, _ := strconv.ParseInt(f[len(f)-1], 10, 64)
		return n
	}
	return -1
}

// settle waits until no address waits for its verdict, for a minute at
// most, and returns the last summary line.
func (p *proc) settle() string {
	deadline := time.Now().Add(time.Minute)
	for {
		l := p.summary()
		if strings.Contains(l, " 0 pending") || time.Now().After(deadline) {
			return l
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// scene is what every case starts from: no table left by an earlier
// case, a DNS server, and a temporary directory holding the IP list and
// the log the case writes.
type scene struct {
	srv, dir, list, log string
	f                   *os.File
	stop                func()
}

func newScene(ns string) (*scene, error) {
	freshTable(ns)
	srv, stop, err := server()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "benchwatch")
	if err != nil {
		stop()
		return nil, err
	}
	b := &scene{srv: srv, dir: dir, stop: stop,
		log: filepath.Join(dir, "access.log"), list: filepath.Join(dir, "ips.json")}
	os.WriteFile(b.list, []byte(`{"ips":["79.139.58.98"]}`), 0o644)
	if b.f, err = os.Create(b.log); err != nil {
		os.RemoveAll(dir)
		stop()
		return nil, err
	}
	return b, nil
}

// close undoes newScene.
func (b *scene) close() {
	b.f.Close()
	os.RemoveAll(b.dir)
	b.stop()
}

// startWatch starts watch --nftables on log in the namespace, asking srv,
// with its events in dir, and reads its stderr.
func startWatch(bin, ns, srv, list, log, dir string, extra ...string) (*proc, error) {
	args := append([]string{"watch", "--nftables", "--nft-netns", "/run/netns/" + ns, "--resolver", srv,
		"--ip-list", list, "--no-cache", "--site", "bench.example", "--verdict-ttl", "1m"}, stateArgs(dir)...)
	args = append(args, extra...)
	cmd := exec.Command(bin, append(args, log)...)
	cmd.Stdout, _ = os.Create(filepath.Join(dir, "events.jsonl"))
	pipe, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, lines: make(chan string, 1024)}
	go func() {
		s := bufio.NewScanner(pipe)
		for s.Scan() {
			p.lines <- s.Text()
		}
		close(p.lines)
	}()
	return p, nil
}

// runRealistic measures the CPU of a server's steady day: 2,000 lines/s,
// one in a hundred a claim, nearly all from 40 addresses seen again and
// again (judged once per verdict TTL), and 3 new claimants a minute.
func runRealistic(bin, ns string, d time.Duration, profile string) error {
	b, err := newScene(ns)
	if err != nil {
		return err
	}
	defer b.close()
	srv, dir, list, log, f := b.srv, b.dir, b.list, b.log, b.f
	var extra []string
	if profile != "" {
		extra = []string{"--cpu-profile", profile}
	}
	p, err := startWatch(bin, ns, srv, list, log, dir, extra...)
	if err != nil {
		return err
	}
	stopped := false
	defer func() {
		if !stopped {
			p.cmd.Process.Signal(syscall.SIGTERM)
			p.cmd.Wait()
		}
	}()
	w := bufio.NewWriter(f)
	// Following has begun (and SIGUSR1 is handled) once a claim written
	// has its verdict event.
	start := time.Now()
	for {
		if st, err := os.Stat(filepath.Join(dir, "events.jsonl")); err == nil && st.Size() > 0 {
			break
		}
		if time.Since(start) > 30*time.Second {
			return fmt.Errorf("watch never read its log")
		}
		w.WriteString(line("203.0.113.250", time.Now(), true))
		w.Flush()
		time.Sleep(50 * time.Millisecond)
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	i, fresh := 0, 0
	began := time.Now()
	cpu0 := p.cpu()
	for time.Since(began) < d {
		now := <-tick.C
		for range 20 { // 20 lines every 10 ms
			claimed := i%100 == 0
			addr := "198.51.100.23"
			switch {
			case claimed && i%2000 == 0 && now.Sub(began) >= time.Duration(fresh)*20*time.Second:
				// a new claimant every 20 s
				addr = spoofer(300000 + fresh).String()
				fresh++
			case claimed:
				addr = spoofer(400000 + i/100%40).String()
			}
			w.WriteString(line(addr, now, claimed))
			i++
		}
		w.Flush()
	}
	el := time.Since(began)
	c := p.cpu() - cpu0
	fmt.Printf("cpu at a steady 2,000 lines/s over %s (1%% claims from 40 known addresses, %d new claimants): %s, %.2f%% of one core\n",
		el.Round(time.Second), 40+fresh, c, 100*c.Seconds()/el.Seconds())
	fmt.Printf("after the realistic run: %s\nrss %s\n", p.settle(), p.rss())
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Wait()
	stopped = true
	return nil
}

func run(bin, ns string, spoofers int, steady, long time.Duration) error {
	b, err := newScene(ns)
	if err != nil {
		return err
	}
	defer b.close()
	srv, dir, list, log, f := b.srv, b.dir, b.list, b.log, b.f

	p, err := startWatch(bin, ns, srv, list, log, dir)
	if err != nil {
		return err
	}
	cmd := p.cmd
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()

	// The kernel's element notifications, as it commits them: no
	// polling, and no listing of a large set.
	mon, err := newElementMonitor("/run/netns/" + ns)
	if err != nil {
		return fmt.Errorf("element notifications: %w", err)
	}
	added := make(chan netip.Addr, 1<<16)
	monDone := make(chan struct{})
	go func() {
		defer close(monDone)
		mon.run(func(a netip.Addr) { added <- a })
	}()
	defer func() { mon.close(); <-monDone }()
	seen := map[netip.Addr]bool{}
	// inSet waits up to d for a to be added.
	inSet := func(a netip.Addr, d time.Duration) bool {
		timeout := time.After(d)
		for !seen[a] {
			select {
			case b := <-added:
				seen[b] = true
			case <-timeout:
				return false
			}
		}
		return true
	}
	// Wait until the sets exist and the follower has started (a first
	// spoofer is blocked).
	w := bufio.NewWriter(f)
	start := time.Now()
	warm := netip.MustParseAddr("203.0.113.250")
	for !inSet(warm, 50*time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			return fmt.Errorf("the first spoofer was never blocked")
		}
		w.WriteString(line(warm.String(), time.Now(), true))
		w.Flush()
	}

	// 1. Latency, one spoofer at a time.
	var lat []time.Duration
	for i := range spoofers {
		a := spoofer(i)
		t0 := time.Now()
		w.WriteString(line(a.String(), t0, true))
		w.Flush()
		if !inSet(a, 10*time.Second) {
			{
				for {
					select {
					case l := <-p.lines:
						fmt.Fprintln(os.Stderr, "watch:", l)
						continue
					default:
					}
					break
				}
				ev, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
				evs := strings.Split(strings.TrimSpace(string(ev)), "\n")
				fmt.Fprintln(os.Stderr, len(evs), "events; last:", evs[len(evs)-1])
				return fmt.Errorf("%s not blocked within 10s", a)
			}
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	fmt.Printf("latency, line written to element in the kernel set, %d spoofers: median %s, p99 %s, max %s\n",
		len(lat), lat[len(lat)/2].Round(10*time.Microsecond), lat[len(lat)*99/100].Round(10*time.Microsecond), lat[len(lat)-1].Round(10*time.Microsecond))
	fmt.Printf("rss after the latency run: %s\n", p.rss())

	// 2. Lines per second followed while judging: 1,000,000 lines, one in
	// a hundred a claim from a new spoofer, written at once.
	base := p.linesRead()
	const n = 1_000_000
	t0 := time.Now()
	for i := range n {
		claimed := i%100 == 0
		addr := "198.51.100.23"
		if claimed {
			addr = spoofer(100000 + i/100).String()
		}
		w.WriteString(line(addr, t0, claimed))
	}
	w.Flush()
	written := time.Since(t0)
	for p.linesRead() < base+n {
		time.Sleep(100 * time.Millisecond)
	}
	took := time.Since(t0)
	fmt.Printf("throughput: %d lines (1%% claims by new spoofers) followed in %s (written in %s): %.0f lines/s\n",
		n, took.Round(time.Millisecond), written.Round(time.Millisecond), float64(n)/took.Seconds())

	fmt.Printf("after the throughput run: %s\nrss %s\n", p.settle(), p.rss())

	// 3. CPU and RSS at a steady 2,000 lines/s, one in a hundred a claim
	// by a new spoofer (20 new spoofers a second).
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	i := 0
	began := time.Now()
	cpu0 := p.cpu()
	reportedCPU := false
	marks := []time.Duration{time.Minute, long}
	for ctx.Err() == nil {
		<-tick.C
		now := time.Now()
		for range 20 { // 20 lines every 10 ms
			claimed := i%100 == 0
			addr := "198.51.100.23"
			if claimed {
				addr = spoofer(200000 + i/100).String()
			}
			w.WriteString(line(addr, now, claimed))
			i++
		}
		w.Flush()
		el := time.Since(began)
		if !reportedCPU && el >= steady {
			reportedCPU = true
			c := p.cpu() - cpu0
			fmt.Printf("cpu at 2,000 lines/s over %s: %s, %.2f%% of one core\n", el.Round(time.Second), c, 100*c.Seconds()/el.Seconds())
		}
		if len(marks) > 0 && el >= marks[0] {
			fmt.Printf("rss after %s at 2,000 lines/s (20 new spoofers/s, verdicts kept 1m): %s\n", marks[0], p.rss())
			marks = marks[1:]
		}
	}
	if len(marks) > 0 {
		fmt.Printf("rss at the end (%s): %s\n", time.Since(began).Round(time.Second), p.rss())
	}
	return nil
}

// keepState says whether watch keeps its state (-state).
var keepState = true

// stateArgs are watch's state options: its state in dir (never the
// machine's /var/lib/lohibot-audit, which a later run would restore), or
// none.
func stateArgs(dir string) []string {
	if !keepState {
		return []string{"--no-state"}
	}
	return []string{"--state-dir", filepath.Join(dir, "state")}
}
