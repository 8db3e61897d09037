// Package progress draws status lines on a terminal while a long step
// runs: how far the reading of logs has got ([Reads]) and the
// verification of addresses ([Verification]). A line is redrawn in place
// on a ticker, only once there is something worth saying, and cleared
// when the step ends. Each line is cut to the terminal's width ([Fit]): a
// line that wrapped could not be redrawn in place, and would leave its
// first part behind at every redraw.
//
// The package writes to the writer it is given and to nothing else; the
// caller decides whether there is a terminal to draw on (never in CI,
// never with --no-progress, and never mixed with machine output).
package progress

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clipperhouse/displaywidth"
)

// Defaults of Options.
const (
	// DefaultDelay is how long a step runs before its line is shown: a
	// step that ends sooner draws nothing.
	DefaultDelay = time.Second
	// DefaultInterval is how often the line is redrawn.
	DefaultInterval = 250 * time.Millisecond
)

// Options shape the lines. The zero value draws without a width limit,
// after DefaultDelay, every DefaultInterval, by the wall clock.
type Options struct {
	// Width returns the terminal's width in columns; it is asked at every
	// redraw, as a window may be resized. nil, or 0: no limit.
	Width func() int
	// Delay is how long a step runs before its line is shown; zero means
	// DefaultDelay.
	Delay time.Duration
	// Interval is how often the line is redrawn; zero means
	// DefaultInterval.
	Interval time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Tick, when set, replaces the ticker (tests): the line is redrawn at
	// each time received, and Interval is not used.
	Tick <-chan time.Time
}

func (o Options) delay() time.Duration {
	if o.Delay > 0 {
		return o.Delay
	}
	return DefaultDelay
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Line redraws one status line until Stop. The nil *Line draws nothing.
type Line struct {
	w      io.Writer
	o      Options
	status func(now time.Time) string
	quit   chan struct{}
	exited chan struct{}
	once   sync.Once
	shown  bool // a line is on the terminal; read after exited
}

// Start redraws on w, at every tick, the line status gives for the tick's
// time, cut to the width; "" leaves the terminal as it is. A nil w draws
// nothing (and Start returns nil).
func Start(w io.Writer, o Options, status func(now time.Time) string) *Line {
	if w == nil {
		return nil
	}
	l := &Line{w: w, o: o, status: status, quit: make(chan struct{}), exited: make(chan struct{})}
	tick, stop := o.Tick, func() {}
	if tick == nil {
		interval := o.Interval
		if interval <= 0 {
			interval = DefaultInterval
		}
		t := time.NewTicker(interval)
		tick, stop = t.C, t.Stop
	}
	go func() {
		defer close(l.exited)
		defer stop()
		for {
			select {
			case <-l.quit:
				return
			case now := <-tick:
				line := l.status(now)
				if line == "" {
					continue
				}
				width := 0
				if o.Width != nil {
					width = o.Width()
				}
				fmt.Fprintf(l.w, "\r\x1b[K%s", Fit(line, width))
				l.shown = true
			}
		}
	}()
	return l
}

// Stop ends the redrawing and clears the line if one was drawn. It may be
// called more than once.
func (l *Line) Stop() {
	if l == nil {
		return
	}
	l.once.Do(func() {
		close(l.quit)
		<-l.exited
		if l.shown {
			fmt.Fprint(l.w, "\r\x1b[K")
		}
	})
}

// Fit returns line cut so that it takes fewer columns than width, an
// ellipsis marking the cut: a line that reached the last column would wrap
// on some terminals. A width below 2 leaves line as it is.
func Fit(line string, width int) string {
	if width < 2 || displaywidth.String(line) < width {
		return line
	}
	return cutEnd(line, width-1)
}

// cutEnd cuts s to at most cols columns, its end replaced by "…".
func cutEnd(s string, cols int) string { return displaywidth.TruncateString(s, cols, "…") }

// cutStart cuts s to at most cols columns, its start replaced by "…": the
// end of a path is what tells files apart.
func cutStart(s string, cols int) string {
	if displaywidth.String(s) <= cols {
		return s
	}
	var parts []string
	g := displaywidth.StringGraphemes(s)
	var widths []int
	for g.Next() {
		parts = append(parts, g.Value())
		widths = append(widths, g.Width())
	}
	used, i := 0, len(parts)
	for i > 0 && used+widths[i-1] <= cols-1 {
		i--
		used += widths[i]
	}
	return "…" + strings.Join(parts[i:], "")
}

// Bytes formats a byte count for people: 512 B, 1.5 KiB, 3.2 GiB.
func Bytes(b float64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%.0f B", b)
	}
	div, exp := float64(unit), 0
	for n := b / unit; n >= unit && exp < 4; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", b/div, "KMGTP"[exp])
}

// rate formats a count per second: whole numbers, one decimal below ten.
func rate(r float64) string {
	if r < 10 {
		return strconv.FormatFloat(r, 'f', 1, 64)
	}
	return strconv.FormatFloat(r, 'f', 0, 64)
}
