package conduct

import "fmt"

// checkBudget flags the page that makes more than Budget pages within one
// BudgetWindow, once per window.
func (c *siteCheck) checkBudget() {
	limit, window := c.cfg.Budget, c.cfg.BudgetWindow
	if limit <= 0 || window <= 0 {
		c.skip(KindBudget)
		return
	}
	p := c.pages
	// minQ holds indexes with increasing sLo, maxQ with decreasing sHi, so
	// that the span of p[i..j] is p[maxQ[0]].sHi - p[minQ[0]].sLo.
	var minQ, maxQ []int
	push := func(k int) {
		for len(minQ) > 0 && !p[minQ[len(minQ)-1]].sLo.Before(p[k].sLo) {
			minQ = minQ[:len(minQ)-1]
		}
		minQ = append(minQ, k)
		for len(maxQ) > 0 && !p[maxQ[len(maxQ)-1]].sHi.After(p[k].sHi) {
			maxQ = maxQ[:len(maxQ)-1]
		}
		maxQ = append(maxQ, k)
	}
	within := func() bool { return p[maxQ[0]].sHi.Sub(p[minQ[0]].sLo) <= window }
	i := 0
	for j := 0; j < len(p); j++ {
		push(j)
		for i < j && !within() {
			i++
			for minQ[0] < i {
				minQ = minQ[1:]
			}
			for maxQ[0] < i {
				maxQ = maxQ[1:]
			}
		}
		if j-i+1 <= limit {
			continue
		}
		k := j + 1
		for k < len(p) {
			push(k)
			if !within() {
				break
			}
			k++
		}
		c.add(KindBudget, p[j], fmt.Sprintf("%d pages within %s, more than the budget of %d: this is page %d of the window that began at %s (%s)",
			k-i, fmtDur(window), limit, limit+1, fmtTime(p[i].sNom), c.ref(p[i], p[j])))
		i, j = k, k-1
		minQ, maxQ = minQ[:0], maxQ[:0]
	}
}
