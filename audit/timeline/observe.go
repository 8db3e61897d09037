package timeline

import (
	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/verify"
)

// Observer returns a function for audit.Options.Observe that adds each
// claimed hit, with its final verdict, to the timeline of its site and
// crawler: the crawler named Crawlers[i] for the audit's crawler i, or
// none ("") when Crawlers does not name it (one crawler, and a report
// that names none). A hit whose time the log did not record is not
// drawn: it has no place on a time axis. The function is not safe for
// concurrent use, as s is not.
func (s *Set) Observer() func(site string, crawler int, h conduct.Hit, v verify.Verdict) {
	return func(site string, crawler int, h conduct.Hit, v verify.Verdict) {
		name := ""
		if crawler >= 0 && crawler < len(s.Crawlers) {
			name = s.Crawlers[crawler]
		}
		if r, ok := RequestOf(h, v); ok {
			s.Add(site, name, r)
		}
	}
}

// RequestOf returns the timeline's request for a claimed hit and its
// verdict, or false when the log did not record the hit's time. A request
// is a robots.txt fetch when its path is exactly /robots.txt, as the
// conduct checks count it.
func RequestOf(h conduct.Hit, v verify.Verdict) (Request, bool) {
	if h.Resolution <= 0 {
		return Request{}, false
	}
	class := Unverified
	switch v {
	case verify.Genuine:
		class = Genuine
	case verify.Spoofed:
		class = Spoofed
	}
	path := (&parse.Record{Target: h.Target}).Path()
	return Request{Time: h.Time, Class: class, Robots: !conduct.IsPage(path), Status: h.Status}, true
}
