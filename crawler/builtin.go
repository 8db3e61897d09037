package crawler

import (
	"net/netip"
	"slices"
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
		IPv6: false,
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
