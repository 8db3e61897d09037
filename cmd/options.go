package cmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/failon"
	"github.com/lohisoft/lohibot-audit/internal/flagfile"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/proxy"
	"github.com/lohisoft/lohibot-audit/render"
	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// auditOptions holds the flags shared by logs, verify and emit (SPEC §1).
type auditOptions struct {
	Format     string
	LogFormat  string
	Site       []string
	Resolvers  []string
	DNSTimeout time.Duration
	DNSRetries int
	IPList     string
	Offline    bool
	Robots     []string
	// Flags are --budget, --budget-window, --min-pause, --min-backoff and
	// --max-violations.
	conduct.Flags
	// OptedOut are the --opted-out values ([CRAWLER:]SITE=TIME), and
	// OptOutGrace --opt-out-grace (cmd/optout.go).
	OptedOut     []string
	OptOutGrace  time.Duration
	Since, Until string
	CacheDir     string
	NoCache      bool
	TrustXFF     bool
	// TrustedProxies are the --trusted-proxy values.
	TrustedProxies []string
	FailOn         string
	Config         string
	NoProgress     bool
	Top            render.Top // logs: addresses listed in table and markdown
	readOptions               // --timezone, --max-dict (cmd/format.go)

	// DNSConcurrency is how many addresses are verified at once.
	DNSConcurrency int
	// Crawlers are the --crawler values: built-in names or profile files.
	Crawlers        []string
	snapshotOptions // logs --snapshot (cmd/snapshot.go)
	// given, when set, says whether a flag was given on the command line
	// or in the config file (flagGiven), as opposed to left at its
	// default: a conduct flag given overrides every crawler's promise.
	given func(name string) bool
}

// crawlerTitle names the default crawler in help text and messages, by
// its first token.
var crawlerTitle = crawler.DefaultTitle()

// DefaultIPListURL is where the default crawler's operator publishes its
// addresses (its profile's first list), named in --ip-list's help: the
// flag's default, "", is each crawler's own lists.
var DefaultIPListURL = crawler.DefaultProfile().IPLists[0]

func addConfigFlag(f *pflag.FlagSet, o *auditOptions) {
	f.StringVar(&o.Config, "config", "", "YAML config file whose keys mirror the flags (default $XDG_CONFIG_HOME/lohibot-audit/config.yaml, then /etc/lohibot-audit/config.yaml)")
}

// addIdentityFlags adds the flags that decide who the crawler is.
func addIdentityFlags(f *pflag.FlagSet, o *auditOptions) {
	f.StringArrayVar(&o.Resolvers, "resolver", nil, "DNS server `HOST:PORT` to ask, tried in turn (repeatable; default from /etc/resolv.conf)")
	f.DurationVar(&o.DNSTimeout, "dns-timeout", 2*time.Second, "timeout per DNS query")
	f.IntVar(&o.DNSRetries, "dns-retries", 2, "retries per DNS query before it counts as failed")
	f.IntVar(&o.DNSConcurrency, "dns-concurrency", verify.DefaultDNSConcurrency, "addresses verified at once (each needs a PTR and then a forward lookup)")
	f.StringVar(&o.IPList, "ip-list", "", "the crawler's IP list: an https URL or a file (default: each crawler's own lists; "+crawler.DefaultTitle()+"'s is "+DefaultIPListURL+")")
	f.BoolVar(&o.Offline, "offline", false, "no network at all: the cached or built-in IP list decides")
	addCacheFlags(f, o)
}

// addTrustedProxyFlag adds --trusted-proxy.
func addTrustedProxyFlag(f *pflag.FlagSet, o *auditOptions) {
	f.StringArrayVar(&o.TrustedProxies, "trusted-proxy", nil, "a proxy in front of the server whose requests carry the real client in a logged header (X-Forwarded-For, CF-Connecting-IP, True-Client-IP, X-Real-IP): `NAME|CIDR`, a CDN ("+strings.Join(proxy.Names()[:len(proxy.Names())-1], ", ")+"), private (RFC 1918, fc00::/7) or an address range (repeatable)")
}

// addCacheFlags adds --cache-dir and --no-cache.
func addCacheFlags(f *pflag.FlagSet, o *auditOptions) {
	f.StringVar(&o.CacheDir, "cache-dir", "", "where DNS answers and the fetched IP list are kept (default $XDG_CACHE_HOME/lohibot-audit)")
	f.BoolVar(&o.NoCache, "no-cache", false, "neither read nor write the cache")
}

// addLogFlags adds the flags that say how to read logs and what to check.
func addLogFlags(f *pflag.FlagSet, o *auditOptions) {
	f.StringVar(&o.LogFormat, "log-format", "auto", "log format: auto, "+strings.Join(parse.FormatNames(), ", ")+", a preset with extra fields (combined+sec), 'nginx:<log_format>' or 'apache:<LogFormat>', each optionally after 'syslog+' (syslog+combined: lines forwarded by syslog) or 'container+' (container+combined: a container runtime's log)")
	f.StringArrayVar(&o.Site, "site", nil, "site of the lines that record no virtual host: `SITE` for every such file, or GLOB=SITE for the files whose path matches GLOB (repeatable; the first match wins; default: the file's base name, or its directory's name when files of several directories share it)")
	addCheckFlags(f, o)
	addOptOutFlags(f, o)
	f.StringVar(&o.Since, "since", "", "only requests at or after this time (RFC 3339, or a duration back from now such as 24h or 7d)")
	f.StringVar(&o.Until, "until", "", "only requests before this time (RFC 3339, or a duration back from now such as 1d)")
	f.BoolVar(&o.TrustXFF, "trust-xff", false, "every connecting address is a proxy you run: take the client from the logged X-Forwarded-For (the header is the client's word unless your proxy sets it)")
	addTrustedProxyFlag(f, o)
	f.StringVar(&o.FailOn, "fail-on", "", "exit 1 when findings exist: spoofed, violations or any")
	completeWith(f, "fail-on", failon.Values...)
	f.BoolVar(&o.NoProgress, "no-progress", false, "never print a progress line on stderr")
	addReadFlags(f, &o.readOptions)
}

// addCheckFlags adds the flags that say what the crawler's conduct is
// checked against: robots.txt and the conduct promises (logs, emit,
// watch, merge).
func addCheckFlags(f *pflag.FlagSet, o *auditOptions) {
	f.StringArrayVar(&o.Robots, "robots", nil, "robots.txt for every site (`FILE|URL`), or SITE=FILE|URL for one site (repeatable)")
	def := conduct.DefaultFlags()
	f.IntVar(&o.Budget, "budget", def.Budget, "pages per site per budget window")
	f.DurationVar(&o.BudgetWindow, "budget-window", def.BudgetWindow, "the budget's window")
	f.DurationVar(&o.MinPause, "min-pause", def.MinPause, "least gap between two requests to one site")
	f.DurationVar(&o.MinBackoff, "min-backoff", def.MinBackoff, "least gap after a 429/5xx when the log does not record Retry-After")
	f.IntVar(&o.MaxViolations, "max-violations", def.MaxViolations, "violations listed per site and kind, the first ones; the others are counted (0: all)")
}

// failOnFindings returns errFindings when --fail-on asks for exit 1 given
// the findings (failon.Match), and then says on stderr what it matched:
// the report may have gone to a file or a pipe.
func failOnFindings(env *Env, failOn string, spoofed int64, spoofedOne, spoofedMany string, violations int) error {
	if match, _ := failon.Match(failOn, spoofed, violations); !match {
		return nil
	}
	fmt.Fprintf(env.Stderr, "lohibot-audit: --fail-on %s matched: %s\n", failOn, failon.Matched(failOn, spoofed, spoofedOne, spoofedMany, violations))
	return errFindings
}

// loadConfig applies the YAML config file (--config, else the default
// path) to every flag of c that was not set on the command line: flags win
// over the file (see flagfile.LoadCommand).
func loadConfig(env *Env, c *cobra.Command, explicit string) error {
	return flagfile.LoadCommand(c, explicit, env.Getenv)
}

// sanitize makes text from the outside world safe to print on a terminal.
func sanitize(s string) string { return parse.EscapeControl(s) }

// flagGiven reports whether the flag name of fs was given, on the command
// line or in the config file.
func flagGiven(fs *pflag.FlagSet, name string) bool { return flagfile.Given(fs, name) }
