package follow

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync/atomic"

	"github.com/fsnotify/fsnotify"
)

// notifier wakes tailers when something happens in their directories.
// Without it (Options.Polling, or no watcher could be made) tailers only
// poll.
type notifier struct {
	f      *Follower
	w      *fsnotify.Watcher
	byDir  map[string][]*tailer // read-only once made
	all    []*tailer
	failed atomic.Bool // a watcher error was said
}

// newNotifier returns nil when notifications are off or cannot be had; the
// latter is said with a Polling event.
func newNotifier(f *Follower, tailers []*tailer) *notifier {
	if f.opts.Polling {
		return nil
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		tailers[0].say(Event{Kind: Polling, Err: fmt.Errorf("file system notifications: %w", err)})
		return nil
	}
	n := &notifier{f: f, w: w, byDir: map[string][]*tailer{}, all: tailers}
	for _, t := range tailers {
		n.byDir[t.dir] = append(n.byDir[t.dir], t)
	}
	return n
}

// watch starts watching t's directory. A directory that does not exist
// yet is tried again at the next poll; a failure is said once per file.
func (n *notifier) watch(t *tailer) {
	if fsName := remote(t.dir); fsName != "" {
		t.watch.Store(notWatchable)
		t.say(Event{Kind: Polling, File: t.name, Err: fmt.Errorf("%s is on a network file system (%s)", t.dir, fsName)})
		return
	}
	err := n.w.Add(t.dir)
	if err == nil {
		t.watch.Store(watched)
		return
	}
	if !errors.Is(err, fs.ErrNotExist) && !t.pollSaid {
		t.pollSaid = true
		t.say(Event{Kind: Polling, File: t.name, Err: fmt.Errorf("watch %s: %w", t.dir, err)})
	}
}

// run hands notifications to tailers until the Follower stops.
func (n *notifier) run() {
	defer n.w.Close()
	for {
		select {
		case ev, ok := <-n.w.Events:
			if !ok {
				return
			}
			for _, t := range n.byDir[filepath.Dir(ev.Name)] {
				t.nudge()
			}
			// The directory itself went away: watch it again once it is
			// back.
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				for _, t := range n.byDir[filepath.Clean(ev.Name)] {
					t.watch.CompareAndSwap(watched, unwatched)
					t.nudge()
				}
			}
		case err, ok := <-n.w.Errors:
			if !ok {
				return
			}
			// An overflow lost events: look at everything. Other errors
			// are said once; polling goes on regardless.
			if !errors.Is(err, fsnotify.ErrEventOverflow) && n.failed.CompareAndSwap(false, true) {
				if !n.f.event(Event{Kind: Polling, Err: fmt.Errorf("file system notifications: %w", err)}) {
					return
				}
			}
			for _, t := range n.all {
				t.nudge()
			}
		case <-n.f.ctx.Done():
			return
		}
	}
}
