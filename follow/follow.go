// Package follow follows access logs as tail -F does: from their current
// end (or their start), across rotation by rename-and-create and by
// copytruncate, waiting for files that do not exist yet or that went away,
// and reading standard input ("-") until it ends.
//
// A Follower delivers whole lines, in order for each file, with the file's
// name, line number and byte offset. Changes are noticed through file
// system notifications (fsnotify) and, as a backstop that also covers
// network file systems and exhausted inotify limits, by looking at every
// file each Options.PollInterval.
//
// Rotation is noticed by the name pointing at a new file (another device
// and inode) or by the file getting shorter or being rewritten in place.
// Before switching to a new file, the old one is read to its end: the
// switch waits until the new file has data, so a writer that goes on
// writing to the renamed file until it reopens its log loses nothing. Two
// rotations between two looks at a file lose the generation in between, as
// with tail -F; with notifications that takes two rotations within a few
// milliseconds. Gzip-compressed rotations are not followed.
package follow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"
)

// Limits and defaults.
const (
	// DefaultMaxLine is the longest line delivered whole, as the parse
	// package's MaxLineLength: a longer line is delivered Overlong, with
	// its start only, and is never held in memory whole.
	DefaultMaxLine = 16 << 20
	// DefaultPollInterval is how often every file is looked at besides
	// notifications.
	DefaultPollInterval = 250 * time.Millisecond
	// DefaultLinger is how many polls a rotated-away file is still read
	// for lines its writers add late.
	DefaultLinger = 8
	// overlongPrefix is how much of an overlong line is kept, as the
	// parse package keeps of it for its examples.
	overlongPrefix = 200
	// readSize is the least room a read gets.
	readSize = 64 << 10
)

// Stdin is the name that means standard input.
const Stdin = "-"

// ErrNoInput means New was given no file to follow.
var ErrNoInput = errors.New("no file to follow")

// Line is one line of a followed file.
type Line struct {
	// File is the name as given to New ("-" for standard input).
	File string
	// Num is the line's number in its file, from 1. It counts from the
	// file's start when reading began there (Options.FromStart, a file that
	// appeared or replaced a rotated one, standard input); for a file
	// followed from its end it counts from where following began.
	Num int64
	// Offset is the byte offset of the line's start in its file.
	Offset int64
	// Text is the line without its newline. It is valid until the next
	// call to Next.
	Text []byte
	// Overlong means the line is longer than Options.MaxLine: Text holds
	// its first 200 bytes and Size its length.
	Overlong bool
	// Size is the line's length without its newline.
	Size int64
}

// EventKind says what happened to a followed file.
type EventKind int

// The kinds of Event.
const (
	// Opened: the file is followed from Event.Offset (at start, or once it
	// has appeared or become readable).
	Opened EventKind = iota + 1
	// Missing: the file does not exist (or was deleted); it is waited for.
	// Said once until it is back.
	Missing
	// Unreadable: the file cannot be opened or read (Event.Err); it is
	// tried again at every poll. Said once per distinct error.
	Unreadable
	// Rotated: the name now points at a new file, followed from its
	// start; the old one was read to its end.
	Rotated
	// Truncated: the file got shorter or was rewritten in place
	// (copytruncate); it is read again from its start.
	Truncated
	// Ended: standard input reached its end (Event.Err is nil) or could
	// not be read further (Event.Err says why).
	Ended
	// Polling: file system notifications do not work for the file
	// (Event.File), or for every file when File is empty (Event.Err says
	// why): changes are noticed only every Options.PollInterval.
	Polling
)

var kindNames = map[EventKind]string{
	Opened: "opened", Missing: "missing", Unreadable: "unreadable", Rotated: "rotated",
	Truncated: "truncated", Ended: "ended", Polling: "polling",
}

func (k EventKind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is something that happened to a followed file, other than a line.
type Event struct {
	Kind EventKind
	// File is the name as given to New; empty for a Polling event that
	// concerns every file.
	File string
	// Err says why, for Unreadable, Polling and (when reading failed)
	// Ended.
	Err error
	// Offset is where reading starts, for Opened.
	Offset int64
}

// String says what happened in one line, without a trailing period.
func (e Event) String() string {
	name := e.File
	if name == Stdin {
		name = "standard input"
	}
	switch e.Kind {
	case Opened:
		if e.Offset == 0 {
			return name + ": following from its start"
		}
		return fmt.Sprintf("%s: following from its end (byte %d)", name, e.Offset)
	case Missing:
		return name + ": does not exist yet: waiting for it"
	case Unreadable:
		return fmt.Sprintf("%s: cannot read: %v: trying again", name, e.Err)
	case Rotated:
		return name + ": rotated: following the new file"
	case Truncated:
		return name + ": truncated: reading it again from its start"
	case Ended:
		if e.Err != nil {
			return fmt.Sprintf("%s: read failed: %v", name, e.Err)
		}
		return name + ": ended"
	case Polling:
		if name == "" {
			name = "all files"
		}
		return fmt.Sprintf("%s: no change notifications (%v): looking for changes periodically", name, e.Err)
	}
	return name + ": " + e.Kind.String()
}

// Options configure a Follower. The zero value follows from the end, polls
// every DefaultPollInterval besides notifications, and drops events.
type Options struct {
	// FromStart reads what the files hold first, instead of starting at
	// their current end. Files that appear later are always read from
	// their start.
	FromStart bool
	// PollInterval is how often every file is looked at besides
	// notifications; zero means DefaultPollInterval.
	PollInterval time.Duration
	// Polling turns notifications off: changes are noticed only by
	// polling.
	Polling bool
	// MaxLine is the longest line delivered whole; zero means
	// DefaultMaxLine. Values below 200 are raised to 200.
	MaxLine int
	// Linger is how many polls a rotated-away file is still read after the
	// switch, for lines its writers add late; zero means DefaultLinger,
	// negative means none.
	Linger int
	// OnEvent, when set, receives events. It is called from the goroutine
	// that calls Next, in order with the lines of the same file.
	OnEvent func(Event)
	// Stdin is read for "-"; nil means os.Stdin.
	Stdin io.Reader
	// NewTicker makes the tickers that pace polling, one per file; nil
	// means time.NewTicker. Tests inject their own.
	NewTicker func(d time.Duration) (c <-chan time.Time, stop func())
}

// Follower follows files. Next and Line are for one goroutine; Close may be
// called from any.
type Follower struct {
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc
	items  chan item
	wg     sync.WaitGroup
	live   int // inputs that have not ended

	cur  *chunk
	pos  int
	num  int64
	line Line
	err  error

	closeOnce sync.Once
}

// item is what producers send to Next: a chunk of lines, an overlong
// line, an event, or the end of an input.
type item struct {
	ch   *chunk
	over *Line
	ev   *Event
	end  bool
}

// chunk is whole lines of one file, each ending in a newline except the
// last when final.
type chunk struct {
	file string
	data []byte
	num  int64 // of the first line
	off  int64 // of the first line
	free chan<- []byte
}

// New starts following paths ("-" is standard input) and returns at once:
// the files' current ends are taken before New returns, so every line
// written after it is delivered. A file that is missing or unreadable is
// reported through Options.OnEvent and waited for. Following stops when ctx
// ends or Close is called; Next then returns false.
func New(ctx context.Context, paths []string, o Options) (*Follower, error) {
	if len(paths) == 0 {
		return nil, ErrNoInput
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.MaxLine <= 0 {
		o.MaxLine = DefaultMaxLine
	}
	o.MaxLine = max(o.MaxLine, overlongPrefix)
	if o.Linger == 0 {
		o.Linger = DefaultLinger
	}
	if o.NewTicker == nil {
		o.NewTicker = func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	f := &Follower{opts: o, ctx: ctx, cancel: cancel, items: make(chan item, 16)}

	var tailers []*tailer
	seen := map[string]bool{}
	stdin := false
	for _, p := range paths {
		if p == Stdin {
			if !stdin {
				stdin = true
				f.live++
			}
			continue
		}
		clean := filepath.Clean(p)
		if seen[clean] {
			continue
		}
		seen[clean] = true
		t := newTailer(f, p)
		t.start()
		tailers = append(tailers, t)
		f.live++
	}
	if len(tailers) > 0 {
		n := newNotifier(f, tailers)
		for _, t := range tailers {
			// The ticker is made before New returns, so that a test's
			// ticks reach it.
			tick, stop := o.NewTicker(o.PollInterval)
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				t.run(n, tick, stop)
			}()
		}
		if n != nil {
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				n.run()
			}()
		}
	}
	if stdin {
		f.startStdin()
	}
	return f, nil
}

// send hands an item to Next; false when following has stopped.
func (f *Follower) send(it item) bool {
	select {
	case f.items <- it:
		return true
	case <-f.ctx.Done():
		return false
	}
}

// event sends an event.
func (f *Follower) event(e Event) bool { return f.send(item{ev: &e}) }

// Next waits for the next line and reports whether there is one. It
// returns false when following has stopped (the context ended, or Close)
// or every input has ended (only standard input ends); Err then says
// which.
func (f *Follower) Next() bool {
	for {
		if c := f.cur; c != nil {
			if f.pos < len(c.data) {
				rest := c.data[f.pos:]
				n := bytes.IndexByte(rest, '\n')
				text := rest
				if n >= 0 {
					text = rest[:n]
				}
				f.line = Line{File: c.file, Num: c.num + f.num, Offset: c.off + int64(f.pos), Text: text, Size: int64(len(text))}
				f.pos += len(text) + 1
				f.num++
				return true
			}
			// Buffers grown for a long line are left to the collector.
			if cap(c.data) <= 2*readSize {
				select {
				case c.free <- c.data[:0]:
				default:
				}
			}
			f.cur = nil
		}
		if f.live == 0 {
			return false
		}
		if f.ctx.Err() != nil {
			f.err = f.ctx.Err()
			return false
		}
		select {
		case it := <-f.items:
			switch {
			case it.ch != nil:
				f.cur, f.pos, f.num = it.ch, 0, 0
			case it.over != nil:
				f.line = *it.over
				return true
			case it.ev != nil:
				if f.opts.OnEvent != nil {
					f.opts.OnEvent(*it.ev)
				}
			case it.end:
				f.live--
			}
		case <-f.ctx.Done():
			f.err = f.ctx.Err()
			return false
		}
	}
}

// Line returns the line Next found. Its Text is valid until the next call
// to Next.
func (f *Follower) Line() Line { return f.line }

// Err returns nil when every input ended, or the context's error when
// following was stopped.
func (f *Follower) Err() error { return f.err }

// Close stops following and waits until every goroutine of the Follower
// has returned, but for a read of standard input that cannot be
// interrupted (a socket): that one returns with its read. It is safe to
// call more than once.
func (f *Follower) Close() error {
	f.closeOnce.Do(f.cancel)
	f.wg.Wait()
	return nil
}
