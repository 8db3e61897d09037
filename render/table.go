package render

import (
	"slices"
	"strings"

	"github.com/clipperhouse/displaywidth"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// MinWidth is the narrowest width a table is laid out for: a smaller
// positive width is taken as MinWidth.
const MinWidth = 20

// Table is a table for people: drawn with box characters for a terminal,
// or a GitHub-flavoured Markdown table, by tablewriter. Cells are written
// as given: escape text from strangers before (Text.Cell does).
//
// At a width (Text's), a box table whose lines would be wider is narrowed
// by the cheapest means first: headers wrapped at spaces (a column of
// numbers under a long header gets as narrow as its numbers), then cells
// wrapped at spaces (not in the Whole columns), then, in the Break columns
// only, words broken. Within each step the column whose narrowing adds the
// fewest lines goes first.
// When even that cannot fit, each row is written as a block: the title
// columns on one line, then one indented line per other column with its
// name, so that addresses, site names and reasons stay whole. A Markdown
// table is never wrapped.
type Table struct {
	Header []string
	Rows   [][]string
	// Break marks the columns of free text (a log line, a path, a
	// parser's reason) whose words may be broken to make the table fit;
	// the words of the other columns (addresses, site names, reasons such
	// as not-in-ip-list, kinds, times) are never broken in a box table.
	Break []bool
	// Whole marks the columns whose cells are one unit although they hold
	// a space (a time: "2026-12-01 07:00:06Z"): never wrapped, so that a
	// time is not read as a date with its clock on the next line.
	Whole []bool
	// TitleColumns is how many leading columns make a block's first line
	// (at least 1).
	TitleColumns int
	// Blocks says to write rows as blocks as soon as the table is wider
	// than the width, without narrowing columns first: for rows whose
	// long text reads better whole than wrapped in a narrow column.
	Blocks bool
}

// withCrawler inserts a CRAWLER column at column i, the cell of row r
// being cell(r), and counts it among the title columns when it falls
// among them: a row's crawler belongs with its address or site.
func (t *Table) withCrawler(i int, cell func(r int) string) {
	t.Header = slices.Insert(slices.Clone(t.Header), i, "CRAWLER")
	for r, row := range t.Rows {
		t.Rows[r] = slices.Insert(row, i, cell(r))
	}
	if i < len(t.Break) {
		t.Break = slices.Insert(slices.Clone(t.Break), i, false)
	}
	if i < len(t.Whole) {
		t.Whole = slices.Insert(slices.Clone(t.Whole), i, false)
	}
	if i <= t.TitleColumns {
		t.TitleColumns++
	}
}

// leastBreak is the narrowest a Break column is made (or its longest
// header word, when that is wider).
const leastBreak = 12

// textWidth is the number of terminal columns s takes, as tablewriter
// counts them (its East Asian setting included), so that the widths
// decided here are the widths it draws.
func textWidth(s string) int { return twwidth.Width(s) }

// text returns the table as Markdown when md, else as a box table at
// most width columns wide (0: no limit).
func (t *Table) text(md bool, width int) string {
	if md {
		return t.markdown()
	}
	widths := make([]int, len(t.Header))
	for i := range widths {
		widths[i] = t.widest(i, textWidth)
	}
	if width > 0 {
		width = max(width, MinWidth)
	}
	if width <= 0 || boxWidth(widths) <= width {
		return t.box(widths)
	}
	if !t.Blocks {
		if fit, ok := t.narrow(widths, width); ok {
			return t.box(fit)
		}
	}
	return t.blocks(width)
}

// boxWidth is the width of a box table's lines with these column widths:
// each column is padded by a space on both sides and the columns are
// separated and closed by a line.
func boxWidth(widths []int) int {
	total := 1
	for _, w := range widths {
		total += w + 3
	}
	return total
}

// widest returns the largest measure of column i's cells and header.
func (t *Table) widest(i int, measure func(string) int) int {
	m := measure(t.Header[i])
	for _, row := range t.Rows {
		if i < len(row) {
			m = max(m, measure(row[i]))
		}
	}
	return m
}

// longestWord is the width of the widest space-separated word of s.
func longestWord(s string) int {
	m := 0
	for _, w := range strings.Split(s, " ") {
		m = max(m, textWidth(w))
	}
	return m
}

// narrow returns the column widths that make the table fit width, or
// false when it cannot fit without breaking a word that must stay whole.
// It goes step by step: headers wrapped at spaces, cells wrapped at
// spaces, words broken in Break columns; the first step whose narrowest
// widths fit is taken as far as needed.
func (t *Table) narrow(natural []int, width int) ([]int, bool) {
	n := len(natural)
	steps := make([][]int, 3)
	for k := range steps {
		steps[k] = make([]int, n)
	}
	for i := range n {
		headerWord := longestWord(t.Header[i])
		cells := 0
		for _, row := range t.Rows {
			if i < len(row) {
				cells = max(cells, textWidth(row[i]))
			}
		}
		steps[0][i] = max(cells, headerWord)
		steps[1][i] = max(t.widest(i, longestWord), headerWord)
		if i < len(t.Whole) && t.Whole[i] {
			steps[1][i] = steps[0][i]
		}
		steps[2][i] = steps[1][i]
		if i < len(t.Break) && t.Break[i] {
			steps[2][i] = min(steps[1][i], max(leastBreak, headerWord))
		}
	}
	from := natural
	for _, least := range steps {
		if boxWidth(least) <= width {
			return t.squeeze(from, least, width), true
		}
		from = least
	}
	return nil, false
}

// squeeze narrows columns from their widths in from towards least until
// the table fits width: each time the column whose next narrower width
// adds the fewest lines to the table (then the one that gives up most,
// then the widest), each column as wide as its widest wrapped line. What
// is left over then widens the columns narrowed last back as far as it
// goes.
func (t *Table) squeeze(from, least []int, width int) []int {
	fit := append([]int(nil), from...)
	lines := make([][]int, len(fit)) // lines[i][r]: lines of row r (0: header) in column i
	for i := range fit {
		lines[i] = t.lines(i, fit[i])
	}
	height := func() int {
		h := 0
		for r := range len(t.Rows) + 1 {
			m := 1
			for i := range lines {
				m = max(m, lines[i][r])
			}
			h += m
		}
		return h
	}
	var narrowed []int
	for boxWidth(fit) > width {
		best, bestWidth, bestHeight := -1, 0, 0
		var bestLines []int
		for i := range fit {
			if fit[i] <= least[i] {
				continue
			}
			w := max(t.used(i, fit[i]-1), least[i])
			kept := lines[i]
			lines[i] = t.lines(i, w)
			h := height()
			if best < 0 || h < bestHeight || h == bestHeight && (fit[i]-w > fit[best]-bestWidth ||
				fit[i]-w == fit[best]-bestWidth && fit[i] > fit[best]) {
				best, bestWidth, bestHeight, bestLines = i, w, h, lines[i]
			}
			lines[i] = kept
		}
		fit[best], lines[best] = bestWidth, bestLines
		narrowed = append(narrowed, best)
	}
	for k := len(narrowed) - 1; k >= 0; k-- {
		i := narrowed[k]
		slack := width - boxWidth(fit)
		if w := t.used(i, min(from[i], fit[i]+slack)); w > fit[i] {
			fit[i] = w
		}
	}
	return fit
}

// lines returns how many lines the header (first) and each row take in
// column i wrapped at width.
func (t *Table) lines(i, width int) []int {
	out := make([]int, len(t.Rows)+1)
	out[0] = len(wrap(t.Header[i], width))
	for r, row := range t.Rows {
		out[r+1] = 1
		if i < len(row) {
			out[r+1] = len(wrap(row[i], width))
		}
	}
	return out
}

// used returns the widest line of column i when it is wrapped at width.
func (t *Table) used(i, width int) int {
	used := 0
	for _, l := range wrap(t.Header[i], width) {
		used = max(used, textWidth(l))
	}
	for _, row := range t.Rows {
		if i < len(row) {
			for _, l := range wrap(row[i], width) {
				used = max(used, textWidth(l))
			}
		}
	}
	return used
}

// left pads s to width on the right.
func left(s string, width int) string {
	if pad := width - textWidth(s); pad > 0 {
		return s + strings.Repeat(" ", pad)
	}
	return s
}

// markdown draws the table in GitHub-flavoured Markdown, cells whole.
func (t *Table) markdown() string {
	return t.draw(renderer.NewMarkdown(), t.Header, t.Rows)
}

// box draws the table with box characters, each cell wrapped to its
// column's width here, so that tablewriter only lays out lines that fit.
func (t *Table) box(widths []int) string {
	cells := func(row []string) []string {
		out := make([]string, len(widths))
		for i, wd := range widths {
			if i < len(row) {
				out[i] = strings.Join(wrap(row[i], wd), "\n")
			}
		}
		return out
	}
	rows := make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		rows[i] = cells(r)
	}
	return t.draw(renderer.NewBlueprint(), cells(t.Header), rows)
}

// draw lays the cells out with tablewriter, the project's table library:
// headers centred, rows left, every line of a cell (split at "\n") kept
// as given — no wrapping, trimming, capitalising or blank-line dropping of
// its own, since the widths were decided before.
func (t *Table) draw(r tw.Renderer, header []string, rows [][]string) string {
	var b strings.Builder
	tab := tablewriter.NewTable(&b,
		tablewriter.WithRenderer(r),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithTrimTab(tw.Off),
		tablewriter.WithTrimLine(tw.Off),
	)
	tab.Header(header)
	// Bulk and Render fail only on a write error, which a Builder does
	// not have, or on cells that are not strings.
	_ = tab.Bulk(rows)
	_ = tab.Render()
	return b.String()
}

// blocks writes each row as a block: its title columns on a line,
// then each other non-empty column as "  name  value", the value wrapped
// under itself.
func (t *Table) blocks(width int) string {
	titles := min(max(t.TitleColumns, 1), len(t.Header))
	labelWidth := 0
	labels := make([]string, len(t.Header))
	for i := titles; i < len(t.Header); i++ {
		labels[i] = strings.ToLower(t.Header[i])
		labelWidth = max(labelWidth, textWidth(labels[i]))
	}
	indent := "  " + strings.Repeat(" ", labelWidth) + "  "
	if textWidth(indent)+MinWidth/2 > width {
		indent = "    " // labels on their own line when they leave too little room
	}
	// The title columns are aligned when they fit on a line so.
	titleWidths := make([]int, titles)
	for _, row := range t.Rows {
		for i := 0; i < titles && i < len(row); i++ {
			titleWidths[i] = max(titleWidths[i], textWidth(row[i]))
		}
	}
	align := boxWidth(titleWidths)-titles-1 <= width
	var b strings.Builder
	for _, row := range t.Rows {
		var title []string
		for i := 0; i < titles && i < len(row); i++ {
			switch {
			case align && i < titles-1:
				title = append(title, left(row[i], titleWidths[i]))
			case row[i] != "" || align:
				title = append(title, row[i])
			}
		}
		for _, l := range wrap(strings.TrimRight(strings.Join(title, "  "), " "), width) {
			b.WriteString(l)
			b.WriteByte('\n')
		}
		for i := titles; i < len(t.Header) && i < len(row); i++ {
			if row[i] == "" {
				continue
			}
			value := wrap(row[i], width-textWidth(indent))
			if len(indent) == 4 {
				writeLines(&b, wrap("  "+labels[i], width), "")
				writeLines(&b, value, indent)
				continue
			}
			b.WriteString("  " + left(labels[i], labelWidth) + "  " + value[0] + "\n")
			writeLines(&b, value[1:], indent)
		}
	}
	return b.String()
}

// writeLines writes each line after prefix.
func writeLines(b *strings.Builder, lines []string, prefix string) {
	for _, l := range lines {
		b.WriteString(prefix)
		b.WriteString(l)
		b.WriteByte('\n')
	}
}

// wrap breaks s into lines at most width columns wide, at spaces where it
// can, and within a word longer than width where it must (between
// graphemes). The spaces at a break are dropped. s fitting whole is
// returned as it is; the empty string is one empty line.
func wrap(s string, width int) []string {
	width = max(width, 1)
	if textWidth(s) <= width {
		return []string{s}
	}
	var lines []string
	var cur strings.Builder
	curWidth := 0
	flush := func() {
		lines = append(lines, cur.String())
		cur.Reset()
		curWidth = 0
	}
	for i, word := range strings.Split(s, " ") {
		ww := textWidth(word)
		if i > 0 {
			if curWidth+1+ww <= width {
				cur.WriteByte(' ')
				cur.WriteString(word)
				curWidth += 1 + ww
				continue
			}
			if cur.Len() > 0 {
				flush()
			}
		}
		if ww <= width {
			cur.WriteString(word)
			curWidth = ww
			continue
		}
		g := displaywidth.StringGraphemes(word)
		for g.Next() {
			gw := textWidth(g.Value())
			if curWidth+gw > width && curWidth > 0 {
				flush()
			}
			cur.WriteString(g.Value())
			curWidth += gw
		}
	}
	if cur.Len() > 0 || len(lines) == 0 {
		flush()
	}
	return lines
}
