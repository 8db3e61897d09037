package crawler

import (
	"errors"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// Default is the name of the profile used when none is chosen.
const Default = "lohisoftbot"

// SourceBuiltin is the Source of the built-in profiles.
const SourceBuiltin = "built-in"

// Builtin returns a new copy of the built-in profile called name, and
// whether there is one (see [BuiltinNames]).
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

// Categories of crawlers: what the crawler is for, as its operator says.
// A profile may name another (a file's default is CategoryOther).
const (
	// CategorySearch: a search engine's crawler (its index, its results).
	CategorySearch = "search"
	// CategoryAITraining: collects pages that may train AI models.
	CategoryAITraining = "ai-training"
	// CategoryAISearch: indexes pages for an AI product's answers and
	// search, not for training.
	CategoryAISearch = "ai-search"
	// CategoryUserTriggered: fetches a page because a person asked for it
	// (an assistant's browsing, a feed reader, a site verifier).
	CategoryUserTriggered = "user-triggered"
	// CategorySpecialCase: a product's crawler under an agreement with the
	// site (Google's AdsBot and the like).
	CategorySpecialCase = "special-case"
	// CategoryOther: a profile file that names no category.
	CategoryOther = "other"
)

// BuiltinCategories lists the categories of the built-in profiles, sorted.
func BuiltinCategories() []string {
	var out []string
	for _, mk := range builtins {
		if c := mk().Category; !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// BuiltinsIn returns new copies of the built-in profiles of category c,
// sorted by name; none for a category no built-in profile has.
func BuiltinsIn(c string) []*Profile {
	var out []*Profile
	for _, name := range BuiltinNames() {
		if builtins[name]().Category == c {
			p, _ := Builtin(name)
			out = append(out, p)
		}
	}
	return out
}

var builtins = map[string]func() *Profile{
	"lohisoftbot":           lohiSoftBot,
	"googlebot":             googlebot,
	"google-common":         googleCommon,
	"google-special":        googleSpecial,
	"google-user-triggered": googleUserTriggered,
	"bingbot":               bingbot,
	"applebot":              applebot,
	"duckduckbot":           duckduckbot,
	"gptbot":                gptbot,
	"oai-searchbot":         oaiSearchBot,
	"chatgpt-user":          chatGPTUser,
	"claudebot":             claudeBot,
	"claude-searchbot":      claudeSearchBot,
	"claude-user":           claudeUser,
	"perplexitybot":         perplexityBot,
	"perplexity-user":       perplexityUser,
	"amazonbot":             amazonbot,
}

// lohiSoftBot is LohiSoftBot as its operator's page describes it (last
// updated 23 August 2026): User-Agent LohiSoftBot/1.0, host names under
// bot.lohisoft.com, two fixed IPv4 addresses and never IPv6, every
// promise the tool can check, a search index (no AI training), and
// message@lohisoft.com for exclusion requests.
func lohiSoftBot() *Profile {
	return &Profile{
		Name:        "lohisoftbot",
		Category:    CategorySearch,
		Contact:     "message@lohisoft.com",
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

// googleRanges is where Google publishes its crawlers' lists since 2026
// (the old /search/apis/ipranges/ addresses answer with a note instead).
const googleRanges = "https://developers.google.com/static/crawling/ipranges/"

// googlebot is Google's common crawlers as "Verifying Googlebot and other
// Google crawlers" (developers.google.com/crawling/docs/crawlers-fetchers/
// verify-google-requests) describes them: PTR names
// crawl-***.googlebot.com and geo-crawl-***.geo.googlebot.com, and
// common-crawlers.json (formerly googlebot.json). They always obey
// robots.txt when crawling automatically.
//
// Only the common crawlers' suffix and list: the special-case crawlers
// (rate-limited-proxy-***.google.com) and the user-triggered fetchers
// (gae.googleusercontent.com, google-proxy-***.google.com, whose lists
// include fetches Google Cloud customers start) are their own profiles,
// google-special and google-user-triggered. Were their names and lists
// accepted for the Googlebot token, a program on Google Cloud could
// fetch from those addresses as "Googlebot" and pass.
//
// Google's other common crawlers (Googlebot-Image, GoogleOther, …) send
// product tokens of their own, each with its own robots.txt group: they
// are google-common.
func googlebot() *Profile {
	return &Profile{
		Name:        "googlebot",
		Category:    CategorySearch,
		Tokens:      []string{"Googlebot"},
		RobotsToken: "Googlebot",
		FCrDNS:      []string{"googlebot.com"},
		IPLists:     []string{googleRanges + "common-crawlers.json"},
		IPv6:        true,
		Conduct:     Conduct{Robots: true},
	}
}

// googleCommon is Google's common crawlers other than Googlebot, as
// "Google's common crawlers" (developers.google.com/crawling/docs/
// crawlers-fetchers/google-common-crawlers) lists them: verified as
// Googlebot is (googlebot.com, common-crawlers.json). They obey
// robots.txt, but each by the group of its own token (Googlebot-Image by
// Googlebot-Image's, else Googlebot's; GoogleOther by GoogleOther's):
// one robots.txt token cannot stand for them all, so robots.txt is not
// checked for them rather than judged by another crawler's group.
func googleCommon() *Profile {
	return &Profile{
		Name:     "google-common",
		Category: CategorySearch,
		Tokens: []string{"Googlebot-Image", "Googlebot-News", "Googlebot-Video", "Storebot-Google",
			"Google-InspectionTool", "GoogleOther", "GoogleOther-Image", "GoogleOther-Video",
			"Google-CloudVertexBot"},
		FCrDNS:  []string{"googlebot.com"},
		IPLists: []string{googleRanges + "common-crawlers.json"},
		IPv6:    true,
	}
}

// googleSpecial is Google's special-case crawlers as "List of Google's
// special-case crawlers" (developers.google.com/crawling/docs/
// crawlers-fetchers/google-special-case-crawlers) describes them: used
// by products under an agreement with the crawled site (AdsBot ignores
// the "*" group with the ad publisher's permission); they "may ignore
// robots.txt rules" and crawl from special-crawlers.json with PTR names
// rate-limited-proxy-***.google.com. The tokens are those the page lists.
func googleSpecial() *Profile {
	return &Profile{
		Name:     "google-special",
		Category: CategorySpecialCase,
		Tokens: []string{"AdsBot-Google", "AdsBot-Google-Mobile", "Mediapartners-Google",
			"APIs-Google", "Google-Safety"},
		FCrDNS:  []string{"google.com"},
		IPLists: []string{googleRanges + "special-crawlers.json"},
		IPv6:    true,
		Conduct: Conduct{RobotsNotPromised: true},
	}
}

// googleUserTriggered is Google's user-triggered fetchers as "List of
// Google user-triggered fetchers" (developers.google.com/crawling/docs/
// crawlers-fetchers/google-user-triggered-fetchers) describes them:
// fetches a person asked for in a Google product (Site Verifier,
// Feedfetcher, Read Aloud, NotebookLM, …) or on a site hosted on Google
// Cloud, which "generally ignore robots.txt rules"; PTR names
// ***.gae.googleusercontent.com or google-proxy-***.google.com and three
// lists. Genuine means sent from Google's fetch infrastructure, which
// serves Google Cloud customers too: it says where a request came from,
// not that Google chose to make it.
func googleUserTriggered() *Profile {
	return &Profile{
		Name:     "google-user-triggered",
		Category: CategoryUserTriggered,
		Tokens: []string{"FeedFetcher-Google", "Google-Site-Verification", "Google-Read-Aloud",
			"GoogleProducer", "Google-CWS", "Google-NotebookLM", "Google-GeminiNotebook",
			"Google-Pinpoint", "Google-Agent"},
		FCrDNS: []string{"gae.googleusercontent.com", "google.com"},
		IPLists: []string{
			googleRanges + "user-triggered-fetchers.json",
			googleRanges + "user-triggered-fetchers-google.json",
			googleRanges + "user-triggered-agents.json",
		},
		IPv6:    true,
		Conduct: Conduct{RobotsNotPromised: true},
	}
}

// bingbot is Microsoft's crawler as "Verifying Bingbot" describes it: PTR
// names under search.msn.com and the published bingbot.json. It promises
// to obey robots.txt.
func bingbot() *Profile {
	return &Profile{
		Name:        "bingbot",
		Category:    CategorySearch,
		Tokens:      []string{"bingbot"},
		RobotsToken: "bingbot",
		FCrDNS:      []string{"search.msn.com"},
		IPLists:     []string{"https://www.bing.com/toolbox/bingbot.json"},
		IPv6:        true,
		Conduct:     Conduct{Robots: true},
	}
}

// applebot is Apple's crawler as "About Applebot" (support.apple.com/
// en-us/119829) describes it: it powers search in Siri, Spotlight and
// Safari, follows robots.txt, and is verified by PTR names under
// applebot.apple.com or by applebot.json. Applebot-Extended is a
// robots.txt token only (training opt-out), sent by no crawler.
func applebot() *Profile {
	return &Profile{
		Name:     "applebot",
		Category: CategorySearch,
		Tokens:   []string{"Applebot"},
		FCrDNS:   []string{"applebot.apple.com"},
		IPLists:  []string{"https://search.developer.apple.com/applebot.json"},
		IPv6:     true,
		Conduct:  Conduct{Robots: true},
	}
}

// duckduckbot is DuckDuckGo's crawler as "About DuckDuckBot"
// (duckduckgo.com/duckduckgo-help-pages/results/duckduckbot) describes
// it: it respects robots.txt and crawls from the addresses the page lists,
// published as duckduckbot.json; no host names are published.
func duckduckbot() *Profile {
	return &Profile{
		Name:     "duckduckbot",
		Category: CategorySearch,
		Tokens:   []string{"DuckDuckBot"},
		IPLists:  []string{"https://duckduckgo.com/duckduckbot.json"},
		IPv6:     true,
		Conduct:  Conduct{Robots: true},
	}
}

// OpenAI's crawlers as "Overview of OpenAI crawlers"
// (developers.openai.com/api/docs/bots) describes them: each verified by
// its own published list, no host names. GPTBot (training) and
// OAI-SearchBot (ChatGPT search) follow robots.txt; for ChatGPT-User,
// which acts on a person's request, "robots.txt rules may not apply".

func gptbot() *Profile {
	return &Profile{
		Name:     "gptbot",
		Category: CategoryAITraining,
		Tokens:   []string{"GPTBot"},
		IPLists:  []string{"https://openai.com/gptbot.json"},
		IPv6:     true,
		Conduct:  Conduct{Robots: true},
	}
}

func oaiSearchBot() *Profile {
	return &Profile{
		Name:     "oai-searchbot",
		Category: CategoryAISearch,
		Tokens:   []string{"OAI-SearchBot"},
		IPLists:  []string{"https://openai.com/searchbot.json"},
		IPv6:     true,
		Conduct:  Conduct{Robots: true},
	}
}

func chatGPTUser() *Profile {
	return &Profile{
		Name:     "chatgpt-user",
		Category: CategoryUserTriggered,
		Tokens:   []string{"ChatGPT-User"},
		IPLists:  []string{"https://openai.com/chatgpt-user.json"},
		IPv6:     true,
		Conduct:  Conduct{RobotsNotPromised: true},
	}
}

// Anthropic's crawlers as "Does Anthropic crawl data from the web, and
// how can site owners block the crawler?" (support.claude.com/en/articles/
// 8896518) describes them: ClaudeBot (training), Claude-SearchBot
// (search) and Claude-User (a person's request) all honour robots.txt,
// Claude-User included, and one list, claude.com/crawling/bots.json,
// holds the addresses of all three ("If a crawler has a source IP address
// on this list, it indicates that the crawler is coming from Anthropic");
// no host names. The list cannot tell the three apart: an address on it
// is genuine for each.

const anthropicList = "https://claude.com/crawling/bots.json"

func claudeBot() *Profile {
	return &Profile{
		Name:     "claudebot",
		Category: CategoryAITraining,
		Tokens:   []string{"ClaudeBot"},
		IPLists:  []string{anthropicList},
		IPv6:     true,
		Conduct:  Conduct{Robots: true},
	}
}

func claudeSearchBot() *Profile {
	return &Profile{
		Name:     "claude-searchbot",
		Category: CategoryAISearch,
		Tokens:   []string{"Claude-SearchBot"},
		IPLists:  []string{anthropicList},
		IPv6:     true,
		Conduct:  Conduct{Robots: true},
	}
}

func claudeUser() *Profile {
	return &Profile{
		Name:     "claude-user",
		Category: CategoryUserTriggered,
		Tokens:   []string{"Claude-User"},
		IPLists:  []string{anthropicList},
		IPv6:     true,
		Conduct:  Conduct{Robots: true},
	}
}

// Perplexity's crawlers as "Perplexity Crawlers" (docs.perplexity.ai/
// docs/resources/perplexity-crawlers) describes them: PerplexityBot
// surfaces sites in Perplexity's search results (not for training) and
// follows robots.txt; Perplexity-User fetches for a person's question
// and, "since a user requested the fetch, this fetcher generally ignores
// robots.txt rules". Each has its own list; no host names.

func perplexityBot() *Profile {
	return &Profile{
		Name:     "perplexitybot",
		Category: CategoryAISearch,
		Tokens:   []string{"PerplexityBot"},
		IPLists:  []string{"https://www.perplexity.ai/perplexitybot.json"},
		IPv6:     true,
		Conduct:  Conduct{Robots: true},
	}
}

func perplexityUser() *Profile {
	return &Profile{
		Name:     "perplexity-user",
		Category: CategoryUserTriggered,
		Tokens:   []string{"Perplexity-User"},
		IPLists:  []string{"https://www.perplexity.ai/perplexity-user.json"},
		IPv6:     true,
		Conduct:  Conduct{RobotsNotPromised: true},
	}
}

// amazonbot is Amazon's crawler as "About Amazonbot"
// (developer.amazon.com/amazonbot) describes it: it respects robots.txt
// (user-agent and disallow; not crawl-delay), may be used to train
// Amazon's AI models, and is verified by DNS: PTR names under
// crawl.amazonbot.amazon that resolve back. Amazon's address pages are
// HTML, not a list layout the tool reads, so DNS alone decides.
func amazonbot() *Profile {
	return &Profile{
		Name:     "amazonbot",
		Category: CategoryAITraining,
		Tokens:   []string{"Amazonbot"},
		FCrDNS:   []string{"crawl.amazonbot.amazon"},
		IPv6:     true,
		Conduct:  Conduct{Robots: true},
	}
}

// MaxProfiles is the most crawlers one run audits.
const MaxProfiles = 64

// Resolve turns --crawler values into profiles, in the order given: the
// name of a built-in profile, a category of built-in profiles (all of
// them, by name: "ai-training"), or the path of a profile file. No value
// means the default profile alone. A crawler named twice is an error,
// unless a category brought it (a category may overlap a name or another
// category). Every error is a usage error (fail.Usage): a name that is not
// built in, a profile file that cannot be read or does not validate, a
// crawler given twice, too many crawlers.
func Resolve(values []string) ([]*Profile, error) {
	if len(values) == 0 {
		p, _ := Builtin(Default)
		return []*Profile{p}, nil
	}
	var out []*Profile
	byCategory := map[string]bool{}
	for _, v := range values {
		v = strings.TrimSpace(v)
		var ps []*Profile
		group := false
		if p, ok := Builtin(strings.ToLower(v)); ok {
			ps = []*Profile{p}
		} else if in := BuiltinsIn(strings.ToLower(v)); len(in) > 0 {
			ps, group = in, true
		} else {
			if !looksLikeFile(v) {
				return nil, fail.Usagef("unknown crawler %q: built in are %s, and the categories %s; or give a profile file (a path such as ./examplebot.yaml)",
					clip(v), strings.Join(BuiltinNames(), ", "), strings.Join(BuiltinCategories(), ", "))
			}
			p, err := LoadFile(v)
			if err != nil {
				var fe *FileError
				if errors.As(err, &fe) {
					return nil, fail.New(fail.Usage, err, "")
				}
				return nil, fail.Usagef("cannot read crawler profile %s: %w", v, fail.PathCause(err))
			}
			ps = []*Profile{p}
		}
		for _, p := range ps {
			if i := slices.IndexFunc(out, func(q *Profile) bool { return q.Name == p.Name }); i >= 0 {
				q := out[i]
				if (group || byCategory[p.Name]) && q.Source == SourceBuiltin && p.Source == SourceBuiltin {
					continue
				}
				return nil, fail.Usagef("crawler %s is given twice (%s and %s)", p.Name, q.Source, p.Source)
			}
			out = append(out, p)
			byCategory[p.Name] = byCategory[p.Name] || group
		}
		if len(out) > MaxProfiles {
			return nil, fail.Usagef("%d crawlers; at most %d", len(out), MaxProfiles)
		}
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
