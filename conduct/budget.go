package conduct

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/parse"
)

// budgetState follows one site's pages, in order, for the budget check:
// the page that makes more than Budget pages whose start times all lie
// within one BudgetWindow is a violation; its detail counts the pages of
// that window, anchored at its first page, so the violation is made once
// the window is closed by a page outside it (or the end). The next window
// starts at that page.
//
// It holds the pages of the window under way, Budget+1 at most, in 48
// bytes each; while a window is being closed, only its bounds and count.
type budgetState struct {
	// win holds the pages first..first+len(win)-1 of the window under
	// way, numbered from the start of the site's pages; minQ holds the
	// numbers of pages with increasing sLo, maxQ with decreasing sHi, so
	// that the span of the window is win's maxQ[0].sHi - minQ[0].sLo.
	win        []budgetPage
	first      int
	minQ, maxQ []int
	closing    *budgetClose // a violation found, its window not yet closed
}

// budgetClose is a window being closed: the page that broke the budget,
// the window's first page, its bounds and how many pages it holds.
type budgetClose struct {
	over   *hit
	start  budgetPage
	lo, hi time.Time
	count  int
	logs   []logCount // the window's pages per log
}

// logCount is how many pages of a window one log holds.
type logCount struct {
	f *fileUnits
	n int
}

// countLog counts a page of f.
func (x *budgetClose) countLog(f *fileUnits) {
	for i := range x.logs {
		if x.logs[i].f == f {
			x.logs[i].n++
			return
		}
	}
	x.logs = append(x.logs, logCount{f, 1})
}

// maxLogsNamed bounds the logs a budget violation names.
const maxLogsNamed = 8

// byLog says how many of a window's pages each log holds, when they are
// in more than one (the logs of several servers): "; pages by log: a.log
// 3, b.log 2", by name.
func byLog(counts map[string]int) string {
	if len(counts) < 2 {
		return ""
	}
	names := slices.Sorted(maps.Keys(counts))
	var parts []string
	for i, n := range names {
		if i == maxLogsNamed {
			parts = append(parts, fmt.Sprintf("and %d more logs", len(names)-maxLogsNamed))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d", parse.EscapeControl(n), counts[n]))
	}
	return "; pages by log: " + strings.Join(parts, ", ")
}

// budgetPage is what the budget check keeps of a page: the bounds of its
// start as seconds and nanoseconds since the Unix epoch, and where it was
// logged.
type budgetPage struct {
	loSec, hiSec   int64
	line           int64
	file           *fileUnits
	loNsec, hiNsec int32
	nomOff         int64 // sNom - sLo: none, a duration's rounding, or half a clock skew
}

func pageOf(p *hit, f *fileUnits) budgetPage {
	return budgetPage{
		loSec: p.sLo.Unix(), loNsec: int32(p.sLo.Nanosecond()),
		hiSec: p.sHi.Unix(), hiNsec: int32(p.sHi.Nanosecond()),
		line: p.Line, file: f, nomOff: int64(p.sNom.Sub(p.sLo)),
	}
}

func (b *budgetPage) sLo() time.Time  { return time.Unix(b.loSec, int64(b.loNsec)) }
func (b *budgetPage) sHi() time.Time  { return time.Unix(b.hiSec, int64(b.hiNsec)) }
func (b *budgetPage) sNom() time.Time { return b.sLo().Add(time.Duration(b.nomOff)) }

// loBefore and hiAfter compare the pages' bounds.
func (b *budgetPage) loBefore(o *budgetPage) bool {
	return b.loSec < o.loSec || b.loSec == o.loSec && b.loNsec < o.loNsec
}

func (b *budgetPage) hiAfter(o *budgetPage) bool {
	return b.hiSec > o.hiSec || b.hiSec == o.hiSec && b.hiNsec > o.hiNsec
}

// stillClosing widens a closing budget window [lo, hi] by page p's span
// and reports whether p still falls inside it (the widened span fits in
// window): the window closes at the first page that does not.
func stillClosing(lo, hi time.Time, p *hit, window time.Duration) (time.Time, time.Time, bool) {
	if p.sLo.Before(lo) {
		lo = p.sLo
	}
	if p.sHi.After(hi) {
		hi = p.sHi
	}
	return lo, hi, hi.Sub(lo) <= window
}

func (b *budgetState) page(n int) *budgetPage { return &b.win[n-b.first] }

func (b *budgetState) step(c *siteCheck, p *hit, f *fileUnits) {
	limit, window := c.cfg.Budget, c.cfg.BudgetWindow
	if limit <= 0 || window <= 0 {
		return
	}
	if x := b.closing; x != nil {
		if lo, hi, ok := stillClosing(x.lo, x.hi, p, window); ok {
			x.lo, x.hi = lo, hi
			x.count++
			x.countLog(f)
			return
		}
		b.emit(c)
	}
	// Push p as page j.
	j := b.first + len(b.win)
	b.win = append(b.win, pageOf(p, f))
	np := &b.win[len(b.win)-1]
	for len(b.minQ) > 0 && !b.page(b.minQ[len(b.minQ)-1]).loBefore(np) {
		b.minQ = b.minQ[:len(b.minQ)-1]
	}
	b.minQ = append(b.minQ, j)
	for len(b.maxQ) > 0 && !b.page(b.maxQ[len(b.maxQ)-1]).hiAfter(np) {
		b.maxQ = b.maxQ[:len(b.maxQ)-1]
	}
	b.maxQ = append(b.maxQ, j)
	within := func() bool { return b.page(b.maxQ[0]).sHi().Sub(b.page(b.minQ[0]).sLo()) <= window }
	for b.first < j && !within() {
		b.first++
		b.win = b.win[1:]
		for b.minQ[0] < b.first {
			b.minQ = b.minQ[1:]
		}
		for b.maxQ[0] < b.first {
			b.maxQ = b.maxQ[1:]
		}
	}
	if len(b.win) <= limit {
		return
	}
	b.closing = &budgetClose{over: c.keep(p), start: b.win[0], count: len(b.win),
		lo: b.page(b.minQ[0]).sLo(), hi: b.page(b.maxQ[0]).sHi()}
	for i := range b.win {
		b.closing.countLog(b.win[i].file)
	}
	b.first, b.win, b.minQ, b.maxQ = 0, nil, nil, nil
}

// emit makes the violation of the window being closed.
func (b *budgetState) emit(c *siteCheck) {
	x := b.closing
	b.closing = nil
	p, first := x.over, &x.start
	if !c.want(kBudget, p) {
		return
	}
	counts := make(map[string]int, len(x.logs))
	for _, l := range x.logs {
		counts[l.f.name] += l.n
	}
	c.add(kBudget, p, fmt.Sprintf("%d pages within %s, more than the budget of %d: this is page %d of the window that began at %s (%s)%s",
		x.count, fmtDur(c.cfg.BudgetWindow), c.cfg.Budget, c.cfg.Budget+1, fmtTime(first.sNom()), refAt(first.file.name, first.line, p), byLog(counts)))
}

// end makes the violation of a window still being closed.
func (b *budgetState) end(c *siteCheck) {
	if b.closing != nil {
		b.emit(c)
	}
}
