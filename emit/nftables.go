package emit

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/ipfmt"
)

// Defaults and limits of the nftables output.
const (
	// DefaultTTL is how long a set element lives unless the file is loaded
	// again: each load starts every element's timeout anew.
	DefaultTTL = 7 * 24 * time.Hour
	// MaxTTL is the longest --ttl accepted.
	MaxTTL = 365 * 24 * time.Hour
	// DefaultNFTTable is the table the rules live in.
	DefaultNFTTable = "inet lohibot"
	// DefaultNFTHook is the hook of the rules' chain.
	DefaultNFTHook = "input"
	// DefaultNFTPriority is the chain's priority: just ahead of the usual
	// filter chains.
	DefaultNFTPriority = "filter - 10"
)

// NFTOptions shape the nftables output. The zero value gives the defaults.
type NFTOptions struct {
	// TTL is every element's timeout; zero means DefaultTTL. It must be a
	// whole number of seconds between 1s and MaxTTL.
	TTL time.Duration
	// Hook is the chain's hook: input (the zero value), prerouting or
	// forward.
	Hook string
	// Priority is the chain's priority: a signed integer, or raw, mangle,
	// filter or security with an optional "+ N" or "- N". The zero value is
	// DefaultNFTPriority.
	Priority string
	// Table is "FAMILY NAME" or "NAME" (family inet); the zero value is
	// DefaultNFTTable. Without SetOnly the family must be inet, as the chain
	// matches both IPv4 and IPv6.
	Table string
	// SetOnly writes only the sets, for people who keep their own chains:
	// the file creates the table and sets when missing and replaces the
	// sets' elements, leaving everything else in the table alone.
	SetOnly bool
}

// nftIdent is what this package accepts as an nftables table name.
var nftIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// nftPriority is the accepted --nft-priority syntax.
var nftPriority = regexp.MustCompile(`^(?:([+-]?[0-9]{1,6})|(raw|mangle|filter|security)(?:\s*([+-])\s*([0-9]{1,6}))?)$`)

// NFTConfig is NFTOptions checked, with their defaults filled in: the
// table, sets and chain that both the file of NFTables and the live sets
// of package nftset are made with.
type NFTConfig struct {
	// TTL is how long an element lives, and TTLText the same as nft
	// writes it ("7d", "1h30m").
	TTL     time.Duration
	TTLText string
	// Family (inet, ip or ip6) and Table name the table.
	Family, Table string
	// SetOnly: the sets alone, no chain; then Hook and Priority are not
	// used.
	SetOnly bool
	// Hook is the chain's hook (input, prerouting or forward) and
	// Priority its priority as nft prints it ("filter - 10").
	Hook, Priority string
}

// TableRef is the table as nft names it: "inet lohibot".
func (c NFTConfig) TableRef() string { return c.Family + " " + c.Table }

// Config checks o and fills in its defaults. An option that is not valid
// is an error wrapping ErrBadOption, naming it.
func (o NFTOptions) Config() (NFTConfig, error) {
	c := NFTConfig{SetOnly: o.SetOnly, TTL: o.TTL}
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	s, err := FormatNFTDuration(c.TTL)
	if err != nil {
		return c, err
	}
	c.TTLText = s

	table := strings.TrimSpace(o.Table)
	if table == "" {
		table = DefaultNFTTable
	}
	f := strings.Fields(table)
	switch len(f) {
	case 1:
		c.Family, c.Table = "inet", f[0]
	case 2:
		c.Family, c.Table = f[0], f[1]
	default:
		return c, fmt.Errorf("%w: nftables table %q: want FAMILY NAME, such as \"inet lohibot\"", ErrBadOption, o.Table)
	}
	switch c.Family {
	case "inet", "ip", "ip6":
	default:
		return c, fmt.Errorf("%w: nftables table family %q: use inet, ip or ip6", ErrBadOption, c.Family)
	}
	if !nftIdent.MatchString(c.Table) {
		return c, fmt.Errorf("%w: nftables table name %q: use letters, digits and _", ErrBadOption, c.Table)
	}
	if !c.SetOnly && c.Family != "inet" {
		return c, fmt.Errorf("%w: nftables table %q: the chain needs family inet (or use --set-only)", ErrBadOption, table)
	}

	c.Hook = o.Hook
	switch c.Hook {
	case "":
		c.Hook = DefaultNFTHook
	case "input", "prerouting", "forward":
	default:
		return c, fmt.Errorf("%w: nftables hook %q: use input, prerouting or forward", ErrBadOption, o.Hook)
	}

	c.Priority, err = ParseNFTPriority(o.Priority)
	return c, err
}

// ParseNFTPriority checks a chain priority and returns it in the form nft
// prints: "-10", "filter", "filter - 10". The empty string is
// DefaultNFTPriority.
func ParseNFTPriority(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultNFTPriority, nil
	}
	m := nftPriority.FindStringSubmatch(s)
	if m == nil {
		return "", fmt.Errorf("%w: nftables priority %q: use a number such as -10, or raw, mangle, filter or security with an optional + N or - N", ErrBadOption, s)
	}
	if m[1] != "" {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return "", fmt.Errorf("%w: nftables priority %q: %v", ErrBadOption, s, err)
		}
		return strconv.Itoa(n), nil
	}
	if m[3] == "" {
		return m[2], nil
	}
	n, err := strconv.Atoi(m[4])
	if err != nil {
		return "", fmt.Errorf("%w: nftables priority %q: %v", ErrBadOption, s, err)
	}
	if n == 0 {
		return m[2], nil
	}
	return fmt.Sprintf("%s %s %d", m[2], m[3], n), nil
}

// ParseTTL parses a --ttl value: a Go duration ("36h", "90m"), a number of
// days ("7d"), or days followed by a Go duration ("1d12h"). The result is
// not range-checked; FormatNFTDuration does that.
func ParseTTL(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	orig := s
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.ParseUint(s[:i], 10, 16)
		if err != nil {
			return 0, fmt.Errorf("%w: ttl %q: days must be a whole number, such as 7d", ErrBadOption, orig)
		}
		days = time.Duration(n) * 24 * time.Hour
		s = s[i+1:]
		if s == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%w: ttl %q: use a duration such as 7d, 36h or 90m", ErrBadOption, orig)
	}
	if days > 0 && d > MaxTTL {
		return 0, fmt.Errorf("%w: ttl %q is too long", ErrBadOption, orig)
	}
	return days + d, nil
}

// FormatNFTDuration prints d as nftables writes timeouts ("7d", "1d12h",
// "1h30m5s"). d must be a whole number of seconds from 1s to MaxTTL.
func FormatNFTDuration(d time.Duration) (string, error) {
	if d < time.Second || d > MaxTTL || d%time.Second != 0 {
		return "", fmt.Errorf("%w: ttl %s: use whole seconds from 1s to %dd", ErrBadOption, d, MaxTTL/(24*time.Hour))
	}
	var b strings.Builder
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if n := d / u.unit; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			d -= n * u.unit
		}
	}
	return b.String(), nil
}

// nftSetNames returns the names of the IPv4 and IPv6 sets for a mode.
func nftSetNames(m Mode) (v4, v6 string) {
	if m == BlockSpoofed {
		return "spoofed_v4", "spoofed_v6"
	}
	return "crawler_v4", "crawler_v6"
}

// NFTables writes an nftables file for nft -f and returns the Plan it
// wrote. Without SetOnly the file replaces the whole table atomically each
// time it is loaded ("add table" then "delete table" then the definition:
// nft -f runs it as one transaction), so it can be loaded any number of
// times and every element's timeout starts again at each load. With SetOnly
// it creates the table and sets when missing, then flushes the sets and
// adds the elements, so chains that refer to the sets keep working.
//
// In BlockSpoofed and BlockBot modes the chain drops the Plan's Block set;
// in AllowBot mode it accepts the Plan's Allow set. An accept in this table
// ends only this chain: nftables still runs the base chains of other
// tables, so to let the crawler past drop rules elsewhere, use SetOnly and
// refer to the set from those chains.
func NFTables(w io.Writer, in Input, o NFTOptions) (*Plan, error) {
	c, err := o.Config()
	if err != nil {
		return nil, err
	}
	p, err := NewPlan(in)
	if err != nil {
		return nil, err
	}
	set := p.crawlerSet()
	v4, v6 := split4and6(set)
	name4, name6 := nftSetNames(p.Mode)
	verdict, what := "drop", ""
	whose := p.whose()
	switch p.Mode {
	case BlockSpoofed:
		what = fmt.Sprintf("drops all traffic from %s seen claiming to be %s without being it", plural(len(set), "address", "addresses"), p.who("or"))
	case BlockBot:
		what = fmt.Sprintf("drops all traffic from the %s %s", whose, plural(len(set), "address", "addresses"))
	case AllowBot:
		verdict = "accept"
		what = fmt.Sprintf("accepts the %s %s", whose, plural(len(set), "address", "addresses"))
	}

	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "#!/usr/sbin/nft -f")
	lines := []string{
		fmt.Sprintf("lohibot-audit %s: nftables rules, mode %s.", in.versionString(), p.Mode),
		"This file " + what + ".",
		"Inputs: " + in.sourcesString(0) + "; IP list: " + in.ipListString() + ".",
		in.generatedString(),
		fmt.Sprintf("Elements time out after %s unless the file is loaded again; each load starts them anew.", c.TTLText),
	}
	tableRef := c.TableRef()
	if c.SetOnly {
		lines = append(lines,
			fmt.Sprintf("Sets only: refer to @%s and @%s from your own chains in table %s.", name4, name6, tableRef),
			"Loading creates the table and sets when missing and replaces the sets' elements.")
	} else {
		lines = append(lines, "Loading replaces table "+tableRef+" whole, in one transaction: edit the generator, not this file.")
		if p.Mode == AllowBot {
			lines = append(lines,
				"An accept here ends only this chain; base chains of other tables still run.",
				"To let the crawler past drop rules elsewhere, emit with --set-only into that table and refer to the sets there.")
		}
	}
	bw.WriteString(hashComment(lines...))
	bw.WriteString("\n")

	setBody := func(indent, name, typ string) {
		fmt.Fprintf(bw, "%sset %s {\n", indent, name)
		fmt.Fprintf(bw, "%s\ttype %s\n", indent, typ)
		fmt.Fprintf(bw, "%s\tflags interval,timeout\n", indent)
		fmt.Fprintf(bw, "%s\tauto-merge\n", indent)
		fmt.Fprintf(bw, "%s\ttimeout %s\n", indent, c.TTLText)
	}
	elements := func(indent string, ps []netip.Prefix) {
		for i, q := range ps {
			sep := ","
			if i == len(ps)-1 {
				sep = ""
			}
			fmt.Fprintf(bw, "%s%s timeout %s%s\n", indent, ipfmt.Prefix(q), c.TTLText, sep)
		}
	}

	if c.SetOnly {
		fmt.Fprintf(bw, "add table %s\n", tableRef)
		for _, s := range []struct{ name, typ string }{{name4, "ipv4_addr"}, {name6, "ipv6_addr"}} {
			fmt.Fprintf(bw, "add set %s %s { type %s; flags interval,timeout; auto-merge; timeout %s; }\n", tableRef, s.name, s.typ, c.TTLText)
		}
		fmt.Fprintf(bw, "flush set %s %s\n", tableRef, name4)
		fmt.Fprintf(bw, "flush set %s %s\n", tableRef, name6)
		for _, s := range []struct {
			name string
			ps   []netip.Prefix
		}{{name4, v4}, {name6, v6}} {
			if len(s.ps) == 0 {
				continue
			}
			fmt.Fprintf(bw, "add element %s %s {\n", tableRef, s.name)
			elements("\t", s.ps)
			fmt.Fprintln(bw, "}")
		}
		return p, bw.Flush()
	}

	fmt.Fprintf(bw, "add table %s\n", tableRef)
	fmt.Fprintf(bw, "delete table %s\n\n", tableRef)
	fmt.Fprintf(bw, "table %s {\n", tableRef)
	for i, s := range []struct {
		name, typ string
		ps        []netip.Prefix
	}{{name4, "ipv4_addr", v4}, {name6, "ipv6_addr", v6}} {
		if i > 0 {
			fmt.Fprintln(bw)
		}
		setBody("\t", s.name, s.typ)
		if len(s.ps) > 0 {
			fmt.Fprintln(bw, "\t\telements = {")
			elements("\t\t\t", s.ps)
			fmt.Fprintln(bw, "\t\t}")
		}
		fmt.Fprintln(bw, "\t}")
	}
	fmt.Fprintln(bw)
	fmt.Fprintf(bw, "\tchain %s {\n", c.Hook)
	fmt.Fprintf(bw, "\t\ttype filter hook %s priority %s; policy accept;\n", c.Hook, c.Priority)
	fmt.Fprintf(bw, "\t\tip saddr @%s counter %s\n", name4, verdict)
	fmt.Fprintf(bw, "\t\tip6 saddr @%s counter %s\n", name6, verdict)
	fmt.Fprintln(bw, "\t}")
	fmt.Fprintln(bw, "}")
	return p, bw.Flush()
}
