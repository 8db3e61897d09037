package optout

import (
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/parse"
)

// ParseOptedOut reads the --opted-out values ([CRAWLER:]SITE=TIME) for a
// run that audits crawlers (their names, in order): each crawler's
// opted-out sites. A value names its crawler or, when the run audits one
// crawler, is that crawler's; when reads TIME. A value that cannot be
// read, or a negative grace (--opt-out-grace), is a usage error.
func ParseOptedOut(values, crawlers []string, grace time.Duration, when func(string) (time.Time, error)) (map[string]conduct.OptOuts, error) {
	if grace < 0 {
		return nil, fail.Usagef("--opt-out-grace %s: give a duration of 0 or more, such as 48h", grace)
	}
	out := map[string]conduct.OptOuts{}
	for _, v := range values {
		spec, at, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(spec) == "" || strings.TrimSpace(at) == "" {
			return nil, fail.Hinted(fmt.Errorf("--opted-out %q: not SITE=TIME", v),
				"give the site and the time of its opt-out e-mail: --opted-out example.com=2026-12-01T09:30:00Z")
		}
		name, site, named := strings.Cut(spec, ":")
		if !named {
			site = name
			if len(crawlers) > 1 {
				return nil, fail.Usagef("--opted-out %q: the run audits %d crawlers; name the one opted out of: --opted-out %s:%s", v, len(crawlers), crawlers[0], v)
			}
			name = crawlers[0]
		}
		if !slices.Contains(crawlers, name) {
			return nil, fail.Usagef("--opted-out %q: crawler %s is not audited in this run", v, name)
		}
		d, err := Domain(site)
		if err != nil {
			return nil, fail.Usagef("--opted-out %q: %v", v, err)
		}
		t, err := when(strings.TrimSpace(at))
		if err != nil {
			return nil, err
		}
		site = parse.NormalizeSite(d)
		if out[name] == nil {
			out[name] = conduct.OptOuts{}
		}
		if prev, ok := out[name][site]; ok && !prev.Equal(t) {
			return nil, fail.Usagef("--opted-out gives two times for %s of %s", site, name)
		}
		out[name][site] = t
	}
	return out, nil
}

// Sender is the letter's sender: from (--from) when given, else $EMAIL
// (email), else webmaster@ the first domain (RFC 2142's mailbox for a web
// service); how says which default was taken ("" for --from). A sender
// that is not an address is a usage error.
func Sender(given bool, from, email, first string) (a *mail.Address, how string, err error) {
	if given {
		if a, err = Address(from); err != nil {
			return nil, "", fail.Usagef("--from: %v", err)
		}
		return a, "", nil
	}
	if e := strings.TrimSpace(email); e != "" {
		if a, err = Address(e); err != nil {
			return nil, "", fail.Usagef("$EMAIL: %v; give --from ADDRESS", err)
		}
		return a, "$EMAIL", nil
	}
	if a, err = Address("webmaster@" + first); err != nil {
		return nil, "", fail.Usagef("--from: %v", err)
	}
	return a, "webmaster@ the first domain", nil
}

// AuditFlags is the --opted-out flags that hold crawler name (the
// default crawler when isDefault) to a request for domains made at t.
func AuditFlags(name string, isDefault bool, domains []string, t time.Time) string {
	stamp := t.UTC().Truncate(time.Second).Format(time.RFC3339)
	parts := make([]string, len(domains))
	for i, d := range domains {
		parts[i] = "--opted-out " + d + "=" + stamp
		if !isDefault {
			parts[i] = "--opted-out " + name + ":" + d + "=" + stamp
		}
	}
	return strings.Join(parts, " ")
}
