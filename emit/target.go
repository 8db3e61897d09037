package emit

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// Options holds the options of every target; each target reads its own
// field and ignores the others. The zero value gives every default.
type Options struct {
	NFTables   NFTOptions
	Cloudflare CloudflareOptions
	ModSec     ModSecOptions
	CrowdSec   CrowdSecOptions
}

// Target is one kind of rules this package writes, found by name with
// [Lookup].
type Target struct {
	// Name names the target on the command line: nftables, cloudflare,
	// modsecurity or crowdsec.
	Name  string
	write func(io.Writer, Input, Options) (*Plan, error)
	// probe is an input that reaches every option check of write.
	probe Input
}

// registry holds the targets in the order help text lists them.
var registry = []Target{
	{Name: "nftables", write: func(w io.Writer, in Input, o Options) (*Plan, error) { return NFTables(w, in, o.NFTables) }},
	{Name: "cloudflare", write: func(w io.Writer, in Input, o Options) (*Plan, error) { return Cloudflare(w, in, o.Cloudflare) },
		// Block-bot with no address fails after the option checks, not
		// before them as block-spoofed does.
		probe: Input{Mode: BlockBot}},
	{Name: "modsecurity", write: func(w io.Writer, in Input, o Options) (*Plan, error) { return ModSecurity(w, in, o.ModSec) }},
	// Written, the crowdsec target is the request that pushes its
	// decisions (a dry run); cmd pushes them with package crowdsec.
	{Name: "crowdsec", write: func(w io.Writer, in Input, o Options) (*Plan, error) { return CrowdSec(w, in, o.CrowdSec) }},
}

// TargetNames lists the targets' names in the order help text shows them.
func TargetNames() []string {
	names := make([]string, len(registry))
	for i, t := range registry {
		names[i] = t.Name
	}
	return names
}

// Lookup returns the target called name, and whether there is one.
func Lookup(name string) (Target, bool) {
	for _, t := range registry {
		if t.Name == name {
			return t, true
		}
	}
	return Target{}, false
}

// Write writes the target's rules for in to w, with the target's options
// from o, and returns the plan they follow.
func (t Target) Write(w io.Writer, in Input, o Options) (*Plan, error) {
	return t.write(w, in, o)
}

// Check checks the target's options in o before any input is gathered:
// it returns an error wrapping [ErrBadOption] for one that [Target.Write]
// would refuse whatever the input, and nil otherwise. Some checks depend
// on the input (a ModSecurity ID base with no room left for the rules)
// and are only made by Write.
func (t Target) Check(o Options) error {
	if _, err := t.write(io.Discard, t.probe, o); errors.Is(err, ErrBadOption) {
		return err
	}
	return nil
}

// Settings are the targets' options as the command line gives them,
// before they are checked: each target reads its own.
type Settings struct {
	// TTL is nftables' element timeout and CrowdSec's decision length
	// (7d, 36h, 1d12h).
	TTL                            string
	NFTHook, NFTPriority, NFTTable string
	SetOnly                        bool
	CloudflareOutput               string
	CloudflareList                 string
	CloudflareMatches              bool
	ModSecIDBase                   int
}

// SettingError is a setting that is not valid for its target: Setting
// names it as the command line does (ttl, cloudflare-output,
// modsec-id-base), Value is the value given and Want says what to give.
type SettingError struct {
	Setting, Value, Want string
}

func (e *SettingError) Error() string {
	return fmt.Sprintf("%s %s: %s", e.Setting, e.Value, e.Want)
}

// badTTL is the error for a --ttl value that is not a duration from 1s
// to MaxTTL.
func badTTL(v string) error {
	return &SettingError{"ttl", strconv.Quote(v), "give a duration from 1s to 365d, such as 7d, 36h or 1d12h"}
}

// checkedTTL is --ttl value v (ParseTTL) when it lasts from 1s to MaxTTL,
// else a *SettingError.
func checkedTTL(v string) (time.Duration, error) {
	ttl, err := ParseTTL(v)
	if err != nil || ttl < time.Second || ttl > MaxTTL {
		return 0, badTTL(v)
	}
	return ttl, nil
}

// Options checks the settings target t reads and returns its Options,
// so that a bad one is refused before any input is gathered: a
// *SettingError, or an error wrapping ErrBadOption from Check.
func (t Target) Options(s Settings) (Options, error) {
	var o Options
	switch t.Name {
	case "nftables":
		ttl, err := ParseTTL(s.TTL)
		if err == nil {
			_, err = FormatNFTDuration(ttl)
		}
		if err != nil {
			return o, badTTL(s.TTL)
		}
		o.NFTables = NFTOptions{TTL: ttl, Hook: s.NFTHook, Priority: s.NFTPriority, Table: s.NFTTable, SetOnly: s.SetOnly}
	case "cloudflare":
		out, err := ParseCloudflareOutput(s.CloudflareOutput)
		if err != nil {
			return o, &SettingError{"cloudflare-output", strconv.Quote(s.CloudflareOutput), "use ruleset, list or expression"}
		}
		o.Cloudflare = CloudflareOptions{Output: out, ListName: s.CloudflareList, Matches: s.CloudflareMatches}
	case "crowdsec":
		ttl, err := checkedTTL(s.TTL)
		if err != nil {
			return o, err
		}
		o.CrowdSec = CrowdSecOptions{TTL: ttl}
	case "modsecurity":
		if s.ModSecIDBase < 1 || s.ModSecIDBase > ModSecMaxID-1000 {
			return o, &SettingError{"modsec-id-base", strconv.Itoa(s.ModSecIDBase),
				fmt.Sprintf("give a rule ID from 1 to %d (1-99999 is the range for local rules)", ModSecMaxID-1000)}
		}
		o.ModSec = ModSecOptions{IDBase: s.ModSecIDBase}
	}
	return o, t.Check(o)
}
