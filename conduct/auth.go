package conduct

import (
	"fmt"
	"net/http"
	"time"
)

// checkRemoteUser flags a request that carried credentials.
func (c *siteCheck) checkRemoteUser(h *hit) {
	if u := h.RemoteUser(); u != "" && u != "-" && c.want(kAuth, h) {
		c.add(kAuth, h, "sent credentials: the log shows the remote user "+quote(u))
	}
}

// authState follows one site's pages, in order, for the second part of
// the auth check: a 2xx for a page whose same path earlier answered 401
// or 403 to the crawler. It holds the 401 and 403 answers still waiting
// for such a 2xx: at most maxPending per path, and at most maxDeniedPaths
// paths, past which the path denied first is forgotten (and said).
type authState struct {
	pending map[string]*deniedPath
	// order holds the paths in the order they began to wait, for
	// forgetting the oldest; an entry whose path no longer waits, or
	// waits again since, is stale.
	order     []orderedPath
	gen       int64
	forgotten int64
}

type deniedPath struct {
	gen int64 // when it began to wait
	ds  []denial
}

type orderedPath struct {
	path string
	gen  int64
}

// denial is what the auth check keeps of a 401 or 403 answer.
type denial struct {
	eLo, eHi, eNom time.Time
	status         int
	file           string
	line           int64
	clock          int32
}

// stepAuth takes one more page of the site.
func (c *siteCheck) stepAuth(h *hit) {
	st := int(h.Status)
	switch {
	case st == http.StatusUnauthorized || st == http.StatusForbidden:
		a := c.auth
		if a == nil {
			a = &authState{pending: map[string]*deniedPath{}}
			c.auth = a
		}
		p := a.pending[h.path]
		if p == nil {
			if len(a.pending) >= maxDeniedPaths {
				a.forget()
			}
			a.gen++
			p = &deniedPath{gen: a.gen}
			a.pending[h.path] = p
			a.order = append(a.order, orderedPath{h.path, a.gen})
			if len(a.order) > 2*len(a.pending)+64 {
				a.compact()
			}
		}
		p.ds = append(p.ds, denial{eLo: h.eLo, eHi: h.eHi, eNom: h.eNom, status: st, file: h.File, line: h.Line, clock: h.clock})
		if len(p.ds) > maxPending {
			p.ds = p.ds[1:]
		}
	case st >= 200 && st <= 299 && c.auth != nil:
		a := c.auth
		p := a.pending[h.path]
		if p == nil {
			return
		}
		l := p.ds
		found := -1
		n := 0
		// Surely before h: by the skew of their clocks more, when two
		// logged them.
		before := func(d *denial) bool {
			sk := time.Duration(0)
			if d.clock != h.clock && c.cfg.ClockSkew > 0 {
				sk = c.cfg.ClockSkew
			}
			return !d.eHi.Add(sk).After(h.sLo)
		}
		for i := range l {
			if d := &l[i]; before(d) {
				if found < 0 || d.eLo.After(l[found].eLo) {
					found = i
				}
			}
		}
		if found < 0 {
			return
		}
		denied := l[found]
		for i := range l {
			if !before(&l[i]) {
				l[n] = l[i]
				n++
			}
		}
		if n == 0 {
			delete(a.pending, h.path)
		} else {
			p.ds = l[:n]
		}
		if c.want(kAuth, h) {
			c.add(kAuth, h, fmt.Sprintf("got %d for a path that answered %d to the crawler %s earlier (%s)",
				st, denied.status, fmtDur(h.sNom.Sub(denied.eNom)), refAt(denied.file, denied.line, h)))
		}
	}
}

// forget drops the path denied first that still waits for a 2xx.
func (a *authState) forget() {
	for len(a.order) > 0 {
		o := a.order[0]
		a.order = a.order[1:]
		if p := a.pending[o.path]; p != nil && p.gen == o.gen {
			delete(a.pending, o.path)
			a.forgotten++
			return
		}
	}
}

// compact drops the stale entries of order.
func (a *authState) compact() {
	n := 0
	for _, o := range a.order {
		if p := a.pending[o.path]; p != nil && p.gen == o.gen {
			a.order[n] = o
			n++
		}
	}
	clear(a.order[n:])
	a.order = append([]orderedPath(nil), a.order[:n]...)
}

// endAuth says when paths were forgotten.
func (c *siteCheck) endAuth() {
	if c.auth == nil || c.auth.forgotten == 0 {
		return
	}
	c.skip(kAuth)
	c.warn("%s that answered 401 or 403 to the crawler %s forgotten before the logs ended (at most %d are kept per site): a later 2xx for them was not looked for, so the auth check is not complete",
		countOf(c.auth.forgotten, "path", "paths"), map[bool]string{true: "was", false: "were"}[c.auth.forgotten == 1], maxDeniedPaths)
}
