package render

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lohisoft/lohibot-audit/audit/timeline"
	"github.com/lohisoft/lohibot-audit/conduct"
)

// Geometry of a timeline drawing, in SVG user units (the drawing scales to
// the width of its box).
const (
	laneH       = 30.0
	laneHBudget = 44.0 // the genuine lane, with room for the budget label
	laneGap     = 6.0
	markerRowH  = 20.0
	axisH       = 34.0
	// laneLabelH is the row above each lane that holds its label in a
	// narrow drawing.
	laneLabelH = 16.0
	// robotsDotCap is the most robots.txt marks a lane draws with their
	// own tooltip; past it they are drawn without one.
	robotsDotCap = 300
	// bandCap is the most budget windows one drawing shows.
	bandCap = 400
	// kindLabelsCap is the most violations a drawing labels with their
	// kind; past it markers show numbers only.
	kindLabelsCap = 30
	// tooltipViolations is the most violations one marker's tooltip lists.
	tooltipViolations = 12
)

// geom is the frame of a drawing: its width and where the time axis
// starts and ends, in user units, and how many ticks the axis may have.
// A wide drawing (for a desktop's page and for print) labels its lanes in
// a column on the left; a narrow one (for a phone), drawn at about the size
// it is shown, labels each lane in a row above it, so that its text stays
// as large as the page's.
type geom struct {
	w, x0, x1 float64
	ticks     int
	narrow    bool
}

var (
	wideGeom   = geom{w: 1000, x0: 118, x1: 986, ticks: 9}
	narrowGeom = geom{w: 400, x0: 6, x1: 390, ticks: 4, narrow: true}
)

// charts are the two drawings of one timeline: the wide one and the
// narrow one; the page's style shows one of them.
type charts struct {
	Wide, Narrow *chart
}

// chart is a drawing ready for the template: every number is already a
// string.
type chart struct {
	Class   string // wide or narrow
	Width   string
	Height  string
	Aria    string
	PlotX0  string
	PlotX1  string
	PlotW   string
	Lanes   []laneView
	Bands   []bandView
	AxisY   string
	Ticks   []tickView
	Markers []markerView
}

type laneView struct {
	Class      string // g, s, u
	Y, H       string
	LabelX     string
	LabelY     string
	SubX       string
	SubY       string
	Sub2Y      string
	Label, Sub string
	Sub2       string // what a histogram bar stands for
	Ticks      string // one path of ticks
	ErrTicks   string // ticks of 429/5xx answers
	Bars       string // one path of histogram bars
	Robots     []dotView
	RobotsPath string // robots.txt marks past robotsDotCap
}

type dotView struct {
	X, Y  string
	Title string
}

type bandView struct {
	X, Y, W, H   string
	LabelX       string
	LabelY       string
	Label, Title string
	Over         bool
}

type tickView struct {
	X, Y1, Y2    string
	LabelY       string
	ContextY     string
	Label        string
	Context      string
	First, Final bool
}

type markerView struct {
	Anchor  string
	X, Y, W string
	TextX   string
	TextY   string
	LineY1  string
	LineY2  string
	LineX   string
	Label   string
	Title   string
}

// f formats a coordinate with at most one decimal.
func f(v float64) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0")
}

// scale maps Unix milliseconds to x in the frame g.
type scale struct {
	t0, t1 int64
	g      geom
}

func (s scale) x(ms int64) float64 {
	if s.t1 <= s.t0 {
		return (s.g.x0 + s.g.x1) / 2
	}
	return s.g.x0 + float64(ms-s.t0)/float64(s.t1-s.t0)*(s.g.x1-s.g.x0)
}

// msPerPx is how many milliseconds one unit of x stands for.
func (s scale) msPerPx() float64 { return float64(s.t1-s.t0) / (s.g.x1 - s.g.x0) }

func (s scale) contains(ms int64) bool { return ms >= s.t0 && ms <= s.t1 }

// in returns the scale over the same times in the frame g.
func (s scale) in(g geom) scale {
	s.g = g
	return s
}

// padded returns a wide scale around [lo, hi]: 2% on each side, and at
// least minSpan wide.
func padded(lo, hi int64, minSpan int64) scale {
	span := hi - lo
	if span < minSpan {
		mid := lo + span/2
		return scale{mid - minSpan/2, mid + minSpan - minSpan/2, wideGeom}
	}
	pad := max(span/50, 1)
	return scale{lo - pad, hi + pad, wideGeom}
}

// numbered is a violation with its number within its section.
type numbered struct {
	Violation
	N      int
	Anchor string
}

// laneInput is what one lane draws.
type laneInput struct {
	class timeline.Class
	exact []timeline.Request // nil when aggregated
	width time.Duration
	bkts  []timeline.Bucket
}

// drawOptions bound one drawing.
type drawOptions struct {
	tickCap    int  // most requests per lane drawn one by one
	markerRows int  // rows of violation markers before they merge
	bands      bool // draw the budget windows
	budget     timeline.Budget
}

// drawBoth makes the wide and the narrow drawing of lanes over the times
// of sc (see draw).
func drawBoth(sc scale, lanes []laneInput, vs []numbered, o drawOptions, aria string) charts {
	wide := draw(sc.in(wideGeom), lanes, vs, o)
	narrow := draw(sc.in(narrowGeom), lanes, vs, o)
	wide.Aria, narrow.Aria = aria, aria
	return charts{Wide: wide, Narrow: narrow}
}

// draw makes one drawing of lanes over scale sc, in its frame, with the
// violations vs (sorted by time) marked.
func draw(sc scale, lanes []laneInput, vs []numbered, o drawOptions) *chart {
	g := sc.g
	c := &chart{Class: "wide", Width: f(g.w), PlotX0: f(g.x0), PlotX1: f(g.x1), PlotW: f(g.x1 - g.x0)}
	if g.narrow {
		c.Class = "narrow"
	}

	markers := placeMarkers(sc, vs, o.markerRows)
	rows := 0
	for _, m := range markers {
		rows = max(rows, m.row+1)
	}
	y := 6.0
	if rows > 0 {
		y += float64(rows)*markerRowH + 4
	}

	var genuineTop, genuineH float64
	var genuineLane *laneInput
	for i := range lanes {
		in := &lanes[i]
		withBands := o.bands && in.class == timeline.Genuine && o.budget.Pages > 0 && o.budget.Window > 0
		lv, h := drawLane(sc, in, y, withBands, o.tickCap)
		if withBands {
			genuineTop, genuineH, genuineLane = y, h, in
			if sc.g.narrow {
				genuineTop, genuineH = y+laneLabelH, h-laneLabelH
			}
		}
		c.Lanes = append(c.Lanes, lv)
		y += h + laneGap
	}
	axisY := y - laneGap + 4
	c.AxisY = f(axisY)

	if genuineLane != nil {
		c.Bands = budgetBands(sc, genuineLane, o.budget, genuineTop, genuineH)
	}

	for _, t := range axisTicks(time.UnixMilli(sc.t0), time.UnixMilli(sc.t1), g.ticks) {
		x := sc.x(t.Time.UnixMilli())
		c.Ticks = append(c.Ticks, tickView{
			X: f(x), Y1: f(axisY), Y2: f(axisY + 4),
			LabelY: f(axisY + 15), ContextY: f(axisY + 28),
			Label: t.Label, Context: t.Context,
			// Keep the outer labels inside the drawing.
			First: x-g.x0 < 24, Final: g.w-x < 34,
		})
	}

	for _, m := range markers {
		mv := m.view
		top := 6 + float64(m.row)*markerRowH
		mv.Y = f(top)
		mv.TextY = f(top + 12.5)
		mv.LineY1 = f(top + 16)
		mv.LineY2 = f(axisY)
		c.Markers = append(c.Markers, mv)
	}
	c.Height = f(axisY + axisH)
	return c
}

// drawLane draws one lane's requests at y: one tick per request while they
// are few enough, else a histogram. It returns the lane and its height.
func drawLane(sc scale, in *laneInput, y float64, withBands bool, tickCap int) (laneView, float64) {
	var reqs []timeline.Request
	var shown timeline.Counts
	var bk []timeline.Bucket
	if in.exact != nil {
		for _, r := range in.exact {
			if sc.contains(r.Time.UnixMilli()) {
				reqs = append(reqs, r)
				shown.Add(r.Counts())
			}
		}
	} else {
		for _, b := range in.bkts {
			end := b.Start.Add(in.width).UnixMilli()
			if end >= sc.t0 && b.Start.UnixMilli() <= sc.t1 {
				bk = append(bk, b)
				shown.Add(b.Counts)
			}
		}
	}
	asBars := in.exact == nil || len(reqs) > tickCap
	h := laneH
	if asBars {
		h = 42
	}
	if withBands {
		h = max(h, laneHBudget)
	}
	lv := laneView{
		Class: classShort(in.class),
		Label: in.class.String(),
		Sub:   plural(shown.Requests, "request", "requests"),
	}
	if sc.g.narrow {
		// The label in a row of its own above the lane.
		lv.LabelX, lv.LabelY = f(sc.g.x0), f(y+12)
		lv.SubX, lv.SubY = f(sc.g.x0+svgTextWidth(lv.Label, 7.2)+6), f(y+12)
		y += laneLabelH
	} else {
		lv.LabelX, lv.SubX = "8", "8"
	}
	lv.Y, lv.H = f(y), f(h)
	top := y + 5
	if withBands {
		top = y + 17
	}
	bottom := y + h - 4

	if asBars {
		if in.exact != nil {
			bk = binExact(reqs)
		}
		lv.Bars, lv.Sub2 = bars(sc, bk, in.width, top, bottom)
		if sc.g.narrow {
			lv.Sub += " · " + lv.Sub2
			lv.Sub2 = ""
			return lv, h + laneLabelH
		}
		lv.LabelY, lv.SubY, lv.Sub2Y = f(y+h/2-6), f(y+h/2+6), f(y+h/2+18)
		return lv, h
	}
	if !sc.g.narrow {
		lv.LabelY, lv.SubY = f(y+h/2-1), f(y+h/2+11)
	}
	var ticks, errs, rp strings.Builder
	robots := 0
	for _, r := range reqs {
		if r.Robots {
			robots++
		}
	}
	for _, r := range reqs {
		x := f(sc.x(r.Time.UnixMilli()))
		b := &ticks
		if conduct.IsBackoffStatus(r.Status) {
			b = &errs
		}
		b.WriteString("M" + x + " " + f(top) + "V" + f(bottom))
		if r.Robots {
			if robots <= robotsDotCap {
				d := dotView{X: x, Y: f(top + 1)}
				if !sc.g.narrow {
					d.Title = "/robots.txt · " + stamp(r.Time) + " UTC · " + statusText(r.Status)
				}
				lv.Robots = append(lv.Robots, d)
			} else {
				rp.WriteString("M" + x + " " + f(top-3) + "l3 3-3 3-3-3z")
			}
		}
	}
	lv.Ticks, lv.ErrTicks, lv.RobotsPath = ticks.String(), errs.String(), rp.String()
	if sc.g.narrow {
		return lv, h + laneLabelH
	}
	return lv, h
}

// svgTextWidth is about the width of s in text whose characters are
// about perChar units wide.
func svgTextWidth(s string, perChar float64) float64 {
	return float64(utf8.RuneCountInString(s)) * perChar
}

func classShort(c timeline.Class) string {
	switch c {
	case timeline.Genuine:
		return "g"
	case timeline.Spoofed:
		return "s"
	}
	return "u"
}

func statusText(s int) string {
	if s == 0 {
		return "status not logged"
	}
	return "answered " + strconv.Itoa(s)
}

// binExact turns requests into one-second buckets.
func binExact(reqs []timeline.Request) []timeline.Bucket {
	var out []timeline.Bucket
	for _, r := range reqs {
		sec := r.Time.Truncate(time.Second)
		c := r.Counts()
		if n := len(out); n > 0 && out[n-1].Start.Equal(sec) {
			out[n-1].Add(c)
			continue
		}
		out = append(out, timeline.Bucket{Start: sec, Counts: c})
	}
	return out
}

// bars draws buckets of the given width (0: one second) as a histogram
// whose bins are at least 2.5 units wide, and says what a bar stands for.
func bars(sc scale, bk []timeline.Bucket, width time.Duration, top, bottom float64) (path, note string) {
	w := max(width.Milliseconds(), 1000)
	minW := int64(2.5 * sc.msPerPx())
	for w < minW {
		w = timeline.NextWidth(w)
	}
	type bin struct {
		idx int64
		n   int64
	}
	var bins []bin
	for _, b := range bk {
		idx := timeline.FloorDiv(b.Start.UnixMilli(), w)
		if n := len(bins); n > 0 && bins[n-1].idx == idx {
			bins[n-1].n += b.Requests
			continue
		}
		bins = append(bins, bin{idx, b.Requests})
	}
	var most int64
	for _, b := range bins {
		most = max(most, b.n)
	}
	var p strings.Builder
	for _, b := range bins {
		x0 := max(sc.x(b.idx*w), sc.g.x0)
		x1 := min(sc.x((b.idx+1)*w), sc.g.x1)
		if x1-x0 < 1.2 {
			x1 = x0 + 1.2
		}
		hgt := max((bottom-top)*float64(b.n)/float64(max(most, 1)), 1.5)
		p.WriteString("M" + f(x0) + " " + f(bottom) + "V" + f(bottom-hgt) + "H" + f(x1) + "V" + f(bottom) + "Z")
	}
	note = "per " + dur(time.Duration(w)*time.Millisecond) + ", max " + num(most)
	return p.String(), note
}

// budgetBands draws the budget windows over the genuine lane: each starts at
// the first page after the one before it ends, and holds the pages of the
// next Window (its end included).
func budgetBands(sc scale, in *laneInput, b timeline.Budget, y, h float64) []bandView {
	type page struct {
		ms int64
		n  int64
	}
	var pages []page
	if in.exact != nil {
		for _, r := range in.exact {
			if !r.Robots {
				pages = append(pages, page{r.Time.UnixMilli(), 1})
			}
		}
	} else {
		for _, bk := range in.bkts {
			if n := bk.Pages(); n > 0 {
				pages = append(pages, page{bk.Start.UnixMilli(), n})
			}
		}
	}
	win := b.Window.Milliseconds()
	var out []bandView
	for i := 0; i < len(pages) && len(out) < bandCap; {
		start := pages[i].ms
		var n int64
		j := i
		for ; j < len(pages) && pages[j].ms-start <= win; j++ {
			n += pages[j].n
		}
		i = j
		x0 := max(sc.x(start), sc.g.x0)
		x1 := min(sc.x(start+win), sc.g.x1)
		if x1 <= x0 {
			continue
		}
		over := n > int64(b.Pages)
		label := num(n) + " of " + num(int64(b.Pages)) + " pages"
		if over {
			label = num(n) + " pages: budget " + num(int64(b.Pages)) + " per " + dur(b.Window)
		}
		title := dur(b.Window) + " budget window from " + stamp(time.UnixMilli(start)) + " UTC: " + plural(n, "page", "pages") + ", budget " + num(int64(b.Pages))
		if over {
			title += " (over)"
		}
		bv := bandView{
			X: f(x0), Y: f(y), W: f(x1 - x0), H: f(h),
			LabelX: f(x0 + 4), LabelY: f(y + 11),
			Title: title, Over: over,
		}
		if x1-x0 >= float64(len(label))*6+10 {
			bv.Label = label
		} else if x1-x0 >= 60 {
			bv.Label = num(n) + "/" + num(int64(b.Pages))
		}
		out = append(out, bv)
	}
	return out
}

// placedMarker is a violation marker and the row it sits in.
type placedMarker struct {
	view        markerView
	row         int
	left, right float64
	first, end  int // indexes into vs
}

// placeMarkers lays the violations out as numbered markers above the
// lanes: each goes into the first of rows rows where it does not overlap
// the marker before it; when none has room it joins the marker placed last
// (the violations before it), which then shows a range of numbers. With
// more than one row and few violations, a marker of one violation names its
// kind too.
func placeMarkers(sc scale, vs []numbered, rows int) []placedMarker {
	if len(vs) == 0 {
		return nil
	}
	rows = max(rows, 1)
	kinds := rows > 1 && len(vs) <= kindLabelsCap && !sc.g.narrow
	if !kinds {
		rows = min(rows, 2)
	}
	rowRight := make([]float64, rows)
	for i := range rowRight {
		rowRight[i] = -1e9
	}
	var out []placedMarker
	for i, v := range vs {
		x := sc.x(v.Time.UnixMilli())
		label := markerLabel(vs[i:i+1], kinds)
		w := markerWidth(label)
		left := x - 7
		placed := false
		for r := 0; r < rows; r++ {
			if left >= rowRight[r]+3 {
				out = append(out, placedMarker{row: r, left: left, right: left + w, first: i, end: i + 1})
				rowRight[r] = left + w
				placed = true
				break
			}
		}
		if !placed {
			m := &out[len(out)-1]
			m.end = i + 1
			w = markerWidth(markerLabel(vs[m.first:m.end], kinds))
			m.right = max(m.right, m.left+w)
			rowRight[m.row] = max(rowRight[m.row], m.right)
		}
	}
	for i := range out {
		m := &out[i]
		group := vs[m.first:m.end]
		label := markerLabel(group, kinds)
		w := markerWidth(label)
		x0 := sc.x(group[0].Time.UnixMilli())
		left := min(max(x0-7, sc.g.x0-10), sc.g.x1+10-w)
		left = max(left, 0)
		var title strings.Builder
		if len(group) > 1 {
			title.WriteString(plural(int64(len(group)), "violation", "violations") + "\n")
		}
		for k, v := range group {
			if k == tooltipViolations {
				title.WriteString("… and " + num(int64(len(group)-k)) + " more\n")
				break
			}
			title.WriteString(violationLine(v) + "\n")
		}
		if sc.g.narrow {
			// No tooltips on a phone: the marker leads to the table's row.
			title.Reset()
		}
		m.view = markerView{
			Anchor: group[0].Anchor,
			X:      f(left),
			W:      f(w),
			TextX:  f(left + 4),
			LineX:  f(x0),
			Label:  label,
			Title:  strings.TrimSuffix(title.String(), "\n"),
		}
	}
	return out
}

// markerLabel is the text of a marker: the number of its violation and,
// with kind set, the kind; or the range of numbers of a group.
func markerLabel(group []numbered, kind bool) string {
	if len(group) > 1 {
		return strconv.Itoa(group[0].N) + "–" + strconv.Itoa(group[len(group)-1].N)
	}
	if kind {
		return strconv.Itoa(group[0].N) + " " + short(group[0].Kind, 18)
	}
	return strconv.Itoa(group[0].N)
}

// markerWidth is about the width of a marker with label in 11px bold text.
func markerWidth(label string) float64 {
	return float64(utf8.RuneCountInString(label))*6.6 + 9
}

// violationLine is a violation in one line of a tooltip.
func violationLine(v numbered) string {
	s := "#" + strconv.Itoa(v.N) + " " + cut(v.Kind, 40) + " · " + stamp(v.Time) + " UTC · " + cut(v.IP, 60) + " · " + cut(v.Path, 120)
	if v.RobotsRule != "" {
		s += " · robots.txt line " + strconv.Itoa(v.RobotsLine) + ": " + cut(v.RobotsRule, 120)
	} else if v.Detail != "" {
		s += " · " + cut(v.Detail, 200)
	}
	return s
}
