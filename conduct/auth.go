package conduct

import (
	"fmt"
	"net/http"
)

// checkRemoteUser flags requests that carried credentials.
func (c *siteCheck) checkRemoteUser() {
	for _, h := range c.hits {
		if u := h.RemoteUser; u != "" && u != "-" {
			c.add(KindAuth, h, "sent credentials: the log shows the remote user "+quote(u))
		}
	}
}

// checkDeniedThenOK flags a 2xx for a page path that earlier answered 401
// or 403 to the crawler.
func (c *siteCheck) checkDeniedThenOK() {
	pending := map[string][]*hit{}
	for _, h := range c.hits {
		if !h.page {
			continue
		}
		st := h.Status
		switch {
		case st == http.StatusUnauthorized || st == http.StatusForbidden:
			l := append(pending[h.path], h)
			if len(l) > maxPending {
				l = l[1:]
			}
			pending[h.path] = l
		case st >= 200 && st <= 299:
			l := pending[h.path]
			var denied *hit
			n := 0
			for _, d := range l {
				if !d.eHi.After(h.sLo) {
					if denied == nil || d.eLo.After(denied.eLo) {
						denied = d
					}
				} else {
					l[n] = d
					n++
				}
			}
			if denied == nil {
				continue
			}
			pending[h.path] = l[:n]
			c.add(KindAuth, h, fmt.Sprintf("got %d for a path that answered %d to the crawler %s earlier (%s)",
				st, denied.Status, fmtDur(h.sNom.Sub(denied.eNom)), c.ref(denied, h)))
		}
	}
}
