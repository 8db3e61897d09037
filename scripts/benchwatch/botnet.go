//go:build linux

package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/nftables"
	"github.com/miekg/dns"
)

// The botnet case: the table's IPv4 sets already hold prefill addresses
// (a week of a botnet, say), then new spoofers come at rate a second for a
// while, each with one claimed request, and among them a genuine crawler
// address now and then (PTR and A records that confirm it). It measures
// the time from each spoofer's line being written to its element being in
// the kernel (read from netlink's element notifications, as they are
// committed), the blocking rate held, the time from a genuine address's
// line to its verdict event, and the CPU watch takes, user and system.

// genuineAddr is the i-th genuine crawler address.
func genuineAddr(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{79, 140, byte(i >> 8), byte(i)})
}

// genuineName is the host name of a genuine crawler address.
func genuineName(a netip.Addr) string {
	return "crawl-" + strings.ReplaceAll(a.String(), ".", "-") + ".bot.lohisoft.com."
}

// prefillAddr is the i-th address the sets hold before the run: every
// other address from 1.0.0.0, so that no two merge into an interval.
func prefillAddr(i int) netip.Addr {
	n := uint32(1<<24 + 2*i)
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

// server answers at once: the root zone's NS (the resolver's sanity
// check), PTR and A queries for the genuine addresses (79.140.0.0/16), and
// NXDOMAIN for every other name, so that every other claimant is a
// spoofer, judged as fast as DNS allows.
func server() (string, func(), error) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		if len(r.Question) != 1 {
			m.SetRcode(r, dns.RcodeFormatError)
			w.WriteMsg(m)
			return
		}
		q := r.Question[0]
		name := strings.ToLower(q.Name)
		switch {
		case name == "." && q.Qtype == dns.TypeNS:
			m.Answer = append(m.Answer, &dns.NS{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: 86400}, Ns: "a.root-servers.net."})
		case q.Qtype == dns.TypePTR && strings.HasSuffix(name, ".140.79.in-addr.arpa."):
			f := strings.Split(name, ".")
			a, err := netip.ParseAddr(f[3] + "." + f[2] + "." + f[1] + "." + f[0])
			if err != nil {
				m.SetRcode(r, dns.RcodeNameError)
				break
			}
			m.Answer = append(m.Answer, &dns.PTR{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypePTR, Class: dns.ClassINET, Ttl: 3600}, Ptr: genuineName(a)})
		case strings.HasPrefix(name, "crawl-79-140-") && strings.HasSuffix(name, ".bot.lohisoft.com."):
			s := strings.TrimSuffix(strings.TrimPrefix(name, "crawl-"), ".bot.lohisoft.com.")
			a, err := netip.ParseAddr(strings.ReplaceAll(s, "-", "."))
			if err != nil {
				m.SetRcode(r, dns.RcodeNameError)
				break
			}
			if q.Qtype == dns.TypeA {
				m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 3600}, A: a.AsSlice()})
			}
		default:
			m.SetRcode(r, dns.RcodeNameError)
		}
		w.WriteMsg(m)
	})
	s := &dns.Server{PacketConn: pc, Handler: h}
	go s.ActivateAndServe()
	return pc.LocalAddr().String(), func() { s.Shutdown() }, nil
}

// stamps records when each address was first seen somewhere.
type stamps struct {
	mu sync.Mutex
	m  map[netip.Addr]time.Time
	c  chan struct{} // signalled on each new stamp
}

func newStamps() *stamps { return &stamps{m: map[netip.Addr]time.Time{}, c: make(chan struct{}, 1)} }

func (s *stamps) put(a netip.Addr, t time.Time) {
	s.mu.Lock()
	if _, ok := s.m[a]; !ok {
		s.m[a] = t
	}
	s.mu.Unlock()
	select {
	case s.c <- struct{}{}:
	default:
	}
}

func (s *stamps) get(a netip.Addr) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.m[a]
	return t, ok
}

func (s *stamps) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// waitFor waits up to d for a to be stamped.
func (s *stamps) waitFor(a netip.Addr, d time.Duration) bool {
	deadline := time.After(d)
	for {
		if _, ok := s.get(a); ok {
			return true
		}
		select {
		case <-s.c:
		case <-deadline:
			return false
		}
	}
}

// cpuSplit returns the process's user and system CPU so far.
func (p *proc) cpuSplit() (user, sys time.Duration) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	var ut, st int64
	fmt.Sscan(f[11], &ut)
	fmt.Sscan(f[12], &st)
	return time.Duration(ut) * time.Second / 100, time.Duration(st) * time.Second / 100
}

// prefill adds n addresses to every IPv4 set of the table, with one
// nft -f in the namespace (one transaction, as loading emit's file), and
// returns the sets it filled.
func prefill(c *nftables.Conn, ns string, t *nftables.Table, n int) ([]string, error) {
	sets, err := c.GetSets(t)
	if err != nil {
		return nil, err
	}
	var names []string
	var b strings.Builder
	for _, s := range sets {
		if s.KeyType.Name != nftables.TypeIPAddr.Name {
			continue
		}
		names = append(names, s.Name)
		for i := 0; i < n; i++ {
			if i%10000 == 0 {
				if i > 0 {
					b.WriteString(" }\n")
				}
				fmt.Fprintf(&b, "add element inet %s %s { ", t.Name, s.Name)
			} else {
				b.WriteString(", ")
			}
			b.WriteString(prefillAddr(i).String())
		}
		b.WriteString(" }\n")
	}
	cmd := exec.Command("ip", "netns", "exec", ns, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("nft -f: %v: %s", err, out)
	}
	return names, nil
}

// pct returns the q-th quantile of sorted d, the first len(d) of total,
// or -1 when it falls among the total that never came.
func pct(d []time.Duration, total int, q float64) time.Duration {
	i := int(float64(total) * q)
	if i >= total {
		i = total - 1
	}
	if i >= len(d) {
		return -1
	}
	return d[i]
}

func fmtDur(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// runBotnet runs the botnet case.
func runBotnet(bin, ns string, d time.Duration, rate, fill int, profile string) error {
	b, err := newScene(ns)
	if err != nil {
		return err
	}
	defer b.close()
	srv, dir, list, logPath, f := b.srv, b.dir, b.list, b.log, b.f

	nsf, err := os.Open("/run/netns/" + ns)
	if err != nil {
		return err
	}
	defer nsf.Close()
	// A socket per call: a failed dump may leave answers unread.
	mconn, err := nftables.New(nftables.WithNetNSFd(int(nsf.Fd())))
	if err != nil {
		return err
	}
	var extra []string
	if profile != "" {
		extra = []string{"--cpu-profile", profile}
	}
	args := append([]string{"watch", "--nftables", "--nft-netns", "/run/netns/" + ns, "--resolver", srv,
		"--ip-list", list, "--no-cache", "--site", "bench.example", "--verdict-ttl", "15m"}, stateArgs(dir)...)
	args = append(args, extra...)
	cmd := exec.Command(bin, append(args, logPath)...)
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		return err
	}
	p := &proc{cmd: cmd, lines: make(chan string, 1024)}
	go func() {
		s := bufio.NewScanner(stderr)
		for s.Scan() {
			p.lines <- s.Text()
		}
		close(p.lines)
	}()
	stopped := false
	defer func() {
		if !stopped {
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		}
	}()
	// Verdict events, stamped as read.
	verdicts := newStamps()
	judged := newStamps()
	// CDN edges among the spoofers (the built-in lists cover some of
	// 11.0.0.0/8-210.0.0.0/8) are unverified, reason proxy: never
	// blocked, by design. They are left out of the blocking figures.
	spared := newStamps()
	go readVerdicts(stdout, verdicts, judged, spared)

	// The table and its sets exist once Open has run.
	table := &nftables.Table{Family: nftables.TableFamilyINet, Name: "lohibot"}
	start := time.Now()
	for {
		sets, err := mconn.GetSets(table)
		if err == nil && len(sets) >= 2 {
			break
		}
		if time.Since(start) > 30*time.Second {
			return fmt.Errorf("watch never made table inet lohibot")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if fill > 0 {
		t0 := time.Now()
		names, err := prefill(mconn, ns, table, fill)
		if err != nil {
			return err
		}
		fmt.Printf("botnet: %d addresses put in each of %s in %s\n", fill, strings.Join(names, ", "), time.Since(t0).Round(time.Millisecond))
	}

	// Element notifications, stamped as they arrive (from now: the
	// prefill's million are not wanted).
	blocked := newStamps()
	mon, err := newElementMonitor("/run/netns/" + ns)
	if err != nil {
		return fmt.Errorf("element notifications: %w", err)
	}
	var monErr error
	monDone := make(chan struct{})
	go func() {
		defer close(monDone)
		monErr = mon.run(func(a netip.Addr) { blocked.put(a, time.Now()) })
	}()
	defer func() { mon.close(); <-monDone }()

	w := bufio.NewWriter(f)
	warm := netip.MustParseAddr("203.0.113.250")
	start = time.Now()
	for !blocked.waitFor(warm, 100*time.Millisecond) {
		if time.Since(start) > 60*time.Second {
			fmt.Fprintln(os.Stderr, p.summary())
			return fmt.Errorf("the first spoofer was never blocked (monitor: %v; %d verdicts)", monErr, judged.len())
		}
		w.WriteString(line(warm.String(), time.Now(), true))
		w.Flush()
	}

	// The flood: every 10 ms the new spoofers due by then at rate a
	// second, and a new genuine address every 100 ms.
	written := map[netip.Addr]time.Time{}
	var spoofers, genuine []netip.Addr
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	began := time.Now()
	u0, s0 := p.cpuSplit()
	for time.Since(began) < d {
		now := <-tick.C
		el := now.Sub(began)
		for due := int(el.Seconds() * float64(rate)); len(spoofers) < due; {
			a := spoofer(len(spoofers))
			spoofers = append(spoofers, a)
			written[a] = now
			w.WriteString(line(a.String(), now, true))
		}
		if due := int(el / (100 * time.Millisecond)); len(genuine) < due {
			a := genuineAddr(len(genuine))
			genuine = append(genuine, a)
			written[a] = now
			w.WriteString(line(a.String(), now, true))
		}
		w.Flush()
	}
	el := time.Since(began)
	u1, s1 := p.cpuSplit()
	inWindow := blocked.len()

	// Let the backlog drain: until every spoofer is blocked, nothing more
	// is blocked for 15 s, or for 2 minutes at most.
	last, lastN := time.Now(), 0
	for end := time.Now().Add(2 * time.Minute); time.Now().Before(end); {
		n := 0
		for _, a := range spoofers {
			_, ok := blocked.get(a)
			_, edge := spared.get(a)
			if ok || edge {
				n++
			}
		}
		if n == len(spoofers) {
			break
		}
		if n != lastN {
			last, lastN = time.Now(), n
		}
		if time.Since(last) > 15*time.Second {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	drained := time.Since(began)
	u2, s2 := p.cpuSplit()

	var lat []time.Duration
	var lastBlocked time.Time
	blockable := 0
	for _, a := range spoofers {
		if _, edge := spared.get(a); edge {
			continue
		}
		blockable++
		if t, ok := blocked.get(a); ok {
			lat = append(lat, t.Sub(written[a]))
			if t.After(lastBlocked) {
				lastBlocked = t
			}
		}
	}
	slices.Sort(lat)
	var glat []time.Duration
	for _, a := range genuine {
		if t, ok := verdicts.get(a); ok {
			glat = append(glat, t.Sub(written[a]))
		}
	}
	slices.Sort(glat)
	var jlat, blat []time.Duration
	for _, a := range spoofers {
		if t, ok := judged.get(a); ok {
			jlat = append(jlat, t.Sub(written[a]))
			if b, ok := blocked.get(a); ok {
				blat = append(blat, max(0, b.Sub(t)))
			}
		}
	}
	slices.Sort(jlat)
	slices.Sort(blat)

	fmt.Printf("botnet: %d new spoofers written in %s (%.0f/s), %d genuine addresses among them\n",
		len(spoofers), el.Round(time.Millisecond), float64(len(spoofers))/el.Seconds(), len(genuine))
	fmt.Printf("botnet: line written -> element in the kernel set: median %s, p99 %s, max %s; %d of %d blocked (%d within the writing, %s after it began the last)\n",
		fmtDur(pct(lat, blockable, 0.5)), fmtDur(pct(lat, blockable, 0.99)), fmtDur(pct(lat, blockable, 1-1e-9)),
		len(lat), blockable, inWindow-1, lastBlocked.Sub(began).Round(time.Millisecond))
	fmt.Printf("botnet: %d spoofers were CDN edges (unverified, reason proxy: never blocked), left out of the figures above\n", len(spoofers)-blockable)
	fmt.Printf("botnet: blocked %.0f spoofers/s sustained over the %s of writing\n", float64(inWindow-1)/el.Seconds(), el.Round(time.Second))
	fmt.Printf("botnet: line written -> spoofer's verdict event: median %s, p99 %s, max %s (%d events)\n",
		fmtDur(pct(jlat, len(spoofers), 0.5)), fmtDur(pct(jlat, len(spoofers), 0.99)), fmtDur(pct(jlat, len(spoofers), 1-1e-9)), len(jlat))
	fmt.Printf("botnet: spoofer's verdict event -> element in the kernel set: median %s, p99 %s, max %s\n",
		fmtDur(pct(blat, len(blat), 0.5)), fmtDur(pct(blat, len(blat), 0.99)), fmtDur(pct(blat, len(blat), 1-1e-9)))
	fmt.Printf("botnet: line written -> genuine verdict event: median %s, p99 %s, max %s (%d of %d)\n",
		fmtDur(pct(glat, len(genuine), 0.5)), fmtDur(pct(glat, len(genuine), 0.99)), fmtDur(pct(glat, len(genuine), 1-1e-9)), len(glat), len(genuine))
	fmt.Printf("botnet: watch's CPU over the writing: user %s + system %s = %.0f%% of one core (%s drained after %s)\n",
		(u1 - u0).Round(10*time.Millisecond), (s1 - s0).Round(10*time.Millisecond), 100*(u1-u0+s1-s0).Seconds()/el.Seconds(),
		map[bool]string{true: "all", false: "not all"}[len(lat) == blockable], drained.Round(time.Second))
	if n := len(jlat); n > 0 {
		// Everything watch did from the first line of the flood until
		// the backlog drained, over the spoofers judged: what one costs.
		cpu := u2 - u0 + s2 - s0
		per := cpu / time.Duration(n)
		fmt.Printf("botnet: watch's CPU until drained: user %s + system %s over %d spoofers judged = %s a spoofer (%.0f spoofers/s per core)\n",
			(u2 - u0).Round(10*time.Millisecond), (s2 - s0).Round(10*time.Millisecond), n, per.Round(100*time.Nanosecond), float64(time.Second)/float64(per))
	}
	fmt.Printf("botnet: %s\nbotnet: rss %s\n", p.summary(), p.rss())
	if s := stateFile(dir); s != "" {
		fmt.Printf("botnet: state file %s\n", s)
	}
	for {
		select {
		case l := <-p.lines:
			if !strings.Contains(l, "watch: ") {
				fmt.Println("botnet: watch said:", l)
			}
			continue
		default:
		}
		break
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	stopped = true
	mon.close()
	<-monDone
	if monErr != nil {
		fmt.Printf("botnet: the element notifications failed (%v): blocked counts may be low\n", monErr)
	}
	return nil
}

// readVerdicts stamps the verdict events of genuine addresses in genuine,
// and of the others in other; those of proxies (CDN edges) in spared too.
func readVerdicts(r io.Reader, genuine, other, spared *stamps) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		l := s.Text()
		now := time.Now()
		ip := field(l, `"ip":"`)
		a, err := netip.ParseAddr(ip)
		if err != nil || !strings.Contains(l, `"event":"verdict"`) {
			continue
		}
		if field(l, `"verdict":"`) == "genuine" {
			genuine.put(a, now)
		} else {
			other.put(a, now)
		}
		if field(l, `"reason":"`) == "proxy" {
			spared.put(a, now)
		}
	}
}

// field returns the string value after key in a JSON line.
func field(l, key string) string {
	i := strings.Index(l, key)
	if i < 0 {
		return ""
	}
	v := l[i+len(key):]
	if j := strings.IndexByte(v, '"'); j >= 0 {
		return v[:j]
	}
	return ""
}
