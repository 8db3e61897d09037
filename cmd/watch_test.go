package cmd

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// watchHang is how long a test waits for something that must happen
// before it calls it a hang.
const watchHang = 30 * time.Second

// watchNetNS makes a named network namespace with ip netns add, removed
// when the test ends. Without root it fails when CI is set and skips
// otherwise.
func watchNetNS(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		testutil.Missing(t, "the nftables end-to-end test needs root to make a network namespace")
	}
	for _, tool := range []string{"ip", "nft"} {
		testutil.NeedTool(t, ".ci/install-rule-checkers", tool)
	}
	name := fmt.Sprintf("lbwatch%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", name, err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	return name
}

// nftSet lists a set of the namespace's kernel.
func nftSet(t *testing.T, ns, set string) string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", ns, "nft", "list", "set", "inet", "lohibot", set).CombinedOutput()
	if err != nil {
		return ""
	}
	return string(out)
}

func watchLine(addr, ua string) string {
	return addr + ` - - [01/Dec/2026:10:00:00 +0000] "GET /page HTTP/1.1" 200 12 "-" "` + ua + `"` + "\n"
}

// A spoofer's line appears in a followed file and its address appears in
// the kernel's nftables live set of a network namespace; the genuine crawler's
// never does; SIGTERM (the context) ends the command with exit 0.
func TestWatchBlocksSpooferInKernelSet(t *testing.T) {
	ns := watchNetNS(t)
	z := dnstest.NewZone(t,
		"10.2.0.192.in-addr.arpa. 300 IN PTR crawler-1.bot.lohisoft.com.",
		"crawler-1.bot.lohisoft.com. 300 IN A 192.0.2.10",
	)
	srv := dnstest.Serve(t, z)
	dir := t.TempDir()
	list := filepath.Join(dir, "ips.json")
	if err := os.WriteFile(list, []byte(`{"ips":["79.139.58.98"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "access.log")
	if err := os.WriteFile(log, []byte(watchLine("198.51.100.5", "curl/8")), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	env := &Env{Stdout: stdout, Stderr: stderr, Now: time.Now}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, env, []string{"watch", "--nftables", "--nft-netns", "/run/netns/" + ns, "--resolver", srv,
			"--ip-list", list, "--no-cache", "--site", "www.example", "--from-start", log})
	}()
	// The table appears when the command has started. --from-start
	// reads the file whole whenever following begins, so the lines
	// written now are read however the two race.
	waitFor(t, done, stderr, func() bool { return strings.Contains(nftSet(t, ns, "spoofed_v4"), "spoofed_v4") })
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, watchLine("192.0.2.10", "LohiSoftBot/1.0")+watchLine("203.0.113.7", "Mozilla/5.0 (compatible; LohiSoftBot/1.0)"))
	f.Close()
	waitFor(t, done, stderr, func() bool { return strings.Contains(nftSet(t, ns, "spoofed_live_v4"), "203.0.113.7") })
	waitFor(t, done, stderr, func() bool { return strings.Contains(stdout.String(), `"ip":"192.0.2.10"`) })
	set := nftSet(t, ns, "spoofed_live_v4") + nftSet(t, ns, "spoofed_v4")
	if strings.Contains(set, "192.0.2.10") || strings.Contains(set, "198.51.100.5") {
		t.Fatalf("the set holds an address it must not:\n%s", set)
	}
	if !strings.Contains(stdout.String(), `"event":"verdict"`) || !strings.Contains(stdout.String(), `"verdict":"genuine"`) {
		t.Fatalf("events:\n%s", stdout.String())
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d after the stop, want 0; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(watchHang):
		t.Fatal("watch did not stop")
	}
}

// waitFor polls cond until it holds, failing when the command ends first
// or nothing happens for watchHang.
func waitFor(t *testing.T, done chan int, stderr *syncBuffer, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(watchHang)
	for !cond() {
		select {
		case code := <-done:
			t.Fatalf("watch ended with %d; stderr:\n%s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited in vain; stderr:\n%s", stderr.String())
		}
	}
}

// Bad configuration ends watch at start with exit 2 and one line saying
// what is wrong (and a hint line saying what to do), before any log is
// followed and before the state directory is taken (the watch
// package's tests hold each check to its wording).
func TestWatchBadConfigurationAtStart(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	if err := os.WriteFile(log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"missing exec", []string{"--exec", "/nonexistent/cmd", log}, "--exec /nonexistent/cmd: no such file: give the path of an executable file"},
		{"ttl alone", []string{"--ttl", "1d", log}, "--ttl acts only with --nftables"},
		{"ttl zero", []string{"--nftables", "--ttl", "0s", log}, `--ttl "0s": give a duration from 1s to 365d, such as 7d, 36h or 1d12h`},
		{"exec-concurrency zero", []string{"--exec", "sh", "--exec-concurrency", "0", log}, "--exec-concurrency at least 1"},
		{"directory as log", []string{log, dir}, dir + " is a directory: give the log files in it, such as " + filepath.Join(dir, "access.log")},
		{"metrics not HOST:PORT", []string{"--metrics", "nowhere", log}, `--metrics "nowhere": give HOST:PORT`},
		{"an audit's option", []string{"--since", "1d", log}, "--since does not apply to watch"},
		// The values are checked before the state directory is taken.
		{"never-block", []string{"--state-dir", log, "--never-block", "192.0.2.0/33", log}, `--never-block "192.0.2.0/33"`},
		{"robots twice", []string{"--state-dir", log, "--robots", "a.txt", "--robots", "b.txt", log}, "--robots given twice"},
		{"robots URL offline", []string{"--state-dir", log, "--robots", "https://example.com/robots.txt", log}, "--offline forbids fetching --robots URL https://example.com/robots.txt"},
		{"resolver", []string{"--state-dir", log, "--resolver", "not a server", log}, "--resolver"},
		{"opted-out", []string{"--state-dir", log, "--opted-out", "bad", log}, `--opted-out "bad"`},
		{"another audit's option", []string{"--max-dict", "1GiB", log}, "--max-dict does not apply to watch"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr := &syncBuffer{}, &syncBuffer{}
			env := &Env{Stdout: stdout, Stderr: stderr, Now: time.Now}
			ctx, cancel := context.WithTimeout(context.Background(), watchHang)
			defer cancel()
			code := Run(ctx, env, append([]string{"watch", "--offline"}, tt.args...))
			if ctx.Err() != nil {
				t.Fatalf("watch ran on (hang); stderr:\n%s", stderr.String())
			}
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr.String())
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			hinted := len(lines) == 2 && strings.HasPrefix(lines[1], "lohibot-audit: hint: ")
			if len(lines) != 1 && !hinted || !strings.Contains(lines[0], tt.want) {
				t.Fatalf("stderr %q, want one line with %q (and a hint)", stderr.String(), tt.want)
			}
			if stdout.String() != "" {
				t.Fatalf("stdout %q", stdout.String())
			}
		})
	}
}

// What the config file sets is not held to the options it needs (a config
// shared with emit may set --nft-table, and a --ttl past watch's range
// that applies to no way of blocking watch uses): watch runs, and ends
// with 0 when standard input ends.
func TestWatchConfigNotHeldToNeeds(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("nft-table: inet mine\nttl: 400d\nexec-timeout: 5s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	env := &Env{Stdin: strings.NewReader(watchLine("203.0.113.7", "LohiSoftBot/1.0")), Stdout: stdout, Stderr: stderr, Now: time.Now}
	ctx, cancel := context.WithTimeout(context.Background(), watchHang)
	defer cancel()
	code := Run(ctx, env, []string{"watch", "--offline", "--config", cfg, "-"})
	if ctx.Err() != nil {
		t.Fatalf("watch did not end with its input (hang); stderr:\n%s", stderr.String())
	}
	if code != 0 || !strings.Contains(stdout.String(), `"ip":"203.0.113.7"`) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

// A log that does not exist yet is waited for, not refused.
func TestWatchWaitsForMissingLog(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	env := &Env{Stdout: stdout, Stderr: stderr, Now: time.Now}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- Run(ctx, env, []string{"watch", "--offline", filepath.Join(dir, "later.log")}) }()
	waitFor(t, done, stderr, func() bool { return strings.Contains(stderr.String(), "later.log: does not exist yet: waiting for it") })
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d after the stop, want 0; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(watchHang):
		t.Fatal("watch did not stop")
	}
}

// With --set-only the rules are the user's: watch says at start when none
// refers to the sets it adds spoofers to (nftset's tests check which sets
// are referred to, watch's the wording).
func TestWatchSetOnlySaysUnreferencedSets(t *testing.T) {
	ns := watchNetNS(t)
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	env := &Env{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr, Now: time.Now}
	ctx, cancel := context.WithTimeout(context.Background(), watchHang)
	defer cancel()
	code := Run(ctx, env, []string{"watch", "--offline", "--nftables", "--set-only", "--nft-table", "inet filter", "--nft-netns", "/run/netns/" + ns,
		"--ttl", "365d", "-"})
	if code != 0 || ctx.Err() != nil {
		t.Fatalf("exit %d (hang: %v); stderr:\n%s", code, ctx.Err() != nil, stderr.String())
	}
	// The longest --ttl watch takes is one the kernel takes.
	if out, err := exec.Command("ip", "netns", "exec", ns, "nft", "list", "set", "inet", "filter", "spoofed_live_v4").CombinedOutput(); err != nil ||
		!strings.Contains(string(out), "timeout 365d") {
		t.Errorf("the live set with --ttl 365d: %v:\n%s", err, out)
	}
	want := "lohibot-audit: nftables: no rule in table inet filter refers to @spoofed_live_v4 or @spoofed_live_v6, where watch adds spoofers: they are not dropped until a chain of yours has 'ip saddr @spoofed_live_v4 drop' and 'ip6 saddr @spoofed_live_v6 drop'\n"
	if got := stderr.String(); !strings.Contains(got, want) {
		t.Fatalf("stderr %q, want %q", got, want)
	}
}
