package follow

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// TestRotationStress writes numbered lines from another goroutine across
// many rotations, by rename-and-create and by copytruncate in turn, and
// checks that every line arrives exactly once and in order. The writer
// behaves as a web server does: it goes on writing to a renamed log until
// it reopens it, writes some lines in two pieces, and some long ones.
func TestRotationStress(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts func(*clock) Options
	}{
		// Notifications only: the ticker never ticks.
		{"notifications", func(c *clock) Options { return Options{NewTicker: c.newTicker} }},
		// Polling only, on a real fast ticker.
		{"polling", func(*clock) Options { return Options{Polling: true, PollInterval: time.Millisecond} }},
	} {
		t.Run(mode.name, func(t *testing.T) {
			p := tempLog(t)
			testutil.WriteFile(t, p, "")
			c := start(t, []string{p}, mode.opts(&clock{}))
			rotations, perGen := 30, 40
			if testing.Short() {
				rotations = 6
			}
			rng := rand.New(rand.NewPCG(1, 2))
			w, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { w.Close() }()
			seq := 0
			writeLines := func(w *os.File, n int) {
				for i := 0; i < n; i++ {
					seq++
					line := "line " + strconv.Itoa(seq) + " " + strings.Repeat("x", rng.IntN(200))
					if rng.IntN(50) == 0 {
						line += strings.Repeat("y", 200_000)
					}
					line += "\n"
					if rng.IntN(5) == 0 {
						cut := rng.IntN(len(line))
						io.WriteString(w, line[:cut])
						io.WriteString(w, line[cut:])
					} else {
						io.WriteString(w, line)
					}
				}
			}
			rotated, truncated := 0, 0
			for r := 0; r < rotations; r++ {
				writeLines(w, perGen)
				if r%2 == 0 {
					if err := os.Rename(p, p+".1"); err != nil {
						t.Fatal(err)
					}
					writeLines(w, 3) // to the renamed file, before the new one exists
					testutil.WriteFile(t, p, "")
					writeLines(w, 2) // still to the old file: the server has not reopened
					w.Close()
					if w, err = os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0); err != nil {
						t.Fatal(err)
					}
					writeLines(w, 1)
					rotated++
					c.waitEvent(Rotated, rotated) // one rotation at a time, as logrotate does
				} else {
					// copytruncate loses what was written after the copy; the
					// follower has caught up before it.
					n := seq
					c.waitFor(fmt.Sprintf("line %d before copytruncate", n), func(rs []rec) bool { return len(lines(rs)) >= n })
					data, err := os.ReadFile(p)
					if err != nil {
						t.Fatal(err)
					}
					// logrotate shifts the older copies first.
					os.Rename(p+".1", p+".2")
					os.WriteFile(p+".1", data, 0o644)
					if err := os.Truncate(p, 0); err != nil {
						t.Fatal(err)
					}
					truncated++
				}
			}
			writeLines(w, perGen)
			n := seq
			ls := lines(c.waitFor(fmt.Sprintf("all %d lines", n), func(rs []rec) bool { return len(lines(rs)) >= n }))
			for i, l := range ls {
				var got int
				text := string(l.Text)
				if l.Overlong {
					t.Fatalf("line %d overlong", i+1)
				}
				if _, err := fmt.Sscanf(text, "line %d ", &got); err != nil || got != i+1 {
					for _, x := range ls[max(0, i-3):min(len(ls), i+3)] {
						t.Logf("%d@%d size %d %.30q", x.Num, x.Offset, x.Size, x.Text)
					}
					t.Fatalf("delivered line %d is %.40q, want line %d", i+1, text, i+1)
				}
			}
			if len(ls) != n {
				t.Fatalf("%d lines delivered, %d written", len(ls), n)
			}
			rs := c.snapshot()
			if got := len(events(rs, Rotated)); got != rotated {
				t.Errorf("%d Rotated events, want %d", got, rotated)
			}
			if got := len(events(rs, Truncated)); got != truncated {
				t.Errorf("%d Truncated events, want %d", got, truncated)
			}
		})
	}
}
