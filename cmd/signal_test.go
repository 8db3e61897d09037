package cmd

import (
	"bytes"
	"compress/gzip"
	"encoding/pem"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
	"github.com/miekg/dns"
)

// TestSignalsAtRandomMoments builds the program once and signals real
// runs (SIGINT or SIGTERM) at random moments: while logs stream in on
// stdin or through a FIFO, while a FIFO has no writer yet, while a gzip
// file is read, while DNS lookups wait on a slow resolver, with and
// without emit -o. Every run must end with exit 130, print nothing on
// stdout and leave no file in the -o directory. Each run is held up by
// the test (an input that does not end, a resolver that stops answering)
// so that it cannot finish before the signal; the moments are events (a
// request, a query, a chunk taken) plus random delays, and the only
// timeout detects a hang.
func TestSignalsAtRandomMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the program 40 times")
	}
	bin := auditBinary(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 130))

	// Every run first fetches its own robots.txt here: the request says
	// the program is running (its signal handler is in place).
	var started sync.Map // path -> chan struct{}
	robots := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		if ch, ok := started.Load(req.URL.Path); ok {
			close(ch.(chan struct{}))
		}
	}))
	defer robots.Close()
	certFile := filepath.Join(t.TempDir(), "cert.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: robots.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	list := testutil.TempFile(t, "ips.json", `["79.139.58.98"]`)
	gz := signalGzipLog(t)
	chunk := []byte(strings.Repeat(`203.0.113.5 - - [01/Dec/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 512 "-" "Mozilla/5.0 (X11; Linux x86_64)"`+"\n", 200))

	type scenario struct {
		name string
		// input is "stdin", "fifo", "fifo-silent" or a file.
		input  string
		cmd    []string
		output bool
		// slowDNS: the resolver answers a random number of queries, then
		// none; the signal comes at the first unanswered one or at a
		// random moment.
		slowDNS bool
	}
	scenarios := []scenario{
		{name: "logs stdin", input: "stdin", cmd: []string{"logs", "--format", "json"}},
		{name: "logs stdin silent", input: "stdin-silent", cmd: []string{"logs", "--format", "json"}},
		{name: "logs fifo", input: "fifo", cmd: []string{"logs", "--format", "json"}},
		{name: "logs fifo without writer", input: "fifo-silent", cmd: []string{"logs", "--format", "table"}},
		{name: "logs gzip slow dns", input: gz, cmd: []string{"logs", "--format", "json"}, slowDNS: true},
		{name: "emit -o gzip slow dns", input: gz, cmd: []string{"emit", "nftables"}, output: true, slowDNS: true},
		{name: "emit -o stdin", input: "stdin", cmd: []string{"emit", "modsecurity"}, output: true},
		{name: "verify slow dns", cmd: []string{"verify", "--format", "json"}, slowDNS: true},
	}
	const runsPerScenario = 5
	var forced atomic.Int64
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			for run := 0; run < runsPerScenario; run++ {
				sig := []os.Signal{syscall.SIGINT, syscall.SIGTERM}[r.IntN(2)]
				answered := r.IntN(30)
				atDNS := sc.slowDNS && r.IntN(2) == 0
				delay := time.Duration(r.IntN(150)) * time.Millisecond
				chunks := r.IntN(100)
				what := fmt.Sprintf("run %d, %v, %d answers, at dns %v, delay %s, chunks %d", run, sig, answered, atDNS, delay, chunks)

				dir := t.TempDir()
				path := fmt.Sprintf("/%s/%d/robots.txt", strings.ReplaceAll(sc.name, " ", "-"), run)
				ready := make(chan struct{})
				started.Store(path, ready)

				// The resolver: it answers NXDOMAIN to the first
				// `answered` queries and holds the rest until the test ends.
				var queries atomic.Int64
				held := make(chan struct{}, 1)
				release := make(chan struct{})
				resolver := serveDNS(t, dns.HandlerFunc(func(w dns.ResponseWriter, m *dns.Msg) {
					if dnstest.AnswerRoot(w, m) {
						return
					}
					n := queries.Add(1)
					if !sc.slowDNS || n <= int64(answered) {
						reply := new(dns.Msg)
						reply.SetRcode(m, dns.RcodeNameError)
						w.WriteMsg(reply)
						return
					}
					select {
					case held <- struct{}{}:
					default:
					}
					<-release
				}))

				args := append(append([]string{}, sc.cmd...), "--no-cache", "--ip-list", list, "--resolver", resolver,
					"--dns-timeout", "50s", "--dns-retries", "0")
				if sc.cmd[0] != "verify" {
					args = append(args, "--robots", robots.URL+path)
				}
				if sc.output {
					args = append(args, "-o", filepath.Join(dir, "rules"))
				}
				cmd := exec.Command(bin)
				var stdinW *os.File // the test's end of the program's stdin
				switch sc.input {
				case "stdin", "stdin-silent":
					pr, pw, err := os.Pipe()
					if err != nil {
						t.Fatal(err)
					}
					cmd.Stdin, stdinW = pr, pw
					args = append(args, "-")
					defer pr.Close()
				case "fifo", "fifo-silent":
					fifo := filepath.Join(t.TempDir(), "access.log")
					if err := syscall.Mkfifo(fifo, 0o600); err != nil {
						t.Fatal(err)
					}
					args = append(args, fifo)
					if sc.input == "fifo" {
						defer startFIFOWriter(fifo, chunk)()
					}
				case "":
					for i := 0; i < 40; i++ {
						args = append(args, fmt.Sprintf("198.51.100.%d", i+1))
					}
				default:
					args = append(args, sc.input)
				}
				cmd.Args = append([]string{bin}, args...)
				cmd.Env = append(binaryEnv(t), "SSL_CERT_FILE="+certFile)
				var stdout, stderr syncBuffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				if f, ok := cmd.Stdin.(*os.File); ok {
					f.Close() // the child has its copy
				}
				exited := make(chan error, 1)
				go func() { exited <- cmd.Wait() }()
				failNow := func(format string, a ...any) {
					t.Helper()
					cmd.Process.Kill()
					<-exited
					t.Fatalf("%s: %s; stderr:\n%s", what, fmt.Sprintf(format, a...), stderr.String())
				}
				waitFor := func(ch <-chan struct{}, event string) {
					t.Helper()
					select {
					case <-ch:
					case err := <-exited:
						t.Fatalf("%s: the program ended (%v) before %s; stderr:\n%s", what, err, event, stderr.String())
					case <-time.After(hangTimeout):
						failNow("no %s within %s", event, hangTimeout)
					}
				}

				// The moment.
				if sc.cmd[0] == "verify" {
					waitFor(held, "unanswered DNS query")
					time.Sleep(delay)
				} else {
					waitFor(ready, "robots.txt request")
					switch {
					case atDNS:
						waitFor(held, "unanswered DNS query")
					case sc.input == "stdin":
						for i := 0; i < chunks; i++ {
							if _, err := stdinW.Write(chunk); err != nil {
								failNow("writing to stdin: %v", err)
							}
						}
					default:
						time.Sleep(delay) // a random moment, not a margin: the run cannot end by itself
					}
				}
				if err := cmd.Process.Signal(sig); err != nil {
					failNow("signal: %v", err)
				}
				var err error
				select {
				case err = <-exited:
				case <-time.After(hangTimeout):
					failNow("still running %s after %v (a hang)", hangTimeout, sig)
				}
				close(release)
				if stdinW != nil {
					stdinW.Close()
				}

				code := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					code = ee.ExitCode()
				}
				if code != fail.ExitInterrupted {
					t.Errorf("%s: exit %d (%v), want %d; stderr:\n%s", what, code, err, fail.ExitInterrupted, stderr.String())
				}
				if out := stdout.String(); out != "" {
					t.Errorf("%s: printed after the signal:\n%.300s", what, out)
				}
				errOut := stderr.String()
				switch {
				case strings.HasSuffix(errOut, "lohibot-audit: interrupted\n"):
				case strings.HasSuffix(errOut, "lohibot-audit: interrupted (a step did not stop within a second; ended it)\n"):
					forced.Add(1)
					t.Logf("%s: ended by the grace timer", what)
				default:
					t.Errorf("%s: stderr does not end with the interrupted line:\n%s", what, errOut)
				}
				if entries, _ := os.ReadDir(dir); len(entries) != 0 {
					t.Errorf("%s: the -o directory holds %v", what, entries)
				}
			}
		})
	}
	t.Logf("%d of %d runs ended by the grace timer", forced.Load(), len(scenarios)*runsPerScenario)
}

var signalGzipOnce struct {
	sync.Once
	path string
	err  error
}

// signalGzipLog writes (once) a gzip log of browser lines with claimed
// hits from a thousand addresses among them, large enough that reading
// it takes a moment.
func signalGzipLog(t *testing.T) string {
	t.Helper()
	signalGzipOnce.Do(func() {
		var raw bytes.Buffer
		for i := 0; i < 60000; i++ {
			if i%20 == 0 {
				fmt.Fprintf(&raw, "198.51.%d.%d - - [01/Dec/2026:10:%02d:%02d +0000] \"GET /p%d HTTP/1.1\" 200 512 \"-\" \"LohiSoftBot/1.0 (+https://lohisoft.com/bot)\"\n",
					100+(i/20)/250%4, (i/20)%250+1, i/3600%60, i/60%60, i)
				continue
			}
			fmt.Fprintf(&raw, "203.0.113.%d - - [01/Dec/2026:10:%02d:%02d +0000] \"GET /page/%d HTTP/1.1\" 200 512 \"https://example.org/\" \"Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0\"\n",
				i%250+1, i/3600%60, i/60%60, i)
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		zw.Write(raw.Bytes())
		zw.Close()
		var dir string
		if dir, signalGzipOnce.err = os.MkdirTemp(binaryDir, "gz-"); signalGzipOnce.err != nil {
			return
		}
		signalGzipOnce.path = filepath.Join(dir, "access.log.2.gz")
		signalGzipOnce.err = os.WriteFile(signalGzipOnce.path, buf.Bytes(), 0o644)
	})
	if signalGzipOnce.err != nil {
		t.Fatal(signalGzipOnce.err)
	}
	return signalGzipOnce.path
}

// startFIFOWriter writes chunk to the named pipe again and again once the
// program opens it, until the program is gone or stop is called; stop
// also ends an open that still waits for the program.
func startFIFOWriter(path string, chunk []byte) (stop func()) {
	var mu sync.Mutex
	var w *os.File
	done := make(chan struct{})
	go func() {
		defer close(done)
		f, err := os.OpenFile(path, os.O_WRONLY, 0) // waits for a reader
		if err != nil {
			return
		}
		mu.Lock()
		w = f
		mu.Unlock()
		for {
			if _, err := f.Write(chunk); err != nil {
				return
			}
		}
	}()
	return func() {
		mu.Lock()
		if w != nil {
			w.Close()
		}
		mu.Unlock()
		// A reader of our own ends an open that still waits; closing it
		// ends a write that waits.
		if r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			r.Close()
		}
		<-done
		mu.Lock()
		if w != nil {
			w.Close()
		}
		mu.Unlock()
	}
}
