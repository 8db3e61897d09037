package crawler

import (
	"embed"
	"slices"
	"strings"
	"time"
)

// ListSnapshot is a copy of a published IP list built into the program:
// the last fallback for a built-in profile's list when neither the
// network nor the cache has one. It is real published data, as found in
// a public copy; its age is said whenever it is used.
type ListSnapshot struct {
	// URL is the list's address, as a built-in profile names it.
	URL string
	// AsOf is the day the list was known to be published so: the date of
	// the copy, or the list's own creationTime when the copy is undated.
	AsOf time.Time
	// From says where the copy was found (a public repository, a path
	// and a commit) and whether it is the file as served or its
	// addresses only.
	From string
	// Data is the list, in its operator's layout ({"prefixes": [...]}).
	Data []byte
}

//go:embed snapshots/*.json
var snapshotFiles embed.FS

// snapshotEntry is a snapshot's file and facts.
type snapshotEntry struct {
	url, file string
	asOf      time.Time
	from      string
}

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// snapshots are the built-in lists' snapshots. Lists without one:
// Google's user-triggered-fetchers-google.json and user-triggered-agents.json
// (no dated copy was found), LohiSoftBot's ips.json (its page's two
// addresses are its built-in list), and Amazonbot, which publishes no list
// in a layout the tool reads.
var snapshots = []snapshotEntry{
	{googleRanges + "common-crawlers.json", "google-common-crawlers.json", day(2026, 8, 21),
		"github.com/jonhadfield/cloud-ips googlebot.json at 56c201aff7d6 (2026-08-21), the file as served; creationTime 2026-08-20T14:46:45, 315 prefixes"},
	{googleRanges + "special-crawlers.json", "google-special-crawlers.json", day(2026, 8, 21),
		"github.com/jonhadfield/cloud-ips googlesc.json at 16ec588c2fcb (2026-08-21), the file as served; creationTime 2026-08-20T14:46:21, 270 prefixes"},
	{googleRanges + "user-triggered-fetchers.json", "google-user-triggered-fetchers.json", day(2026, 8, 21),
		"github.com/jonhadfield/cloud-ips googleutf.json at bf5ad4d4363f (2026-08-21), the file as served; creationTime 2026-08-20T14:47:01, 1056 prefixes"},
	{"https://www.bing.com/toolbox/bingbot.json", "bing-bingbot.json", day(2026, 5, 5),
		"github.com/sefinek/known-bots-ip-whitelist lists/bingbot/ips.txt at dd20350 (2026-05-05; unchanged since 2025-09-26), the addresses only; 28 prefixes"},
	{"https://search.developer.apple.com/applebot.json", "apple-applebot.json", day(2026, 9, 15),
		"github.com/jonhadfield/cloud-ips applebot.json at 4bd255f3d9c4, the file as served; creationTime 2026-09-15T10:00:00, 24 prefixes"},
	{"https://duckduckgo.com/duckduckbot.json", "duckduckgo-duckduckbot.json", day(2026, 5, 5),
		"github.com/sefinek/known-bots-ip-whitelist lists/duckduckbot/ips.txt at dd20350 (2026-05-05; unchanged since 2026-04-01), the addresses only; 319 prefixes"},
	{"https://openai.com/gptbot.json", "openai-gptbot.json", day(2026, 5, 11),
		"github.com/FabrizioCafolla/openai-crawlers-ip-ranges openai/stable/gptbot.json at e5496a3 (2026-05-11), the file as served; creationTime 2025-10-30T11:00:00, 21 prefixes"},
	{"https://openai.com/searchbot.json", "openai-searchbot.json", day(2026, 5, 11),
		"github.com/FabrizioCafolla/openai-crawlers-ip-ranges openai/stable/searchbot.json at e5496a3 (2026-05-11), the file as served; creationTime 2026-01-02T11:00:00, 35 prefixes"},
	{"https://openai.com/chatgpt-user.json", "openai-chatgpt-user.json", day(2026, 5, 11),
		"github.com/FabrizioCafolla/openai-crawlers-ip-ranges openai/stable/chatgpt-user.json at e5496a3 (2026-05-11), the file as served; creationTime 2026-04-29T21:03:15, 240 prefixes"},
	{anthropicList, "anthropic-bots.json", day(2026, 10, 7),
		"github.com/jonhadfield/cloud-ips anthropic.json at 510a4a9f08d2, the file as served; creationTime 2026-10-07T00:00:00Z, 38 prefixes"},
	{"https://www.perplexity.ai/perplexitybot.json", "perplexity-perplexitybot.json", day(2026, 5, 5),
		"github.com/sefinek/known-bots-ip-whitelist lists/perplexitybot/ips.txt at dd20350 (2026-05-05), the addresses only; 8 prefixes"},
	{"https://www.perplexity.ai/perplexity-user.json", "perplexity-user.json", day(2026, 5, 5),
		"github.com/sefinek/known-bots-ip-whitelist lists/perplexity-user/ips.txt at dd20350 (2026-05-05), the addresses only; 4 prefixes"},
}

// SnapshotOf returns the built-in snapshot of the list at url, and
// whether there is one.
func SnapshotOf(url string) (ListSnapshot, bool) {
	for _, e := range snapshots {
		if e.url == url {
			data, err := snapshotFiles.ReadFile("snapshots/" + e.file)
			if err != nil {
				panic("crawler: snapshot " + e.file + ": " + err.Error())
			}
			return ListSnapshot{URL: e.url, AsOf: e.asOf, From: e.from, Data: data}, true
		}
	}
	return ListSnapshot{}, false
}

// Snapshots returns every built-in snapshot, sorted by URL.
func Snapshots() []ListSnapshot {
	out := make([]ListSnapshot, 0, len(snapshots))
	for _, e := range snapshots {
		s, _ := SnapshotOf(e.url)
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b ListSnapshot) int { return strings.Compare(a.URL, b.URL) })
	return out
}
