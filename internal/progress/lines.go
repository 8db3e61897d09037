package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/clipperhouse/displaywidth"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/verify"
)

// Reads shows how far the reading of logs has got, as audit.Run tells it
// (it is an audit.Progress): the input's name, the bytes and lines read
// and the rate, and with a known size the share done and the time left;
// from Delay after each input begins. The name gives way first when the
// terminal is narrow, keeping its end. The nil *Reads shows nothing.
type Reads struct {
	o    Options
	line *Line
	mu   sync.Mutex
	name string
	size int64
	r    *parse.Reader
	t0   time.Time
}

// StartReads starts showing the reading of logs on w.
func StartReads(w io.Writer, o Options) *Reads {
	p := &Reads{o: o}
	p.line = Start(w, o, p.status)
	return p
}

// Start shows the progress of reading the input name of size bytes (-1
// when not known) with r.
func (p *Reads) Start(name string, size int64, r *parse.Reader) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.name, p.size, p.r, p.t0 = name, size, r, p.o.now()
	p.mu.Unlock()
}

// Done ends the progress of an input.
func (p *Reads) Done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.r = nil
	p.mu.Unlock()
}

// Stop ends the line and clears it.
func (p *Reads) Stop() {
	if p != nil {
		p.line.Stop()
	}
}

func (p *Reads) status(now time.Time) string {
	p.mu.Lock()
	r, name, size, t0 := p.r, p.name, p.size, p.t0
	p.mu.Unlock()
	if r == nil || now.Sub(t0) < p.o.delay() {
		return ""
	}
	return readsLine(parse.EscapeControl(name), size, r.BytesRead(), r.LinesRead(), now.Sub(t0), p.width())
}

func (p *Reads) width() int {
	if p.o.Width == nil {
		return 0
	}
	return p.o.Width()
}

// readsLine is the status of an input of size bytes (-1 when not known)
// of which read bytes and lines were read in el, its name cut from the
// start when the line would not fit in width columns.
func readsLine(name string, size, read, lines int64, el time.Duration, width int) string {
	r := float64(read) / el.Seconds()
	stats := fmt.Sprintf("%s read, %d lines, %s/s", Bytes(float64(read)), lines, Bytes(r))
	if size > 0 && r > 0 && read <= size {
		eta := time.Duration(float64(size-read) / r * float64(time.Second))
		stats += fmt.Sprintf(", %d%%, %s left", read*100/size, eta.Round(time.Second))
	}
	if width > 1 {
		// What the name may take for the line to fit; at least a few
		// columns, the rest is then cut by Fit.
		room := max(width-1-displaywidth.String(stats)-len(": "), 12)
		name = cutStart(name, room)
	}
	return name + ": " + stats
}

// Verification returns, for verify.Identity.Watch, a function that shows
// on w how far the verification of addresses has got while it runs: how
// many are done, how fast, and how long the rest will take, the second
// try of unverified addresses on its own line; from Delay after it
// begins. The function it returns ends the line.
func Verification(w io.Writer, o Options) func(src func() verify.Progress) (stop func()) {
	return func(src func() verify.Progress) func() {
		v := &verification{begun: o.now(), delay: o.delay(), src: src}
		v.phase, v.start = 1, v.begun
		return Start(w, o, v.status).Stop
	}
}

// verification is the state of a verification line.
type verification struct {
	src          func() verify.Progress
	begun, start time.Time
	delay        time.Duration
	// phase is the pass shown (1, or 2 for the second try of unverified
	// addresses), which began at start.
	phase int
}

func (v *verification) status(now time.Time) string {
	line := v.line(v.src(), now)
	if now.Sub(v.begun) < v.delay {
		return ""
	}
	return line
}

// line is the status for pr at now, "" when there is nothing to show.
func (v *verification) line(pr verify.Progress, now time.Time) string {
	line := fmt.Sprintf("dns: %d of %d addresses verified", pr.Done, pr.Total)
	done, total := pr.Done, pr.Total
	if pr.RetryTotal > 0 {
		line = fmt.Sprintf("dns: second try with a longer timeout: %d of %d unverified addresses", pr.Retried, pr.RetryTotal)
		done, total = pr.Retried, pr.RetryTotal
		if v.phase == 1 {
			v.phase, v.start = 2, now
		}
	}
	if total == 0 {
		return ""
	}
	el := now.Sub(v.start).Seconds()
	if el <= 0 || done == 0 {
		return line
	}
	r := float64(done) / el
	line += fmt.Sprintf(", %s/s, %d%%", rate(r), done*100/total)
	if done < total {
		eta := time.Duration(float64(total-done) / r * float64(time.Second))
		line += fmt.Sprintf(", %s left", eta.Round(time.Second))
	}
	return line
}
