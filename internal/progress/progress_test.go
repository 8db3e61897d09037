package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clipperhouse/displaywidth"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/verify"
)

// lockedBuffer is a bytes.Buffer safe for the line's goroutine and the
// test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestVerificationLine drives the DNS line with a hand-turned clock and
// ticker: nothing in the first second, then done/total, rate and time
// left, the second pass on its own line, and the line cleared at the end.
func TestVerificationLine(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	// Each tick reads the next value: the loop takes tick n+1 only once
	// it has drawn tick n.
	script := make(chan verify.Progress, 1)
	var out lockedBuffer
	tick := make(chan time.Time)
	stop := Verification(&out, Options{Now: func() time.Time { return t0 }, Tick: tick})(func() verify.Progress { return <-script })
	steps := []struct {
		at   time.Duration
		pr   verify.Progress
		want string // the line drawn at this tick, "" for none
	}{
		{250 * time.Millisecond, verify.Progress{Done: 10, Total: 4112}, ""},
		{time.Second, verify.Progress{Done: 0, Total: 4112}, "dns: 0 of 4112 addresses verified"},
		{2 * time.Second, verify.Progress{Done: 1000, Total: 4112}, "dns: 1000 of 4112 addresses verified, 500/s, 24%, 6s left"},
		{4 * time.Second, verify.Progress{Done: 4112, Total: 4112}, "dns: 4112 of 4112 addresses verified, 1028/s, 100%"},
		{5 * time.Second, verify.Progress{Done: 4112, Total: 4112, Retried: 0, RetryTotal: 40}, "dns: second try with a longer timeout: 0 of 40 unverified addresses"},
		{9 * time.Second, verify.Progress{Done: 4112, Total: 4112, Retried: 10, RetryTotal: 40}, "dns: second try with a longer timeout: 10 of 40 unverified addresses, 2.5/s, 25%, 12s left"},
	}
	want := ""
	for _, st := range steps {
		script <- st.pr
		tick <- t0.Add(st.at)
		if st.want != "" {
			want += "\r\x1b[K" + st.want
		}
	}
	stop()
	want += "\r\x1b[K"
	if got := out.String(); got != want {
		t.Errorf("drew\n%q\nwant\n%q", got, want)
	}
	stop() // twice is harmless
	var none *Line
	none.Stop()
	if Start(nil, Options{}, func(time.Time) string { return "x" }) != nil {
		t.Error("a line on no writer")
	}
}

// TestReadsLineFitsTheTerminal: the reading line never takes the last
// column of the terminal, however long the path: the path gives way
// first, keeping its end, then the line is cut. Narrowing the window cuts
// the next line to the new width.
func TestReadsLineFitsTheTerminal(t *testing.T) {
	long := "/var/log/nginx/sites/" + strings.Repeat("very-long-customer-name.example/", 4) + "access.log.2.gz"
	for _, width := range []int{200, 80, 40, 20, 8} {
		line := Fit(readsLine(long, 1<<30, 300<<20, 1234567, 3*time.Second, width), width)
		if w := displaywidth.String(line); w >= width {
			t.Errorf("width %d: line takes %d columns: %q", width, w, line)
		}
		if width >= 80 && (!strings.HasSuffix(strings.SplitN(line, ": ", 2)[0], "access.log.2.gz") || !strings.Contains(line, "% ") && !strings.Contains(line, "left")) {
			t.Errorf("width %d: want the end of the path and every figure: %q", width, line)
		}
	}
	if got := readsLine("a.log", -1, 2048, 10, time.Second, 80); got != "a.log: 2.0 KiB read, 10 lines, 2.0 KiB/s" {
		t.Errorf("unknown size: %q", got)
	}
	if got := readsLine("a.log", 4096, 1024, 10, time.Second, 80); got != "a.log: 1.0 KiB read, 10 lines, 1.0 KiB/s, 25%, 3s left" {
		t.Errorf("known size: %q", got)
	}

	// Drawn: each redraw asks the width anew.
	var out lockedBuffer
	tick := make(chan time.Time)
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	width := 100
	var mu sync.Mutex
	p := StartReads(&out, Options{Tick: tick, Now: func() time.Time { return t0 }, Width: func() int {
		mu.Lock()
		defer mu.Unlock()
		return width
	}})
	r := parse.NewReader(strings.NewReader("x\n"), parse.Options{})
	for r.Scan() {
	}
	p.Start(long, -1, r)
	// A tick within the delay draws nothing; sent after another, it
	// returns once that one is drawn.
	early := t0.Add(500 * time.Millisecond)
	tick <- early
	tick <- t0.Add(2 * time.Second)
	tick <- early
	mu.Lock()
	width = 30
	mu.Unlock()
	tick <- t0.Add(3 * time.Second)
	tick <- early
	p.Done()
	tick <- t0.Add(4 * time.Second) // no input: nothing
	p.Stop()
	draws := strings.Split(strings.TrimPrefix(out.String(), "\r\x1b[K"), "\r\x1b[K")
	if len(draws) != 3 || draws[2] != "" {
		t.Fatalf("drew %q, want two lines and the clearing", draws)
	}
	for i, w := range []int{100, 30} {
		if got := displaywidth.String(draws[i]); got >= w || got < w/2 {
			t.Errorf("line %d at width %d takes %d columns: %q", i, w, got, draws[i])
		}
	}
	var none *Reads
	none.Start("x", 1, nil)
	none.Done()
	none.Stop()
}

func TestFit(t *testing.T) {
	for _, tc := range []struct {
		line  string
		width int
		want  string
	}{
		{"short", 80, "short"},
		{"exactly ten", 12, "exactly ten"},
		{"exactly ten", 11, "exactly t…"},
		{"no limit", 0, "no limit"},
		{"日本語のファイル名", 10, "日本語の…"},
	} {
		if got := Fit(tc.line, tc.width); got != tc.want {
			t.Errorf("Fit(%q, %d) = %q, want %q", tc.line, tc.width, got, tc.want)
		}
	}
	if got := cutStart("/a/b/access.log", 12); got != "…/access.log" {
		t.Errorf("cutStart = %q", got)
	}
}

func TestBytes(t *testing.T) {
	for b, want := range map[float64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 3 << 30: "3.0 GiB", 5 << 50: "5.0 PiB"} {
		if got := Bytes(b); got != want {
			t.Errorf("Bytes(%v) = %q, want %q", b, got, want)
		}
	}
}
