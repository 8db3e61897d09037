package follow

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// drain returns what a tailer driven by hand has sent.
func drain(f *Follower) (evs []EventKind, ls []Line) {
	for {
		select {
		case it := <-f.items:
			switch {
			case it.ev != nil:
				evs = append(evs, it.ev.Kind)
			case it.ch != nil:
				f.cur, f.pos, f.num = it.ch, 0, 0
				f.live = 1
				for f.cur != nil && f.pos < len(f.cur.data) && f.Next() {
					l := f.Line()
					l.Text = slices.Clone(l.Text)
					ls = append(ls, l)
				}
				f.cur = nil
			}
		default:
			return evs, ls
		}
	}
}

// TestRewrittenPastOffset drives one tailer by hand: the file is truncated
// and written again past the offset the tailer had reached, before it
// looks again. Its size says nothing; the bytes before the offset do.
func TestRewrittenPastOffset(t *testing.T) {
	for _, atStart := range []bool{true, false} {
		p := tempLog(t)
		testutil.WriteFile(t, p, "old line 1\nold line 2\n")
		f := &Follower{opts: Options{MaxLine: DefaultMaxLine}, ctx: context.Background(), items: make(chan item, 64)}
		tl := newTailer(f, p)
		tl.started = true
		tl.start() // at the end: nothing read yet, only the bytes before it noted
		if !atStart {
			appendFile(t, p, "old line 3\n")
			if !tl.catchUp(tl.cur) {
				t.Fatal("catchUp stopped")
			}
		}
		if err := os.Truncate(p, 0); err != nil {
			t.Fatal(err)
		}
		appendFile(t, p, "new line A, longer than all the old lines together\nnew line B\n")
		if !tl.catchUp(tl.cur) {
			t.Fatal("catchUp stopped")
		}
		evs, ls := drain(f)
		var texts []string
		for _, l := range ls {
			texts = append(texts, string(l.Text))
		}
		want := []string{"new line A, longer than all the old lines together", "new line B"}
		if !atStart {
			want = append([]string{"old line 3"}, want...)
		}
		if !slices.Equal(evs, []EventKind{Opened, Truncated}) || !slices.Equal(texts, want) {
			t.Errorf("atStart=%v: events %v lines %q; want [opened truncated] and %q", atStart, evs, texts, want)
		}
		if l := ls[len(ls)-1]; l.Num != 2 || l.Offset != int64(len(want[len(want)-2])+1) {
			t.Errorf("atStart=%v: last line num %d offset %d", atStart, l.Num, l.Offset)
		}
		tl.closeAll()
	}
}
