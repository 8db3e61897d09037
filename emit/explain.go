package emit

import (
	"errors"
	"fmt"
	"net/netip"
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
