package emit

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// Explain words an error of writing rules (Target.Write, CrowdSecBans)
// for the command line: a fault of the flags or of the input is a usage
// error with what to do next; other errors say the rules were not
// written.
func Explain(err error) error {
	switch {
	case errors.Is(err, ErrNoTokens):
		return fail.Hinted(err, "give the crawler's profile file with --crawler FILE, or use the nftables target, which blocks only the addresses seen spoofing")
	case errors.Is(err, ErrNoCrawlerAddresses):
		return fail.Hinted(err, "give the crawler's IP list with --ip-list, or use the nftables target, which blocks only the addresses seen spoofing")
	case errors.Is(err, ErrListTooLong):
		return fail.Hinted(err, "block fewer addresses (--since 7d), or use the nftables or modsecurity target")
	case errors.Is(err, ErrExpressionTooLong):
		return fail.Hinted(err, "the crawler's addresses alone do not fit in a Cloudflare expression; check the IP list")
	case errors.Is(err, ErrBadOption):
		return fail.Usagef("%s", optionMessage(err))
	}
	return fmt.Errorf("cannot write the rules: %w", err)
}

// CheckOptions is t.Options with its error worded for the command line
// (a usage error naming the flag), so that a bad flag is refused before
// any log is read.
func (t Target) CheckOptions(s Settings) (Options, error) {
	opts, err := t.Options(s)
	if err != nil {
		return opts, fail.Usagef("%s", optionMessage(err))
	}
	return opts, nil
}

// optionMessage words an option error: the flag named as given, without
// the package's sentinel.
func optionMessage(err error) string {
	var bad *SettingError
	if errors.As(err, &bad) {
		return "--" + bad.Error()
	}
	return strings.TrimPrefix(err.Error(), ErrBadOption.Error()+": ")
}

// TTLFlag parses a --ttl value (ParseTTL) for what lasts from 1s to
// MaxTTL (a CrowdSec decision, a hold out of blocking); any other value
// is a usage error naming the flag, worded as CheckOptions words it.
func TTLFlag(v string) (time.Duration, error) {
	ttl, err := checkedTTL(v)
	if err != nil {
		return 0, fail.Usagef("%s", optionMessage(err))
	}
	return ttl, nil
}

// ParseTTLFlag parses a --ttl value (ParseTTL) whatever it lasts, for a
// command that holds it to TTLFlag's range only where it applies (watch);
// a value that is not a duration is TTLFlag's usage error.
func ParseTTLFlag(v string) (time.Duration, error) {
	ttl, err := ParseTTL(v)
	if err != nil {
		return 0, fail.Usagef("%s", optionMessage(badTTL(v)))
	}
	return ttl, nil
}

// NeverBlockFlag parses --never-block values (ParseNeverBlock); a value
// that is neither an address nor a CIDR is a usage error.
func NeverBlockFlag(values []string) ([]netip.Prefix, error) {
	never, err := ParseNeverBlock(values)
	var bad *BadPrefixError
	if errors.As(err, &bad) {
		return nil, fail.Usagef("--never-block %q is neither an address nor a CIDR such as 192.0.2.0/24", bad.Value)
	}
	return never, err
}

// ModeFlag parses a --mode value (ParseMode); an unknown one is a usage
// error.
func ModeFlag(v string) (Mode, error) {
	mode, err := ParseMode(v)
	if err != nil {
		return "", fail.Usagef("--mode %q: use block-spoofed, block-bot or allow-bot", v)
	}
	return mode, nil
}

// TargetArg is the target the command line names (TARGET); an unknown
// one is a usage error that lists the targets.
func TargetArg(name string) (Target, error) {
	t, ok := Lookup(name)
	if !ok {
		return t, fail.Hinted(fmt.Errorf("unknown emit target %q", name), "use nftables, cloudflare, modsecurity or crowdsec")
	}
	return t, nil
}

// targetFlags are the command-line flags that apply to some targets only,
// per target, in the order of the registry.
var targetFlags = map[string][]string{
	"nftables":    {"ttl", "nft-hook", "nft-priority", "nft-table", "set-only"},
	"cloudflare":  {"cloudflare-output", "cloudflare-list-name", "cloudflare-matches"},
	"modsecurity": {"modsec-id-base"},
	"crowdsec":    {"ttl", "crowdsec-credentials", "dry-run"},
}

// CheckFlags refuses, as a usage error, a flag given (changed reports
// which) that belongs to other targets only: the first such flag, in the
// order the targets are listed, named with the first target it is for.
func (t Target) CheckFlags(changed func(flag string) bool) error {
	for _, other := range registry {
		if other.Name == t.Name {
			continue
		}
		for _, n := range targetFlags[other.Name] {
			if changed(n) && !slices.Contains(targetFlags[t.Name], n) {
				return fail.Usagef("--%s is for the %s target, not %s", n, other.Name, t.Name)
			}
		}
	}
	return nil
}

// CheckMode refuses, as a usage error, a mode the target does not take:
// the crowdsec target bans spoofers only.
func (t Target) CheckMode(m Mode) error {
	if t.Name == "crowdsec" && m != BlockSpoofed {
		return fail.Usagef("--mode %s: the crowdsec target bans spoofers only (block-spoofed)", m)
	}
	return nil
}

// Pushes says whether a run of t pushes its decisions to a Local API
// rather than writing its output: the crowdsec target does, unless
// dryRun (--dry-run) asks for the request instead; then -o (output) is a
// usage error.
func (t Target) Pushes(dryRun bool, output string) (bool, error) {
	if t.Name != "crowdsec" || dryRun {
		return false, nil
	}
	if output != "" {
		return false, fail.Usagef("-o is for --dry-run: without it the crowdsec target pushes its decisions to the Local API")
	}
	return true, nil
}
