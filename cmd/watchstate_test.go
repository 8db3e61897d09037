package cmd

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/lohisoft/lohibot-audit/internal/crowdsectest"
	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
	"github.com/lohisoft/lohibot-audit/watchstate"
)

// runWatchIn runs watch with args in the background; the returned func
// stops it (as SIGTERM does) and returns its exit code.
func runWatchIn(t *testing.T, stdout, stderr *syncBuffer, args ...string) (done chan int, stop func() int) {
	t.Helper()
	env := &Env{Stdout: stdout, Stderr: stderr, Now: time.Now, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	done = make(chan int, 1)
	go func() { done <- Run(ctx, env, append([]string{"watch"}, args...)) }()
	stopped := false
	stop = func() int {
		t.Helper()
		cancel()
		if stopped {
			return 0
		}
		stopped = true
		select {
		case code := <-done:
			return code
		case <-time.After(watchHang):
			t.Fatal("watch did not stop")
			return -1
		}
	}
	t.Cleanup(func() { stop() })
	return done, stop
}

// runCmd runs a short command in memory and returns its exit code and
// output.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr strings.Builder
	env := &Env{Stdout: &stdout, Stderr: &stderr, Now: time.Now, Getenv: func(string) string { return "" }}
	code := Run(context.Background(), env, args)
	return code, stdout.String(), stderr.String()
}

// watchStatusOf asks `watch status --format json`.
func watchStatusOf(t *testing.T, dir string) watchstate.Status {
	t.Helper()
	code, out, errs := runCmd(t, "watch", "status", "--state-dir", dir, "--format", "json")
	if code != 0 {
		t.Fatalf("watch status: exit %d: %s", code, errs)
	}
	var s watchstate.Status
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("watch status: %v: %s", err, out)
	}
	return s
}

// The whole life of a watch with a state in the kernel's nftables: it
// blocks a spoofer, answers status and serves metrics promtool accepts;
// stopped and started again after the kernel set was flushed, it blocks
// the spoofer again from its state without asking DNS about anyone it
// judged before; unblock through it takes the address out and holds it;
// stopped, status reads the state, and unblock works on the kernel set
// alone.
func TestWatchStateAcrossRestart(t *testing.T) {
	ns := watchNetNS(t)
	z := dnstest.NewZone(t,
		"10.2.0.192.in-addr.arpa. 300 IN PTR crawler-1.bot.lohisoft.com.",
		"crawler-1.bot.lohisoft.com. 300 IN A 192.0.2.10",
	)
	srv := dnstest.Serve(t, z)
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	list := filepath.Join(dir, "ips.json")
	if err := os.WriteFile(list, []byte(`{"ips":["79.139.58.98"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "access.log")
	if err := os.WriteFile(log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--nftables", "--nft-netns", "/run/netns/" + ns, "--resolver", srv, "--ip-list", list, "--no-cache",
		"--site", "www.example", "--from-start", "--state-dir", state, "--metrics", "127.0.0.1:0", log}
	spoofer, genuine := "203.0.113.7", "192.0.2.10"
	spooferPTR, _ := dns.ReverseAddr(spoofer)
	genuinePTR, _ := dns.ReverseAddr(genuine)

	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	done, stop := runWatchIn(t, stdout, stderr, args...)
	waitFor(t, done, stderr, func() bool { return strings.Contains(stderr.String(), "metrics: serving at") })
	appendLog(t, log, watchLine(genuine, "LohiSoftBot/1.0")+watchLine(spoofer, "Mozilla/5.0 (compatible; LohiSoftBot/1.0)"))
	waitFor(t, done, stderr, func() bool { return strings.Contains(nftSet(t, ns, "spoofed_live_v4"), spoofer) })
	waitFor(t, done, stderr, func() bool { return strings.Count(stdout.String(), `"event":"verdict"`) == 2 })

	s := watchStatusOf(t, state)
	if !s.Running || len(s.Files) != 1 || s.Files[0].Lines != 2 || s.Crawlers[0].Claims != 2 || s.Crawlers[0].Verdicts.Spoofed != 1 ||
		len(s.Blocks) != 1 || s.Blocks[0].Target != "nftables" || s.Blocks[0].InForce != 1 || len(s.DNS.Resolvers) != 1 || s.DNS.Resolvers[0].Queries == 0 {
		t.Errorf("status of the running watch: %+v", s)
	}
	code, text, _ := runCmd(t, "watch", "status", "--state-dir", state, "--format", "text")
	if code != 0 || !strings.Contains(text, "watch: running") || !strings.Contains(text, "nftables  1 address now") {
		t.Errorf("status for people (exit %d):\n%s", code, text)
	}
	scrape := scrapeMetrics(t, stderr.String())
	for _, want := range []string{`lohibot_audit_log_lines_total{file="` + log + `"} 2`, `lohibot_audit_blocks_total{target="nftables"} 1`,
		`lohibot_audit_verdicts_total{crawler="lohisoftbot",verdict="spoofed"} 1`, `lohibot_audit_dns_resolver_up{resolver="` + srv + `"} 1`} {
		if !strings.Contains(scrape, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	checkPromtool(t, scrape)
	if code := stop(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}

	// The kernel set loses everything; the watch starts again.
	if out, err := exec.Command("ip", "netns", "exec", ns, "nft", "flush", "set", "inet", "lohibot", "spoofed_live_v4").CombinedOutput(); err != nil {
		t.Fatalf("nft flush set: %v: %s", err, out)
	}
	asked := z.Count(dns.TypePTR, spooferPTR) + z.Count(dns.TypePTR, genuinePTR)
	stdout2, stderr2 := &syncBuffer{}, &syncBuffer{}
	done2, stop2 := runWatchIn(t, stdout2, stderr2, args...)
	waitFor(t, done2, stderr2, func() bool { return strings.Contains(nftSet(t, ns, "spoofed_live_v4"), spoofer) })
	appendLog(t, log, watchLine(genuine, "LohiSoftBot/1.0")+watchLine(spoofer, "Mozilla/5.0 (compatible; LohiSoftBot/1.0)"))
	waitFor(t, done2, stderr2, func() bool { return watchStatusOf(t, state).Crawlers[0].Claims == 4 })
	if now := z.Count(dns.TypePTR, spooferPTR) + z.Count(dns.TypePTR, genuinePTR); now != asked {
		t.Errorf("judged again after the restart: %d PTR queries, %d before", now, asked)
	}
	if strings.Contains(stdout2.String(), `"event":"verdict"`) {
		t.Errorf("verdicts after the restart:\n%s", stdout2.String())
	}
	if e := stderr2.String(); !strings.Contains(e, "2 verdicts that still stand, 1 blocked address") || !strings.Contains(e, "the sets lost 1 address") {
		t.Errorf("stderr of the second run:\n%s", e)
	}

	// unblock through the running watch.
	code, out, errs := runCmd(t, "unblock", "--state-dir", state, "--ttl", "2h", spoofer)
	if code != 0 || !strings.Contains(out, `"event":"unblock"`) || !strings.Contains(out, `"nftables":["spoofed_live_v4"]`) {
		t.Fatalf("unblock: exit %d, out %s, err %s", code, out, errs)
	}
	if strings.Contains(nftSet(t, ns, "spoofed_live_v4"), spoofer) {
		t.Error("the spoofer is still in the set")
	}
	waitFor(t, done2, stderr2, func() bool { return strings.Contains(stdout2.String(), `"event":"unblock"`) })
	if code := stop2(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr2.String())
	}

	// No watch runs: status from the state, unblock on the kernel alone.
	s = watchStatusOf(t, state)
	if s.Running || s.Held != 1 || s.Files[0].Lines != 4 {
		t.Errorf("status from the state: %+v", s)
	}
	if out, err := exec.Command("ip", "netns", "exec", ns, "nft", "add", "element", "inet", "lohibot", "spoofed_live_v4", "{ 198.51.100.77 }").CombinedOutput(); err != nil {
		t.Fatalf("nft add element: %v: %s", err, out)
	}
	code, out, errs = runCmd(t, "unblock", "--state-dir", state, "198.51.100.77")
	if code != 0 || !strings.Contains(out, `"ip":"198.51.100.77"`) || !strings.Contains(out, `"nftables":["spoofed_live_v4"]`) {
		t.Fatalf("unblock without a watch: exit %d, out %s, err %s", code, out, errs)
	}
	if strings.Contains(nftSet(t, ns, "spoofed_live_v4"), "198.51.100.77") {
		t.Error("198.51.100.77 is still in the set")
	}
	if s := watchStatusOf(t, state); s.Held != 2 {
		t.Errorf("held after the second unblock: %d, want 2", s.Held)
	}
}

func appendLog(t *testing.T, log, s string) {
	t.Helper()
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

var metricsAt = regexp.MustCompile(`metrics: serving at (http://\S+/metrics)`)

// scrapeMetrics fetches the metrics of the watch whose stderr says where.
func scrapeMetrics(t *testing.T, stderr string) string {
	t.Helper()
	m := metricsAt.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no metrics address on stderr:\n%s", stderr)
	}
	resp, err := http.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("scrape: %s, %v", resp.Status, err)
	}
	return string(b)
}

// checkPromtool runs promtool check metrics on a scrape: a test without
// promtool fails in CI and skips elsewhere.
func checkPromtool(t *testing.T, scrape string) {
	t.Helper()
	p := testutil.NeedTool(t, ".ci/install-rule-checkers", "promtool")
	cmd := exec.Command(p, "check", "metrics")
	cmd.Stdin = strings.NewReader(scrape)
	if out, err := cmd.CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// Two watches cannot share a state directory: the second exits 2 at
// start, naming the first.
func TestWatchStateDirInUse(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	log := filepath.Join(dir, "access.log")
	os.WriteFile(log, nil, 0o644)
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	done, _ := runWatchIn(t, stdout, stderr, "--offline", "--state-dir", state, log)
	waitFor(t, done, stderr, func() bool { _, err := os.Stat(watchstate.SocketPath(state)); return err == nil })
	code, _, errs := runCmd(t, "watch", "--offline", "--state-dir", state, log)
	if code != fail.ExitUsage || !strings.Contains(errs, "in use by another watch (pid ") || !strings.Contains(errs, "--state-dir") {
		t.Errorf("second watch: exit %d: %s", code, errs)
	}
	code, _, errs = runCmd(t, "unblock", "--state-dir", state, "example.com")
	if code != fail.ExitUsage || !strings.Contains(errs, "give IP addresses") {
		t.Errorf("unblock example.com: exit %d: %s", code, errs)
	}
	code, _, errs = runCmd(t, "unblock", "--state-dir", state, "--ttl", "400d", "203.0.113.7")
	if code != fail.ExitUsage || errs != "lohibot-audit: error: --ttl \"400d\": give a duration from 1s to 365d, such as 7d, 36h or 1d12h\n" {
		t.Errorf("unblock --ttl 400d: exit %d: %q", code, errs)
	}
}

// unblock ends the CrowdSec decisions watch --crowdsec pushed for an
// address (its /64 too): through the running watch, and, when none runs,
// with the credentials the state names.
func TestUnblockCrowdSec(t *testing.T) {
	l := crowdsectest.Start(t)
	srv, list, log := watchFixture(t)
	state := filepath.Join(t.TempDir(), "state")
	w := startWatch(t, &Env{}, log, "--resolver", srv, "--ip-list", list, "--crowdsec", "--crowdsec-credentials", l.Credentials,
		"--ttl", "1h", "--state-dir", state)
	w.write(liveLine("203.0.113.7", claimUA, "/", 0), liveLine("2001:db8:dead::7", claimUA, "/", 1))
	waitFor(t, w.done, w.stderr, func() bool { return len(decisionsOf(t, l)) == 3 })

	code, out, errs := runCmd(t, "unblock", "--state-dir", state, "2001:db8:dead::7")
	if code != 0 || !strings.Contains(out, `"crowdsec":["2001:db8:dead::7","2001:db8:dead::/64"]`) {
		t.Fatalf("unblock through the watch: exit %d, out %s, err %s", code, out, errs)
	}
	if got := decisionsOf(t, l); strings.Join(got, " ") != "Ip:203.0.113.7" {
		t.Errorf("decisions after unblock through the watch: %v, want 203.0.113.7's alone", got)
	}
	w.waitOut(`"event":"unblock"`)
	if code := w.stop(); code != 0 {
		t.Fatalf("watch: exit %d; stderr:\n%s", code, w.stderr.String())
	}

	code, out, errs = runCmd(t, "unblock", "--state-dir", state, "203.0.113.7")
	if code != 0 || !strings.Contains(out, `"crowdsec":["203.0.113.7"]`) {
		t.Fatalf("unblock without a watch: exit %d, out %s, err %s", code, out, errs)
	}
	if got := decisionsOf(t, l); len(got) != 0 {
		t.Errorf("decisions after unblock without a watch: %v, want none", got)
	}
	if s := watchStatusOf(t, state); s.Held != 2 {
		t.Errorf("held: %d, want 2", s.Held)
	}
}

// With no state to say where blocks went (a watch run with --no-state, or
// elsewhere), unblock takes the address out of the default table's sets
// where it runs, says so, and writes the hold.
func TestUnblockWithoutState(t *testing.T) {
	ns := watchNetNS(t)
	for _, args := range [][]string{
		{"add", "table", "inet", "lohibot"},
		{"add", "set", "inet", "lohibot", "spoofed_live_v4", "{ type ipv4_addr; flags timeout; }"},
		{"add", "element", "inet", "lohibot", "spoofed_live_v4", "{ 198.51.100.77, 198.51.100.78 }"},
	} {
		if out, err := exec.Command("ip", append([]string{"netns", "exec", ns, "nft"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("nft %q: %v: %s", args, err, out)
		}
	}
	state := filepath.Join(t.TempDir(), "state")
	cmd := exec.Command("ip", "netns", "exec", ns, auditBinary(t), "unblock", "--state-dir", state, "198.51.100.77")
	cmd.Env = binaryEnv(t)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || !strings.Contains(stdout.String(), `"nftables":["spoofed_live_v4"]`) ||
		!strings.Contains(stderr.String(), "no state in "+state) || !strings.Contains(stderr.String(), "cscli decisions delete") {
		t.Fatalf("unblock: %v; stdout %s; stderr %s", err, stdout.String(), stderr.String())
	}
	if set := nftSet(t, ns, "spoofed_live_v4"); strings.Contains(set, "198.51.100.77") || !strings.Contains(set, "198.51.100.78") {
		t.Errorf("the set after unblock:\n%s", set)
	}
	// The state unblock wrote holds no watch's targets: the next unblock
	// still goes to the default table.
	cmd = exec.Command("ip", "netns", "exec", ns, auditBinary(t), "unblock", "--state-dir", state, "198.51.100.78")
	cmd.Env = binaryEnv(t)
	stdout.Reset()
	stderr.Reset()
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || !strings.Contains(stdout.String(), `"nftables":["spoofed_live_v4"]`) {
		t.Fatalf("second unblock: %v; stdout %s; stderr %s", err, stdout.String(), stderr.String())
	}
	if set := nftSet(t, ns, "spoofed_live_v4"); strings.Contains(set, "198.51.100.78") {
		t.Errorf("the set after the second unblock:\n%s", set)
	}
	if s := watchStatusOf(t, state); s.Held != 2 {
		t.Errorf("held: %d, want 2", s.Held)
	}
}
