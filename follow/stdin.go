package follow

import (
	"io"
	"os"
	"time"
)

// startStdin reads standard input until it ends.
func (f *Follower) startStdin() {
	r, closer := f.opts.Stdin, io.Closer(nil)
	if r == nil {
		r, closer = openStdin()
	}
	sp := newSplitter(f, Stdin, 0)
	done := make(chan struct{})

	// A reader with deadlines (a pipe or terminal, reopened below) can be
	// interrupted; so can a regular file, which never blocks for long.
	// Another one is left to return with its read.
	type deadliner interface{ SetReadDeadline(time.Time) error }
	dl, ok := r.(deadliner)
	waitable := ok && dl.SetReadDeadline(time.Time{}) == nil
	if !waitable {
		if file, ok := r.(*os.File); ok {
			if fi, err := file.Stat(); err == nil && fi.Mode().IsRegular() {
				waitable = true
			}
		}
	}
	if waitable {
		f.wg.Add(1)
	}
	go func() {
		defer close(done)
		if waitable {
			defer f.wg.Done()
		}
		if closer != nil {
			defer closer.Close()
		}
		if !f.event(Event{Kind: Opened, File: Stdin}) {
			return
		}
		for {
			room := sp.room()
			n, err := r.Read(room)
			if n > 0 && !sp.took(n) {
				return
			}
			if err == nil {
				continue
			}
			if f.ctx.Err() != nil || !sp.flush() {
				return
			}
			e := Event{Kind: Ended, File: Stdin}
			if err != io.EOF {
				e.Err = err
			}
			if f.event(e) {
				f.send(item{end: true})
			}
			return
		}
	}()
	if dl != nil && waitable {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			select {
			case <-f.ctx.Done():
				dl.SetReadDeadline(time.Unix(1, 0))
			case <-done:
			}
		}()
	}
}

// openStdin returns standard input, reopened through /proc when it is a
// pipe or a terminal: the new open file can be read with deadlines without
// changing the one the process shares with others.
func openStdin() (io.Reader, io.Closer) {
	fi, err := os.Stdin.Stat()
	if err == nil && fi.Mode()&(os.ModeNamedPipe|os.ModeCharDevice) != 0 {
		if file, err := os.Open("/proc/self/fd/0"); err == nil {
			return file, file
		}
	}
	return os.Stdin, nil
}
