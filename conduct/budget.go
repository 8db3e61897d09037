package conduct

import (
	"fmt"
	"time"
)

// budgetState follows one site's pages, in order, for the budget check:
// the page that makes more than Budget pages whose start times all lie
// within one BudgetWindow is a violation; its detail counts the pages of
// that window, anchored at its first page, so the violation is made once
// the window is closed by a page outside it (or the end). The next window
// starts at that page.
//
// It holds the pages of the window under way, Budget+1 at most, each in a
// budgetPage; while a window is being closed, only its bounds and count.
type budgetState struct {
	// win holds the pages first..first+len(win)-1 of the window under
	// way, numbered from the start of the window's run; minQ holds the
	// numbers of pages with increasing sLo, maxQ with decreasing sHi, so
	// that the span of the window is win's maxQ[0].sHi - minQ[0].sLo.
	win        []budgetPage
	first      int
	minQ, maxQ []int

	// A violation found, waiting for its window to close: the page that
	// broke the budget, the window's first page, its bounds and count.
	closing bool
	over    *hit
	start   budgetPage
	lo, hi  time.Time
	count   int
}

// budgetPage is what the budget check keeps of a page.
type budgetPage struct {
	sLo, sHi, sNom time.Time
	file           string
	line           int64
}

func (b *budgetState) page(n int) *budgetPage { return &b.win[n-b.first] }

func (b *budgetState) step(c *siteCheck, p *hit) {
	limit, window := c.cfg.Budget, c.cfg.BudgetWindow
	if limit <= 0 || window <= 0 {
		return
	}
	if b.closing {
		lo, hi := b.lo, b.hi
		if p.sLo.Before(lo) {
			lo = p.sLo
		}
		if p.sHi.After(hi) {
			hi = p.sHi
		}
		if hi.Sub(lo) <= window {
			b.lo, b.hi = lo, hi
			b.count++
			return
		}
		b.emit(c)
	}
	// Push p as page j.
	j := b.first + len(b.win)
	b.win = append(b.win, budgetPage{sLo: p.sLo, sHi: p.sHi, sNom: p.sNom, file: p.File, line: p.Line})
	for len(b.minQ) > 0 && !b.page(b.minQ[len(b.minQ)-1]).sLo.Before(p.sLo) {
		b.minQ = b.minQ[:len(b.minQ)-1]
	}
	b.minQ = append(b.minQ, j)
	for len(b.maxQ) > 0 && !b.page(b.maxQ[len(b.maxQ)-1]).sHi.After(p.sHi) {
		b.maxQ = b.maxQ[:len(b.maxQ)-1]
	}
	b.maxQ = append(b.maxQ, j)
	within := func() bool { return b.page(b.maxQ[0]).sHi.Sub(b.page(b.minQ[0]).sLo) <= window }
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
	b.closing, b.over, b.start = true, p, b.win[0]
	b.lo, b.hi = b.page(b.minQ[0]).sLo, b.page(b.maxQ[0]).sHi
	b.count = len(b.win)
	b.first, b.win, b.minQ, b.maxQ = 0, b.win[:0], b.minQ[:0], b.maxQ[:0]
}

// emit makes the violation of the window being closed.
func (b *budgetState) emit(c *siteCheck) {
	b.closing = false
	p, first := b.over, &b.start
	b.over = nil
	if !c.want(kBudget, p) {
		return
	}
	c.add(kBudget, p, fmt.Sprintf("%d pages within %s, more than the budget of %d: this is page %d of the window that began at %s (%s)",
		b.count, fmtDur(c.cfg.BudgetWindow), c.cfg.Budget, c.cfg.Budget+1, fmtTime(first.sNom), refAt(first.file, first.line, p)))
}

// end makes the violation of a window still being closed.
func (b *budgetState) end(c *siteCheck) {
	if b.closing {
		b.emit(c)
	}
}
