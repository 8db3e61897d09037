package follow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/testutil"
	"github.com/lohisoft/lohibot-audit/parse"
)

func TestMaxLineIsTheReaders(t *testing.T) {
	if DefaultMaxLine != parse.MaxLineLength {
		t.Errorf("DefaultMaxLine = %d, parse.MaxLineLength = %d: overlong lines would be told apart differently", DefaultMaxLine, parse.MaxLineLength)
	}
}

func TestNoInput(t *testing.T) {
	if _, err := New(context.Background(), nil, Options{}); !errors.Is(err, ErrNoInput) {
		t.Errorf("New without paths: %v", err)
	}
}

func TestFromEndOrStart(t *testing.T) {
	for _, fromStart := range []bool{false, true} {
		t.Run(fmt.Sprint("FromStart=", fromStart), func(t *testing.T) {
			p := tempLog(t)
			testutil.WriteFile(t, p, "old 1\nold 2\n")
			clk := &clock{}
			c := start(t, []string{p}, Options{FromStart: fromStart, Polling: true, NewTicker: clk.newTicker})
			appendFile(t, p, "new 1\nnew 2\n")
			clk.settle(t)
			want := []string{"new 1", "new 2"}
			if fromStart {
				want = append([]string{"old 1", "old 2"}, want...)
			}
			got := c.waitLines(len(want))
			if !slices.Equal(got, want) {
				t.Fatalf("lines %q, want %q", got, want)
			}
			ls := lines(c.snapshot())
			last := ls[len(ls)-1]
			if last.File != p || last.Offset != int64(len("old 1\nold 2\nnew 1\n")) || last.Size != 5 {
				t.Errorf("last line %+v: want file %s, offset 18, size 5", last, p)
			}
			wantNum := int64(2)
			if fromStart {
				wantNum = 4
			}
			if last.Num != wantNum {
				t.Errorf("last line number %d, want %d", last.Num, wantNum)
			}
			if ev := events(c.snapshot(), Opened); len(ev) != 1 || (ev[0].Offset == 0) != fromStart {
				t.Errorf("Opened events %+v", ev)
			}
		})
	}
}

func TestPartialLineHeldUntilNewline(t *testing.T) {
	p := tempLog(t)
	testutil.WriteFile(t, p, "")
	clk := &clock{}
	c := start(t, []string{p}, Options{Polling: true, NewTicker: clk.newTicker})
	appendFile(t, p, "first half ")
	clk.settle(t) // the partial line has been read
	appendFile(t, p, "second half\nnext\n")
	clk.settle(t)
	if got := c.waitLines(2); !slices.Equal(got, []string{"first half second half", "next"}) {
		t.Errorf("lines %q", got)
	}
}

func TestNotificationsWakeWithoutTicks(t *testing.T) {
	p := tempLog(t)
	testutil.WriteFile(t, p, "")
	clk := &clock{} // never ticks: only notifications can wake the tailer
	c := start(t, []string{p}, Options{NewTicker: clk.newTicker})
	for i := 0; i < 20; i++ {
		appendFile(t, p, fmt.Sprintf("line %d\n", i))
		c.waitLines(i + 1)
	}
	got := c.waitLines(20)
	for i, s := range got {
		if s != fmt.Sprintf("line %d", i) {
			t.Fatalf("line %d is %q", i, s)
		}
	}
}

func TestRenameRotation(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	testutil.WriteFile(t, p, "")
	clk := &clock{}
	// Linger 4: a settle may leave one more poll running, so the switch can
	// be up to two polls ahead of the test when it writes the late line.
	c := start(t, []string{p}, Options{Polling: true, NewTicker: clk.newTicker, Linger: 4})

	w, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.WriteString("a1\na2\npart")
	clk.settle(t)
	if err := os.Rename(p, p+".1"); err != nil {
		t.Fatal(err)
	}
	// The writer has not reopened its log: it goes on writing to the
	// renamed file, and nothing is missing while the new name is absent.
	w.WriteString("ial\na3\n")
	clk.settle(t)
	if got := c.waitLines(4); !slices.Equal(got, []string{"a1", "a2", "partial", "a3"}) {
		t.Fatalf("before the new file: %q", got)
	}
	testutil.WriteFile(t, p, "") // created empty: the writer may still use the old one
	w.WriteString("a4\nlast partial")
	clk.settle(t)
	if n := len(events(c.snapshot(), Rotated)); n != 0 {
		t.Fatalf("switched to an empty new file (%d Rotated events)", n)
	}
	appendFile(t, p, "b1\nb2\n")
	clk.settle(t)
	c.waitEvent(Rotated, 1)
	got := c.waitLines(8)
	if want := []string{"a1", "a2", "partial", "a3", "a4", "last partial", "b1", "b2"}; !slices.Equal(got, want) {
		t.Fatalf("lines %q, want %q", got, want)
	}
	ls := lines(c.snapshot())
	if b1 := ls[6]; b1.Num != 1 || b1.Offset != 0 {
		t.Errorf("first line of the new file: num %d offset %d, want 1 and 0", b1.Num, b1.Offset)
	}
	// The rotation event comes between the old file's lines and the new
	// one's.
	var order []string
	for _, r := range c.snapshot() {
		if r.ev != nil && r.ev.Kind == Rotated {
			order = append(order, "ROTATED")
		} else if r.ev == nil {
			order = append(order, string(r.line.Text))
		}
	}
	if i := slices.Index(order, "ROTATED"); i != 6 {
		t.Errorf("order %q: rotation not between the files", order)
	}

	// A late line in the old file (a writer that reopened late) is still
	// read while the old file lingers.
	w.WriteString("late\n")
	clk.settle(t)
	if got := c.waitLines(9); got[8] != "late" {
		t.Errorf("late line: %q", got)
	}
	// After Linger polls the old file is let go.
	clk.settle(t)
	clk.settle(t)
	clk.settle(t)
	w.WriteString("too late\n")
	appendFile(t, p, "b3\n")
	clk.settle(t)
	if got := c.waitLines(10); got[9] != "b3" || slices.Contains(got, "too late") {
		t.Errorf("after lingering: %q", got)
	}
}

func TestCopyTruncate(t *testing.T) {
	p := tempLog(t)
	testutil.WriteFile(t, p, "")
	clk := &clock{}
	c := start(t, []string{p}, Options{Polling: true, NewTicker: clk.newTicker})

	appendFile(t, p, "x1\nx2 partial")
	clk.settle(t)
	// Shorter: the usual copytruncate.
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	clk.settle(t)
	appendFile(t, p, "y1\n")
	clk.settle(t)
	c.waitEvent(Truncated, 1)
	if got := c.waitLines(3); !slices.Equal(got, []string{"x1", "x2 partial", "y1"}) {
		t.Fatalf("after truncation: %q", got)
	}
	if l := lines(c.snapshot())[2]; l.Num != 1 || l.Offset != 0 {
		t.Errorf("first line after truncation: num %d offset %d", l.Num, l.Offset)
	}

	// Truncated and written past the old end between two looks: the size
	// alone does not show it, the bytes before the offset do.
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	appendFile(t, p, "z1 a longer line than before\nz2\n")
	clk.settle(t)
	c.waitEvent(Truncated, 2)
	if got := c.waitLines(5); !slices.Equal(got[3:], []string{"z1 a longer line than before", "z2"}) {
		t.Fatalf("after truncation and regrowth: %q", got)
	}
}

func TestMissingThenAppears(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "later", "access.log") // its directory is missing too
	for _, polling := range []bool{false, true} {
		t.Run(fmt.Sprint("polling=", polling), func(t *testing.T) {
			os.RemoveAll(filepath.Dir(p))
			clk := &clock{}
			c := start(t, []string{p}, Options{Polling: polling, NewTicker: clk.newTicker})
			clk.settle(t)
			clk.settle(t)
			c.waitEvent(Missing, 1)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			testutil.WriteFile(t, p, "first\n") // appeared: read from its start
			clk.settle(t)
			appendFile(t, p, "second\n")
			clk.settle(t)
			if got := c.waitLines(2); !slices.Equal(got, []string{"first", "second"}) {
				t.Fatalf("lines %q", got)
			}
			if n := len(events(c.snapshot(), Missing)); n != 1 {
				t.Errorf("%d Missing events, want 1", n)
			}
		})
	}
}

func TestDeletedAndBack(t *testing.T) {
	p := tempLog(t)
	testutil.WriteFile(t, p, "")
	clk := &clock{}
	c := start(t, []string{p}, Options{Polling: true, NewTicker: clk.newTicker})
	appendFile(t, p, "before\n")
	clk.settle(t)
	c.waitLines(1)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	clk.settle(t)
	clk.settle(t)
	c.waitEvent(Missing, 1)
	testutil.WriteFile(t, p, "after\n")
	clk.settle(t)
	if got := c.waitLines(2); !slices.Equal(got, []string{"before", "after"}) {
		t.Fatalf("lines %q", got)
	}
	if n := len(events(c.snapshot(), Missing)); n != 1 {
		t.Errorf("%d Missing events, want 1", n)
	}
}

func TestUnreadableSaidOnceAndWaitedOut(t *testing.T) {
	p := tempLog(t)
	if err := os.Mkdir(p, 0o755); err != nil { // a directory cannot be read as a log
		t.Fatal(err)
	}
	clk := &clock{}
	c := start(t, []string{p}, Options{Polling: true, NewTicker: clk.newTicker})
	clk.settle(t)
	clk.settle(t)
	c.waitEvent(Unreadable, 1)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	testutil.WriteFile(t, p, "readable\n")
	clk.settle(t)
	if got := c.waitLines(1); got[0] != "readable" {
		t.Fatalf("lines %q", got)
	}
	if n := len(events(c.snapshot(), Unreadable)); n != 1 {
		t.Errorf("%d Unreadable events, want 1: %v", n, events(c.snapshot(), Unreadable))
	}
}

func TestOverlongLine(t *testing.T) {
	p := tempLog(t)
	testutil.WriteFile(t, p, "")
	clk := &clock{}
	c := start(t, []string{p}, Options{Polling: true, NewTicker: clk.newTicker, MaxLine: 1000})
	long := strings.Repeat("L", 300_000)
	appendFile(t, p, "short\n"+long[:100_000])
	clk.settle(t)
	appendFile(t, p, long[100_000:]+"\nafter\n"+strings.Repeat("M", 5000))
	clk.settle(t)
	if err := os.Truncate(p, 0); err != nil { // a rotation ends the partial overlong line
		t.Fatal(err)
	}
	clk.settle(t)
	ls := lines(c.waitFor("4 lines", func(rs []rec) bool { return len(lines(rs)) >= 4 }))
	want := []struct {
		text     string
		overlong bool
		size     int64
		num      int64
		off      int64
	}{
		{"short", false, 5, 1, 0},
		{strings.Repeat("L", 200), true, 300_000, 2, 6},
		{"after", false, 5, 3, 300_007},
		{strings.Repeat("M", 200), true, 5000, 4, 300_013},
	}
	for i, w := range want {
		l := ls[i]
		if string(l.Text) != w.text || l.Overlong != w.overlong || l.Size != w.size || l.Num != w.num || l.Offset != w.off {
			t.Errorf("line %d: %q… overlong %v size %d num %d offset %d; want %q… %v %d %d %d",
				i, clip(l.Text), l.Overlong, l.Size, l.Num, l.Offset, clip([]byte(w.text)), w.overlong, w.size, w.num, w.off)
		}
	}
}

func clip(b []byte) string {
	if len(b) > 10 {
		return string(b[:10])
	}
	return string(b)
}

func TestSeveralFiles(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := 0; i < 4; i++ {
		p := filepath.Join(dir, fmt.Sprintf("site%d.log", i))
		testutil.WriteFile(t, p, "")
		paths = append(paths, p)
	}
	paths = append(paths, paths[0]) // named twice: followed once
	c := start(t, paths, Options{})
	const n = 300
	done := make(chan struct{})
	for _, p := range paths[:4] {
		go func() {
			defer func() { done <- struct{}{} }()
			w, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Error(err)
				return
			}
			defer w.Close()
			for i := 1; i <= n; i++ {
				fmt.Fprintf(w, "%s %d\n", filepath.Base(p), i)
			}
		}()
	}
	for range 4 {
		<-done
	}
	ls := lines(c.waitFor("all lines", func(rs []rec) bool { return len(lines(rs)) >= 4*n }))
	next := map[string]int64{}
	for _, l := range ls {
		next[l.File]++
		if want := fmt.Sprintf("%s %d", filepath.Base(l.File), next[l.File]); string(l.Text) != want || l.Num != next[l.File] {
			t.Fatalf("%s line %d is %q, want %q", l.File, l.Num, l.Text, want)
		}
	}
	if len(ls) != 4*n || len(next) != 4 {
		t.Errorf("%d lines from %d files", len(ls), len(next))
	}
}

func TestStdin(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := start(t, []string{"-"}, Options{Stdin: r})
	io.WriteString(w, "one\ntwo\nthree without newline")
	w.Close()
	<-c.done // Next returned false: standard input ended
	if got := texts(c.snapshot()); !slices.Equal(got, []string{"one", "two", "three without newline"}) {
		t.Errorf("lines %q", got)
	}
	if ev := events(c.snapshot(), Ended); len(ev) != 1 || ev[0].Err != nil || ev[0].File != "-" {
		t.Errorf("Ended events %+v", ev)
	}
	if err := c.f.Err(); err != nil {
		t.Errorf("Err after the end of input: %v", err)
	}
}

func TestStdinWithFilesGoesOn(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := tempLog(t)
	testutil.WriteFile(t, p, "")
	c := start(t, []string{"-", p}, Options{Stdin: r})
	io.WriteString(w, "from stdin\n")
	w.Close()
	c.waitEvent(Ended, 1)
	appendFile(t, p, "from file\n")
	got := c.waitLines(2)
	slices.Sort(got)
	if !slices.Equal(got, []string{"from file", "from stdin"}) {
		t.Errorf("lines %q", got)
	}
}

func TestCancelStopsEverything(t *testing.T) {
	r, w, err := os.Pipe() // never written, never closed: a blocked read
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	p := tempLog(t)
	testutil.WriteFile(t, p, "")
	ctx, cancel := context.WithCancel(context.Background())
	f, err := New(ctx, []string{"-", p, filepath.Join(t.TempDir(), "missing.log")}, Options{Stdin: r})
	if err != nil {
		t.Fatal(err)
	}
	nextDone := make(chan bool)
	go func() { nextDone <- f.Next() }()
	cancel()
	waitOrHang(t, "Next after cancel", func() {
		if <-nextDone {
			t.Error("Next returned a line after cancel")
		}
	})
	waitOrHang(t, "Close after cancel", func() { f.Close() })
	if !errors.Is(f.Err(), context.Canceled) {
		t.Errorf("Err after cancel: %v", f.Err())
	}
}

func waitOrHang(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { fn(); close(done) }()
	select {
	case <-done:
	case <-time.After(hang):
		t.Fatalf("%s: hung", what)
	}
}

func TestEventStrings(t *testing.T) {
	for _, tt := range []struct {
		e    Event
		want string
	}{
		{Event{Kind: Opened, File: "a.log", Offset: 10}, "a.log: following from its end (byte 10)"},
		{Event{Kind: Opened, File: "-"}, "standard input: following from its start"},
		{Event{Kind: Missing, File: "a.log"}, "a.log: does not exist yet: waiting for it"},
		{Event{Kind: Unreadable, File: "a.log", Err: os.ErrPermission}, "a.log: cannot read: permission denied: trying again"},
		{Event{Kind: Rotated, File: "a.log"}, "a.log: rotated: following the new file"},
		{Event{Kind: Truncated, File: "a.log"}, "a.log: truncated: reading it again from its start"},
		{Event{Kind: Ended, File: "-"}, "standard input: ended"},
		{Event{Kind: Polling, Err: errors.New("too many open files")}, "all files: no change notifications (too many open files): looking for changes periodically"},
	} {
		if got := tt.e.String(); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.e.Kind, got, tt.want)
		}
	}
}
