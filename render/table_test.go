package render

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/audit"
)

// TestTableFitsWidth: no line of the table output is wider than the
// width, for reports filled at random with hostile strings (wide and
// zero-width runes, controls, long words) and every width from 40 to 200.
func TestTableFitsWidth(t *testing.T) {
	table, _ := Lookup("table")
	rng := rand.New(rand.NewPCG(3, 4))
	reports := randomReports(400)
	for i, r := range reports {
		width := 40 + rng.IntN(161)
		if i < 161 {
			width = 40 + i
		}
		var out bytes.Buffer
		if err := table.WriteReport(&out, r, Options{Width: width}); err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(out.String(), "\n") {
			if w := textWidth(line); w > width {
				t.Fatalf("report %d at width %d: line %d is %d wide:\n%s\n\nwhole output:\n%s", i, width, n+1, w, line, out.String())
			}
		}
	}
}

// TestTableNarrowKeepsText: a table narrowed or written as blocks keeps
// every cell's text, wrapped, not cut.
func TestTableNarrowKeepsText(t *testing.T) {
	tab := &Table{
		Header:       []string{"IP", "VERDICT", "WHY", "FIRST SEEN"},
		Rows:         [][]string{{"203.0.113.200", "spoofed", "ip-list: not-in-ip-list with a much longer reason than fits", "2026-12-01 12:00:00Z"}},
		TitleColumns: 2,
	}
	for _, width := range []int{40, 50, 60, 80, 200} {
		out := tab.text(false, width)
		flat := strings.Join(strings.Fields(strings.NewReplacer("│", " ", "┌", " ", "┐", " ", "└", " ", "┘", " ", "─", " ", "┬", " ", "┴", " ", "├", " ", "┤", " ", "┼", " ").Replace(out)), " ")
		for _, cell := range tab.Rows[0] {
			for _, word := range strings.Fields(cell) {
				if !strings.Contains(flat, word) {
					t.Errorf("width %d: %q is lost:\n%s", width, word, out)
				}
			}
		}
	}
	if got := tab.text(false, 0); strings.Count(got, "\n") != 5 {
		t.Errorf("without a width the table is wrapped:\n%s", got)
	}
	if got := tab.text(true, 40); strings.Count(got, "\n") != 3 {
		t.Errorf("Markdown is wrapped:\n%s", got)
	}
}

func TestWrap(t *testing.T) {
	tests := []struct {
		in    string
		width int
		want  []string
	}{
		{"", 5, []string{""}},
		{"fits", 4, []string{"fits"}},
		{"a b c", 3, []string{"a b", "c"}},
		{"2026-12-01 07:00:06Z", 10, []string{"2026-12-01", "07:00:06Z"}},
		{"abcdefgh", 3, []string{"abc", "def", "gh"}},
		{"ab cdefgh", 3, []string{"ab", "cde", "fgh"}},
		{"日本日本", 5, []string{"日本", "日本"}},
		{"e\u0301e\u0301e\u0301", 2, []string{"e\u0301e\u0301", "e\u0301"}},
	}
	for _, tc := range tests {
		got := wrap(tc.in, tc.width)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("wrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
		for _, l := range got {
			if textWidth(l) > tc.width {
				t.Errorf("wrap(%q, %d): %q is too wide", tc.in, tc.width, l)
			}
		}
	}
}

// TestTopByHits: addresses by hits, most first, ties in the order given,
// the top only when asked.
func TestTopByHits(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		n := rng.IntN(60)
		ips := make([]audit.IPReport, n)
		for i := range ips {
			ips[i] = audit.IPReport{IP: fmt.Sprint(i), Hits: int64(rng.IntN(6))}
		}
		all := topByHits(func(yield func(audit.IPReport) bool) {
			for _, ip := range ips {
				if !yield(ip) {
					return
				}
			}
		}, 0)
		if len(all) != n {
			t.Fatalf("all: %d addresses, want %d", len(all), n)
		}
		for i := 1; i < n; i++ {
			a, b := all[i-1], all[i]
			var ai, bi int
			fmt.Sscan(a.IP, &ai)
			fmt.Sscan(b.IP, &bi)
			if a.Hits < b.Hits || a.Hits == b.Hits && ai > bi {
				t.Fatalf("%v before %v", a, b)
			}
		}
		top := rng.IntN(10) + 1
		got := topByHits(func(yield func(audit.IPReport) bool) {
			for _, ip := range ips {
				if !yield(ip) {
					return
				}
			}
		}, top)
		want := all[:min(top, n)]
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("top %d:\n got %v\nwant %v", top, got, want)
		}
	}
}

// TestTableKeepsWordsWhole: a box table fitted to a width never breaks a
// word of a column not marked Break (addresses, site names, reasons,
// kinds, times), nor a header word; it narrows, or turns to blocks,
// instead. Random tables of hostile cells at every width from 20 to 200.
func TestTableKeepsWordsWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	headers := []string{"IP", "VERDICT", "WHY", "HITS", "SITE", "CLAIMED HITS", "ROBOTS.TXT FETCHES", "CHECKS SKIPPED", "LINE"}
	boxes := 0
	for k := range 1500 {
		n := 1 + rng.IntN(6)
		tab := &Table{TitleColumns: 1 + rng.IntN(2)}
		for range n {
			tab.Header = append(tab.Header, headers[rng.IntN(len(headers))])
			tab.Break = append(tab.Break, rng.IntN(3) == 0)
		}
		for range 1 + rng.IntN(5) {
			var row []string
			for range n {
				var parts []string
				for range 1 + rng.IntN(3) {
					parts = append(parts, Cell(hostileStrings[rng.IntN(len(hostileStrings))], 40))
				}
				row = append(row, strings.Join(parts, " "))
			}
			tab.Rows = append(tab.Rows, row)
		}
		width := 20 + k%181
		out := tab.text(false, width)
		if !strings.HasPrefix(out, "┌") {
			continue
		}
		boxes++
		var cells []string
		for _, line := range strings.Split(out, "\n") {
			for _, c := range strings.Split(line, "│") {
				cells = append(cells, strings.TrimSpace(c))
			}
		}
		whole := func(word string) bool {
			for _, c := range cells {
				for _, w := range strings.Split(c, " ") {
					if w == word {
						return true
					}
				}
			}
			return false
		}
		for i, h := range tab.Header {
			for _, word := range strings.Fields(h) {
				if !whole(word) {
					t.Fatalf("table %d at width %d: header word %q broken:\n%s", k, width, word, out)
				}
			}
			if tab.Break[i] {
				continue
			}
			for _, row := range tab.Rows {
				for _, word := range strings.Split(row[i], " ") {
					if word != "" && !whole(word) {
						t.Fatalf("table %d at width %d: word %q of column %s broken:\n%s", k, width, word, h, out)
					}
				}
			}
		}
	}
	if boxes < 300 {
		t.Fatalf("only %d of the tables were drawn as boxes: the test checks too little", boxes)
	}
}

// TestSitesTableAtWidths: the sample's sites table gives up the width of
// its number columns' headers first, and keeps the site name and the
// kinds of skipped checks whole at every width.
func TestSitesTableAtWidths(t *testing.T) {
	tab := &Table{
		Header:       []string{"SITE", "CLAIMED HITS", "GENUINE PAGES", "ROBOTS.TXT FETCHES", "VIOLATIONS", "CHECKS SKIPPED"},
		Rows:         [][]string{{"www.example.org", "42", "28", "1", "7", "concurrency, robots-not-fetched"}},
		TitleColumns: 1,
	}
	want100 := `┌─────────────────┬─────────┬─────────┬────────────┬────────────┬─────────────────────────────────┐
│      SITE       │ CLAIMED │ GENUINE │ ROBOTS.TXT │ VIOLATIONS │         CHECKS SKIPPED          │
│                 │  HITS   │  PAGES  │  FETCHES   │            │                                 │
├─────────────────┼─────────┼─────────┼────────────┼────────────┼─────────────────────────────────┤
│ www.example.org │ 42      │ 28      │ 1          │ 7          │ concurrency, robots-not-fetched │
└─────────────────┴─────────┴─────────┴────────────┴────────────┴─────────────────────────────────┘
`
	if got := tab.text(false, 100); got != want100 {
		t.Errorf("at 100 columns:\n%s\nwant:\n%s", got, want100)
	}
	want80 := `www.example.org
  claimed hits        42
  genuine pages       28
  robots.txt fetches  1
  violations          7
  checks skipped      concurrency, robots-not-fetched
`
	if got := tab.text(false, 80); got != want80 {
		t.Errorf("at 80 columns:\n%s\nwant:\n%s", got, want80)
	}
	for width := MinWidth; width <= 140; width++ {
		got := tab.text(false, width)
		for _, word := range []string{"www.example.org", "robots-not-fetched"} {
			if width >= 40 && !strings.Contains(got, word) {
				t.Errorf("at %d columns %q is broken:\n%s", width, word, got)
			}
		}
	}
}

// TestPrintfKeepsText: a line wrapped by Printf reads as it was once its
// breaks are joined: the words broken to fit are not split by a space.
func TestPrintfKeepsText(t *testing.T) {
	line := "- googlebot: https://developers.google.com/static/crawling/ipranges/user-triggered-fetchers-google.json, https://www.bing.com/toolbox/bingbot.json and more"
	for width := MinWidth; width <= 100; width++ {
		var out bytes.Buffer
		NewText(&out, false, width).Printf("%s\n", line)
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		var words []string
		for i, l := range lines {
			if textWidth(l) > width {
				t.Errorf("at %d: line %q is wider", width, l)
			}
			if i > 0 && !strings.HasPrefix(l, "  ") {
				t.Errorf("at %d: line %q is not indented under the item", width, l)
			}
			l = strings.TrimPrefix(l, "  ")
			if !strings.Contains(line, l) {
				t.Errorf("at %d: line %q is not of the text", width, l)
			}
			words = append(words, l)
		}
		if got := strings.Join(words, ""); strings.ReplaceAll(got, " ", "") != strings.ReplaceAll(line, " ", "") {
			t.Errorf("at %d the text became %q", width, got)
		}
	}
}

// TestTableKeepsTimesWhole: a time is never wrapped at its space, in any
// column and at any width the table is drawn at: a box whose time columns
// hold each time on one line, or blocks. The addresses table at 100
// columns once showed FIRST SEEN's clock on a line of its own while LAST
// SEEN stayed whole.
func TestTableKeepsTimesWhole(t *testing.T) {
	const first, last = "2026-12-01 07:00:06Z", "2026-12-01 07:03:41Z"
	for _, width := range []int{60, 80, 90, 100, 110, 120, 200} {
		tab := &Table{
			Header: []string{"IP", "VERDICT", "WHY", "HITS", "PTR", "FIRST SEEN", "LAST SEEN"},
			Rows: [][]string{
				{"192.0.2.66", "spoofed", "ip-list: not-in-ip-list", "10", "", first, last},
				{"2001:db8:4:7::1", "spoofed", "ip-list: ipv6", "1", "", first, last},
			},
			Whole:        []bool{5: true, 6: true},
			TitleColumns: 2,
		}
		tab.withCrawler(1, func(int) string { return "lohisoftbot" })
		out := tab.text(false, width)
		for _, l := range strings.Split(out, "\n") {
			if textWidth(l) > width {
				t.Errorf("width %d: a line of %d columns:\n%s", width, textWidth(l), out)
			}
		}
		if got := strings.Count(out, first) + strings.Count(out, last); got != 4 {
			t.Errorf("width %d: %d of 4 times whole:\n%s", width, got, out)
		}
	}
}
