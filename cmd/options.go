package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"
)

// auditOptions holds the flags shared by logs, verify and emit (SPEC §1).
type auditOptions struct {
	Format       string
	LogFormat    string
	Site         []string
	Resolvers    []string
	DNSTimeout   time.Duration
	DNSRetries   int
	IPList       string
	Offline      bool
	Robots       []string
	Budget       int
	BudgetWindow time.Duration
	MinPause     time.Duration
	MinBackoff   time.Duration
	Since, Until string
	CacheDir     string
	NoCache      bool
	TrustXFF     bool
	FailOn       string
	Config       string
	NoProgress   bool
}

// DefaultIPListURL is where the crawler's operator publishes its addresses.
const DefaultIPListURL = "https://lohisoft.com/bot/ips.json"

func addFormatFlag(f *pflag.FlagSet, o *auditOptions) {
	f.StringVar(&o.Format, "format", "", "output format: table, json, yaml, csv, markdown (default table on a terminal, else json)")
}

func addConfigFlag(f *pflag.FlagSet, o *auditOptions) {
	f.StringVar(&o.Config, "config", "", "YAML config file whose keys mirror the flags (default $XDG_CONFIG_HOME/lohibot-audit/config.yaml, then /etc/lohibot-audit/config.yaml)")
}

// addIdentityFlags adds the flags that decide who the crawler is.
func addIdentityFlags(f *pflag.FlagSet, o *auditOptions) {
	f.StringArrayVar(&o.Resolvers, "resolver", nil, "DNS server `HOST:PORT` to ask, tried in turn (repeatable; default from /etc/resolv.conf)")
	f.DurationVar(&o.DNSTimeout, "dns-timeout", 2*time.Second, "timeout per DNS query")
	f.IntVar(&o.DNSRetries, "dns-retries", 2, "retries per DNS query before it counts as failed")
	f.StringVar(&o.IPList, "ip-list", DefaultIPListURL, "the crawler's IP list: an https URL or a file")
	f.BoolVar(&o.Offline, "offline", false, "no network at all: the cached or built-in IP list decides")
	f.StringVar(&o.CacheDir, "cache-dir", "", "where DNS answers and the fetched IP list are kept (default $XDG_CACHE_HOME/lohibot-audit)")
	f.BoolVar(&o.NoCache, "no-cache", false, "neither read nor write the cache")
}

// addLogFlags adds the flags that say how to read logs and what to check.
func addLogFlags(f *pflag.FlagSet, o *auditOptions) {
	f.StringVar(&o.LogFormat, "log-format", "auto", "log format: auto, common, combined, vhost_combined, json, 'nginx:<log_format>', 'apache:<LogFormat>'")
	f.StringArrayVar(&o.Site, "site", nil, "site of the lines that record no virtual host: `SITE` for every such file, or GLOB=SITE for the files whose path matches GLOB (repeatable; the first match wins; default: the file's base name, or its directory's name when files of several directories share it)")
	f.StringArrayVar(&o.Robots, "robots", nil, "robots.txt for every site (`FILE|URL`), or SITE=FILE|URL for one site (repeatable)")
	f.IntVar(&o.Budget, "budget", 20, "pages per site per budget window")
	f.DurationVar(&o.BudgetWindow, "budget-window", 24*time.Hour, "the budget's window")
	f.DurationVar(&o.MinPause, "min-pause", time.Second, "least gap between two requests to one site")
	f.DurationVar(&o.MinBackoff, "min-backoff", 30*time.Second, "least gap after a 429/5xx when the log does not record Retry-After")
	f.StringVar(&o.Since, "since", "", "only requests at or after this time (RFC 3339, or a duration such as 24h back from now)")
	f.StringVar(&o.Until, "until", "", "only requests before this time (RFC 3339, or a duration back from now)")
	f.BoolVar(&o.TrustXFF, "trust-xff", false, "take the client from X-Forwarded-For (only behind a proxy you run: the header is set by the client)")
	f.StringVar(&o.FailOn, "fail-on", "", "exit 1 when findings exist: spoofed, violations or any")
	f.BoolVar(&o.NoProgress, "no-progress", false, "never print a progress line on stderr")
}

// outputFormat resolves --format against the terminal.
func (o *auditOptions) outputFormat(env *Env) (string, error) {
	switch o.Format {
	case "":
		if env.StdoutTTY {
			return "table", nil
		}
		return "json", nil
	case "table", "json", "yaml", "csv", "markdown":
		return o.Format, nil
	}
	return "", usageError("unknown --format %q: use table, json, yaml, csv or markdown", o.Format)
}

// timeBound parses a --since/--until value: RFC 3339 (or a bare date), or
// a duration back from now.
func timeBound(name, v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(v); err == nil {
		if d < 0 {
			d = -d
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, usageError("--%s %q is neither an RFC 3339 time (2026-01-02T15:04:05Z) nor a duration (24h)", name, v)
}

// failOnMatch says whether --fail-on asks for exit 1 given the findings.
func failOnMatch(failOn string, spoofed int64, violations int) (bool, error) {
	switch failOn {
	case "":
		return false, nil
	case "spoofed":
		return spoofed > 0, nil
	case "violations":
		return violations > 0, nil
	case "any":
		return spoofed > 0 || violations > 0, nil
	}
	return false, usageError("unknown --fail-on %q: use spoofed, violations or any", failOn)
}

// loadConfig applies the YAML config file to every flag of c that was not
// set on the command line: flags win over the file. Keys are flag names;
// a list sets a repeatable flag once per element. A key that names no flag
// of any command is an error (a typo would otherwise be ignored).
func loadConfig(env *Env, c *cobra.Command, explicit string) error {
	path, required := explicit, explicit != ""
	if path == "" {
		path = defaultConfigPath(env)
	}
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if !required && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return usageError("cannot read config file: %v", err)
	}
	var raw map[string]any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return usageError("config file %s is not valid YAML: %s", path, firstLine(err.Error()))
	}
	known := allFlagNames(c.Root())
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known[k] {
			return usageError("config file %s: unknown key %q (keys are flag names, such as log-format)", path, k)
		}
		fl := c.Flags().Lookup(k)
		if fl == nil || fl.Changed || k == "config" {
			continue
		}
		values, err := configValues(raw[k])
		if err != nil {
			return usageError("config file %s: key %q: %v", path, k, err)
		}
		for _, v := range values {
			if err := fl.Value.Set(v); err != nil {
				return usageError("config file %s: key %q: %v", path, k, err)
			}
		}
	}
	return nil
}

func defaultConfigPath(env *Env) string {
	var candidates []string
	if x := env.Getenv("XDG_CONFIG_HOME"); x != "" {
		candidates = append(candidates, filepath.Join(x, "lohibot-audit", "config.yaml"))
	} else if h := env.Getenv("HOME"); h != "" {
		candidates = append(candidates, filepath.Join(h, ".config", "lohibot-audit", "config.yaml"))
	}
	candidates = append(candidates, "/etc/lohibot-audit/config.yaml")
	for _, p := range candidates {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

func configValues(v any) ([]string, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			s, err := configScalar(e)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	default:
		s, err := configScalar(v)
		if err != nil {
			return nil, err
		}
		return []string{s}, nil
	}
}

func configScalar(v any) (string, error) {
	switch t := v.(type) {
	case string:
		return t, nil
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(t), nil
	case time.Time:
		return t.Format(time.RFC3339Nano), nil
	}
	return "", fmt.Errorf("want a value or a list of values, not %T", v)
}

func allFlagNames(root *cobra.Command) map[string]bool {
	names := map[string]bool{}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	return names
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// sanitize makes text from the outside world safe to print on a terminal.
func sanitize(s string) string { return parse.EscapeControl(s) }
