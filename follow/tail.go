package follow

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// fingerprintLen is how many bytes before the read offset are compared
// with what the file holds there now, to notice a file truncated and
// written again past the offset between two looks.
const fingerprintLen = 64

// gen is one generation of a followed file: an open file and where
// reading is in it.
type gen struct {
	file   *os.File
	info   os.FileInfo // of file, when opened
	off    int64       // next byte to read
	sp     *splitter
	fp     []byte // the last bytes read, up to fingerprintLen
	linger int    // polls left, once rotated away
}

// Watch states of a tailer's directory.
const (
	unwatched int32 = iota
	watched
	notWatchable // a network file system: polling only
)

// tailer follows one name.
type tailer struct {
	f    *Follower
	name string // as given
	path string // cleaned
	dir  string
	wake chan struct{}

	cur     *gen
	retired []*gen

	startInfo os.FileInfo // the file as it was at start, when it could not be opened
	pending   []Event     // events of start, sent by run

	started     bool // run has begun: events go to Next
	missingSaid bool
	lastErr     string
	watch       atomic.Int32
	pollSaid    bool
}

func newTailer(f *Follower, name string) *tailer {
	p := filepath.Clean(name)
	return &tailer{f: f, name: name, path: p, dir: filepath.Dir(p), wake: make(chan struct{}, 1)}
}

// nudge wakes the tailer without blocking.
func (t *tailer) nudge() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// start opens the file at its current end (or start), before New returns.
func (t *tailer) start() {
	file, err := os.Open(t.path)
	if err != nil {
		if fi, serr := os.Stat(t.path); serr == nil {
			t.startInfo = fi
		}
		t.openFailed(err)
		return
	}
	fi, err := file.Stat()
	if err != nil {
		file.Close()
		t.openFailed(err)
		return
	}
	var off int64
	if !t.f.opts.FromStart && fi.Mode().IsRegular() {
		off = fi.Size()
	}
	t.use(file, fi, off)
}

// use makes file the current generation, read from off.
func (t *tailer) use(file *os.File, fi os.FileInfo, off int64) {
	t.cur = &gen{file: file, info: fi, off: off, sp: newSplitter(t.f, t.name, off)}
	// What precedes the start, to notice a truncation before the first read.
	if from := max(0, off-fingerprintLen); off > 0 {
		b := make([]byte, off-from)
		if n, _ := file.ReadAt(b, from); n == len(b) {
			t.cur.fp = b
		}
	}
	t.missingSaid, t.lastErr = false, ""
	t.say(Event{Kind: Opened, File: t.name, Offset: off})
}

// say sends an event, or keeps it for run when the tailer has not
// started.
func (t *tailer) say(e Event) bool {
	if !t.started {
		t.pending = append(t.pending, e)
		return true
	}
	return t.f.event(e)
}

// openFailed says once that the file is missing or unreadable.
func (t *tailer) openFailed(err error) {
	if errors.Is(err, fs.ErrNotExist) {
		if !t.missingSaid {
			t.missingSaid = true
			t.say(Event{Kind: Missing, File: t.name})
		}
		return
	}
	t.unreadable(err)
}

// unreadable says an error once until another one comes.
func (t *tailer) unreadable(err error) {
	if s := err.Error(); s != t.lastErr {
		t.lastErr = s
		t.say(Event{Kind: Unreadable, File: t.name, Err: err})
	}
}

// run follows the file until the Follower stops.
func (t *tailer) run(n *notifier, tick <-chan time.Time, stop func()) {
	defer stop()
	defer t.closeAll()
	t.started = true
	pending := t.pending
	t.pending = nil
	for _, e := range pending {
		if !t.f.event(e) {
			return
		}
	}
	ticked := false
	for {
		if n != nil && t.watch.Load() == unwatched {
			n.watch(t)
		}
		if !t.poll(ticked) {
			return
		}
		ticked = false
		select {
		case <-t.wake:
		case <-tick:
			ticked = true
		case <-t.f.ctx.Done():
			return
		}
	}
}

func (t *tailer) closeAll() {
	if t.cur != nil {
		t.cur.file.Close()
	}
	for _, g := range t.retired {
		g.file.Close()
	}
}

// poll reads what is new, and notices truncation, rotation and deletion.
// It returns false when following has stopped.
func (t *tailer) poll(ticked bool) bool {
	if !t.pollRetired(ticked) {
		return false
	}
	if t.cur == nil && !t.open() {
		return t.f.ctx.Err() == nil
	}
	g := t.cur
	if !t.catchUp(g) {
		return false
	}

	fi, err := os.Stat(t.path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			t.unreadable(err)
		} else if !t.missingSaid {
			// Gone from its directory: renamed (a rotation that has not
			// created the new file yet: keep reading the old one) or
			// deleted, which is said.
			if cfi, err := g.file.Stat(); err == nil && links(cfi) == 0 {
				t.missingSaid = true
				return t.say(Event{Kind: Missing, File: t.name})
			}
		}
		return true
	}
	if os.SameFile(fi, g.info) {
		return true
	}
	// The name points at another file. Until it has data, the writer may
	// still be writing to the old one.
	if fi.Mode().IsRegular() && fi.Size() == 0 {
		return true
	}
	nf, nfi, ok := t.openFile()
	if !ok {
		return true
	}
	// Read the old file to its end; its partial last line is whole now.
	if !t.catchUp(g) || !g.sp.flush() {
		nf.Close()
		return false
	}
	if t.f.opts.Linger > 0 {
		g.linger = t.f.opts.Linger
		t.retired = append(t.retired, g)
	} else {
		g.file.Close()
	}
	t.cur = &gen{file: nf, info: nfi, sp: newSplitter(t.f, t.name, 0)}
	t.missingSaid, t.lastErr = false, ""
	if !t.say(Event{Kind: Rotated, File: t.name}) {
		return false
	}
	return t.catchUp(t.cur)
}

// catchUp reads the current generation to its end, from its start again
// when it was truncated or rewritten. It returns false when following has
// stopped.
func (t *tailer) catchUp(g *gen) bool {
	rewritten := t.truncated(g)
	for {
		if rewritten {
			if !g.sp.flush() || !t.say(Event{Kind: Truncated, File: t.name}) {
				return false
			}
			g.off, g.fp = 0, g.fp[:0]
			g.sp.restart(0)
		}
		ok, again, err := t.readGen(g)
		if !ok {
			return false
		}
		if err != nil {
			t.unreadable(err)
			return t.f.ctx.Err() == nil
		}
		if !again {
			return true
		}
		rewritten = true
	}
}

// open opens the file when there is none: it has appeared or become
// readable. It is read from its start, or from where its end was at start
// when it is the same file that could not be opened then.
func (t *tailer) open() bool {
	file, fi, ok := t.openFile()
	if !ok {
		return false
	}
	var off int64
	if t.startInfo != nil && !t.f.opts.FromStart && os.SameFile(fi, t.startInfo) {
		off = min(t.startInfo.Size(), fi.Size())
	}
	t.startInfo = nil
	t.use(file, fi, off)
	return t.f.ctx.Err() == nil
}

// openFile opens the file its name points at now, and says why when it
// cannot be opened or asked about.
func (t *tailer) openFile() (*os.File, os.FileInfo, bool) {
	f, err := os.Open(t.path)
	if err != nil {
		t.openFailed(err)
		return nil, nil, false
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		t.unreadable(err)
		return nil, nil, false
	}
	return f, fi, true
}

// pollRetired reads rotated-away files for late lines, and closes them
// after their last poll.
func (t *tailer) pollRetired(ticked bool) bool {
	keep := t.retired[:0]
	for _, g := range t.retired {
		ok, rewritten, err := t.readGen(g)
		if !ok {
			return false
		}
		if rewritten || err != nil || t.truncated(g) {
			// Rewritten or unreadable: what it holds now is not the old
			// log's.
			g.linger = 0
		}
		if ticked {
			g.linger--
		}
		if g.linger > 0 {
			keep = append(keep, g)
			continue
		}
		if !g.sp.flush() {
			return false
		}
		g.file.Close()
	}
	clear(t.retired[len(keep):])
	t.retired = keep
	return true
}

// truncated reports whether the file got shorter than what was read.
// (Rewritten past the read offset shows when reading: fingerprintHolds.)
func (t *tailer) truncated(g *gen) bool {
	fi, err := g.file.Stat()
	return err == nil && fi.Mode().IsRegular() && fi.Size() < g.off
}

// readGen reads g to its current end or to a read error. ok is false when
// following has stopped; rewritten is true when the bytes before the read
// offset changed, so that what was read is not the old file's: nothing of
// it was delivered.
func (t *tailer) readGen(g *gen) (ok, rewritten bool, err error) {
	for {
		room := g.sp.room()
		n, err := g.file.ReadAt(room, g.off)
		if n > 0 {
			// Checked after the read: a truncation before it shows here.
			if !g.fingerprintHolds() {
				return true, true, nil
			}
			g.off += int64(n)
			g.noteFingerprint(room[:n])
			if !g.sp.took(n) {
				return false, false, nil
			}
		}
		switch {
		case err == io.EOF || (err == nil && n == 0):
			return true, false, nil
		case err != nil:
			return true, false, err
		}
	}
}

// fingerprintHolds reports whether the file still holds, before the read
// offset, the bytes last read there.
func (g *gen) fingerprintHolds() bool {
	if len(g.fp) == 0 {
		return true
	}
	var b [fingerprintLen]byte
	n, _ := g.file.ReadAt(b[:len(g.fp)], g.off-int64(len(g.fp)))
	return n == len(g.fp) && bytes.Equal(b[:n], g.fp)
}

// noteFingerprint keeps the last fingerprintLen bytes read.
func (g *gen) noteFingerprint(b []byte) {
	if len(b) >= fingerprintLen {
		g.fp = append(g.fp[:0], b[len(b)-fingerprintLen:]...)
		return
	}
	if drop := len(g.fp) + len(b) - fingerprintLen; drop > 0 {
		g.fp = g.fp[:copy(g.fp, g.fp[drop:])]
	}
	g.fp = append(g.fp, b...)
}
