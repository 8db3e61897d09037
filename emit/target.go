package emit

import (
	"errors"
	"io"
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
