package render

import (
	"strings"

	"github.com/clipperhouse/displaywidth"
)

// MinWidth is the narrowest width a table is laid out for: a smaller
// positive width is taken as MinWidth.
const MinWidth = 20

// Table is a table for people: drawn with box characters for a terminal,
// or a GitHub-flavoured Markdown table. Cells are written as given: escape
// text from strangers before (Text.Cell does).
//
// At a width (Text's), a box table whose lines would be wider has its
// cells wrapped at spaces (a word longer than its column is broken), its
// widest columns narrowed first; when even that cannot fit, each row is
// written as a block: the title columns on one line, then one indented
// line per other column with its name. A Markdown table is never wrapped.
type Table struct {
	Header []string
	Rows   [][]string
	// Min holds each column's least width when it is narrowed (0: the
	// default, 8, or the column's longest header word when that is wider).
	// A value above the column's own width is the column's own width.
	Min []int
	// TitleColumns is how many leading columns make a block's first line
	// (at least 1).
	TitleColumns int
	// Blocks says to write rows as blocks as soon as the table is wider
	// than the width, without narrowing columns first: for rows whose
	// long text reads better whole than wrapped in a narrow column.
	Blocks bool
}

// textWidth is the number of terminal columns s takes.
func textWidth(s string) int { return displaywidth.String(s) }

// text returns the table as Markdown when md, else as a box table at
// most width columns wide (0: no limit).
func (t *Table) text(md bool, width int) string {
	n := len(t.Header)
	widths := make([]int, n)
	for i, h := range t.Header {
		widths[i] = textWidth(h)
	}
	for _, row := range t.Rows {
		for i := 0; i < n && i < len(row); i++ {
			widths[i] = max(widths[i], textWidth(row[i]))
		}
	}
	if md {
		return t.markdown(widths)
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

// narrow returns the column widths that make the table fit width, taking
// a column at a time from the widest, or false when the columns' least
// widths do not fit.
func (t *Table) narrow(widths []int, width int) ([]int, bool) {
	n := len(widths)
	least := make([]int, n)
	for i, h := range t.Header {
		m := 8
		if i < len(t.Min) && t.Min[i] > 0 {
			m = t.Min[i]
		}
		for _, word := range strings.Fields(h) {
			m = max(m, textWidth(word))
		}
		least[i] = min(m, widths[i])
	}
	if boxWidth(least) > width {
		return nil, false
	}
	fit := append([]int(nil), widths...)
	for excess := boxWidth(fit) - width; excess > 0; excess-- {
		widest := -1
		for i := range fit {
			if fit[i] > least[i] && (widest < 0 || fit[i] > fit[widest]) {
				widest = i
			}
		}
		fit[widest]--
	}
	// A column that wraps may use less than it was given (a time breaks
	// at its space): give what it leaves to the columns that wrap most.
	for range 16 {
		slack := 0
		for i := range fit {
			used := t.used(i, fit[i])
			slack += fit[i] - used
			fit[i] = used
		}
		if slack == 0 {
			break
		}
		for ; slack > 0; slack-- {
			most := -1
			for i := range fit {
				if fit[i] < widths[i] && (most < 0 || widths[i]-fit[i] > widths[most]-fit[most]) {
					most = i
				}
			}
			if most < 0 {
				break
			}
			fit[most]++
		}
	}
	return fit, true
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

// centre pads s to width, its extra space split with the smaller half on
// the left.
func centre(s string, width int) string {
	pad := width - textWidth(s)
	if pad <= 0 {
		return s
	}
	return strings.Repeat(" ", pad/2) + s + strings.Repeat(" ", pad-pad/2)
}

// left pads s to width on the right.
func left(s string, width int) string {
	if pad := width - textWidth(s); pad > 0 {
		return s + strings.Repeat(" ", pad)
	}
	return s
}

func (t *Table) markdown(widths []int) string {
	var b strings.Builder
	line := func(cells []string, header bool) {
		b.WriteByte('|')
		for i, wd := range widths {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			b.WriteByte(' ')
			if header {
				b.WriteString(centre(c, wd))
			} else {
				b.WriteString(left(c, wd))
			}
			b.WriteString(" |")
		}
		b.WriteByte('\n')
	}
	line(t.Header, true)
	b.WriteByte('|')
	for _, wd := range widths {
		b.WriteByte(':')
		b.WriteString(strings.Repeat("-", wd+1))
		b.WriteByte('|')
	}
	b.WriteByte('\n')
	for _, row := range t.Rows {
		line(row, false)
	}
	return b.String()
}

func (t *Table) box(widths []int) string {
	var b strings.Builder
	rule := func(l, m, r string) {
		b.WriteString(l)
		for i, wd := range widths {
			if i > 0 {
				b.WriteString(m)
			}
			b.WriteString(strings.Repeat("─", wd+2))
		}
		b.WriteString(r)
		b.WriteByte('\n')
	}
	row := func(cells []string, header bool) {
		lines := make([][]string, len(widths))
		height := 1
		for i, wd := range widths {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			lines[i] = wrap(c, wd)
			height = max(height, len(lines[i]))
		}
		for k := range height {
			b.WriteString("│")
			for i, wd := range widths {
				c := ""
				if k < len(lines[i]) {
					c = lines[i][k]
				}
				b.WriteByte(' ')
				if header {
					b.WriteString(centre(c, wd))
				} else {
					b.WriteString(left(c, wd))
				}
				b.WriteString(" │")
			}
			b.WriteByte('\n')
		}
	}
	rule("┌", "┬", "┐")
	row(t.Header, true)
	rule("├", "┼", "┤")
	for _, r := range t.Rows {
		row(r, false)
	}
	rule("└", "┴", "┘")
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
			gw := g.Width()
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
