package crawler

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"
)

// Default is the name of the profile used when none is chosen.
const Default = "lohisoftbot"

// SourceBuiltin is the Source of the built-in profiles.
const SourceBuiltin = "built-in"

// Builtin returns a new copy of the built-in profile called name, and
// whether there is one: lohisoftbot, googlebot or bingbot.
func Builtin(name string) (*Profile, bool) {
	mk, ok := builtins[name]
	if !ok {
		return nil, false
	}
	p := mk()
	p.Source = SourceBuiltin
	if err := p.Validate(); err != nil {
		panic("crawler: built-in profile " + name + ": " + err.Error())
	}
	return p, true
}

// BuiltinNames lists the built-in profiles, sorted.
func BuiltinNames() []string {
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

var builtins = map[string]func() *Profile{
	"lohisoftbot": lohiSoftBot,
	"googlebot":   googlebot,
	"bingbot":     bingbot,
}

// lohiSoftBot is LohiSoftBot as its operator's page describes it (last
// updated 23 August 2026): User-Agent LohiSoftBot/1.0, host names under
// bot.lohisoft.com, two fixed IPv4 addresses and never IPv6, and every
// promise the tool can check.
func lohiSoftBot() *Profile {
	return &Profile{
		Name:        "lohisoftbot",
		Tokens:      []string{"LohiSoftBot"},
		RobotsToken: "LohiSoftBot",
		FCrDNS:      []string{"bot.lohisoft.com"},
		IPLists:     []string{"https://lohisoft.com/bot/ips.json"},
		BuiltinIPs: []netip.Prefix{
			netip.MustParsePrefix("79.139.58.98/32"),
			netip.MustParsePrefix("79.139.58.121/32"),
		},
		BuiltinIPsDate: time.Date(2026, 8, 23, 0, 0, 0, 0, time.UTC),
		IPv6:           false,
		Conduct: Conduct{
			Robots:       true,
			Budget:       &Budget{Pages: 20, Window: 24 * time.Hour},
			MinPause:     time.Second,
			Backoff:      &Backoff{Min: 30 * time.Second},
			NoAuthBypass: true,
		},
	}
}

// googlebot is Google's crawlers as "Verifying Googlebot and other Google
// crawlers" describes them: PTR names under googlebot.com (crawl-…,
// geo-crawl-…), google.com (rate-limited-proxy-…, google-proxy-…) and
// gae.googleusercontent.com (user-triggered fetchers), and the four
// published lists, which moved to /static/crawling/ipranges/ in 2026
// (googlebot.json is now common-crawlers.json; the old addresses answer
// 200 with a note instead of prefixes, which the list parser rejects).
//
// Only gae.googleusercontent.com, not all of googleusercontent.com: any
// Google Cloud VM has a forward-confirmed PTR name under
// bc.googleusercontent.com, so the wider suffix would make every impostor
// hosted there genuine.
//
// Google publishes no fixed addresses to build in, and promises only to
// obey robots.txt (its user-triggered fetchers do not; their requests are
// rarely sent with the Googlebot token).
func googlebot() *Profile {
	const base = "https://developers.google.com/static/crawling/ipranges/"
	return &Profile{
		Name:        "googlebot",
		Tokens:      []string{"Googlebot"},
		RobotsToken: "Googlebot",
		FCrDNS:      []string{"googlebot.com", "google.com", "gae.googleusercontent.com"},
		IPLists: []string{
			base + "common-crawlers.json",
			base + "special-crawlers.json",
			base + "user-triggered-fetchers.json",
			base + "user-triggered-fetchers-google.json",
		},
		IPv6:    true,
		Conduct: Conduct{Robots: true},
	}
}

// bingbot is Microsoft's crawler as "Verifying Bingbot" describes it: PTR
// names under search.msn.com and the published bingbot.json. It promises
// to obey robots.txt.
func bingbot() *Profile {
	return &Profile{
		Name:        "bingbot",
		Tokens:      []string{"bingbot"},
		RobotsToken: "bingbot",
		FCrDNS:      []string{"search.msn.com"},
		IPLists:     []string{"https://www.bing.com/toolbox/bingbot.json"},
		IPv6:        true,
		Conduct:     Conduct{Robots: true},
	}
}

// MaxProfiles is the most crawlers one run audits.
const MaxProfiles = 64

// Resolve turns --crawler values into profiles, in the order given: the
// name of a built-in profile, or the path of a profile file. No value
// means the default profile alone. Two profiles of one name are an error.
func Resolve(values []string) ([]*Profile, error) {
	if len(values) == 0 {
		p, _ := Builtin(Default)
		return []*Profile{p}, nil
	}
	if len(values) > MaxProfiles {
		return nil, fmt.Errorf("%d crawlers; at most %d", len(values), MaxProfiles)
	}
	var out []*Profile
	for _, v := range values {
		v = strings.TrimSpace(v)
		p, ok := Builtin(strings.ToLower(v))
		if !ok {
			if !looksLikeFile(v) {
				return nil, fmt.Errorf("unknown crawler %q: built in are %s; or give a profile file (a path such as ./examplebot.yaml)", clip(v), strings.Join(BuiltinNames(), ", "))
			}
			var err error
			if p, err = LoadFile(v); err != nil {
				var fe *FileError
				if errors.As(err, &fe) {
					return nil, err
				}
				var pe *fs.PathError
				if errors.As(err, &pe) {
					err = pe.Err
				}
				return nil, fmt.Errorf("cannot read crawler profile %s: %w", v, err)
			}
		}
		for _, q := range out {
			if q.Name == p.Name {
				return nil, fmt.Errorf("crawler %s is given twice (%s and %s)", p.Name, q.Source, p.Source)
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// looksLikeFile says whether a --crawler value names a file rather than a
// built-in profile: a path, a YAML file name, or a file that exists.
func looksLikeFile(v string) bool {
	if strings.ContainsRune(v, '/') || strings.HasSuffix(v, ".yaml") || strings.HasSuffix(v, ".yml") {
		return true
	}
	_, err := os.Stat(v)
	return err == nil
}
