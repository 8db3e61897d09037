package crawler

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// MaxFileSize is the largest profile file read.
const MaxFileSize = 64 << 10

// FileError is a profile file that does not validate: the file, the line
// (0 when unknown) and the problem.
type FileError struct {
	File string
	Line int
	Err  error
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("crawler profile %s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("crawler profile %s: %v", e.File, e.Err)
}

func (e *FileError) Unwrap() error { return ErrInvalid }

// LoadFile reads and parses the profile file at path.
func LoadFile(path string) (*Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, &FileError{File: path, Err: fmt.Errorf("larger than %d KiB: is it a profile?", MaxFileSize>>10)}
	}
	return ParseFile(data, path)
}

// ParseFile parses a YAML profile (SPEC §10) read from the file name; the
// name is used in errors only. Unknown keys, wrong types and values that
// do not validate are a *FileError with the line they are on.
func ParseFile(data []byte, name string) (*Profile, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &FileError{File: name, Line: yamlErrorLine(err), Err: errors.New(yamlErrorText(err))}
	}
	if len(doc.Content) == 0 {
		return nil, &FileError{File: name, Err: errors.New("empty file: give at least name, tokens and fcrdns or ip_lists")}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &FileError{File: name, Line: root.Line, Err: errors.New("a profile is a mapping of keys (name, tokens, fcrdns, …)")}
	}
	p := &Profile{Source: name}
	// lines holds the line of each field's value, for validation errors.
	lines := map[string]int{"name": root.Line}
	fail := func(n *yaml.Node, format string, a ...any) error {
		return &FileError{File: name, Line: n.Line, Err: fmt.Errorf(format, a...)}
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		key := k.Value
		if seen[key] {
			return nil, fail(k, "%s is given twice", key)
		}
		seen[key] = true
		lines[key] = v.Line
		var err error
		switch key {
		case "name":
			p.Name, err = scalarString(v)
		case "category":
			p.Category, err = scalarString(v)
		case "contact":
			p.Contact, err = scalarString(v)
		case "tokens":
			p.Tokens, err = stringList(v)
		case "robots_token":
			p.RobotsToken, err = scalarString(v)
		case "fcrdns":
			p.FCrDNS, err = stringList(v)
			itemLines(lines, key, v)
		case "ip_lists":
			p.IPLists, err = stringList(v)
		case "builtin_ips":
			var list []string
			list, err = stringList(v)
			for j, s := range list {
				q, perr := ParsePrefix(s)
				if perr != nil {
					at := v
					if v.Kind == yaml.SequenceNode {
						at = v.Content[j]
					}
					return nil, fail(at, "builtin_ips: %q is neither an address nor a CIDR such as 192.0.2.0/28", clip(s))
				}
				p.BuiltinIPs = append(p.BuiltinIPs, q)
			}
		case "ipv6":
			p.IPv6, err = scalarBool(v)
		case "conduct":
			if err := parseConduct(v, &p.Conduct, lines, fail); err != nil {
				return nil, err
			}
			continue
		default:
			return nil, fail(k, "unknown key %q: a profile has name, category, contact, tokens, robots_token, fcrdns, ip_lists, builtin_ips, ipv6 and conduct", clip(key))
		}
		if err != nil {
			return nil, fail(v, "%s: %v", key, err)
		}
	}
	if err := p.validate(); err != nil {
		line := root.Line
		var fe *fieldError
		if errors.As(err, &fe) {
			// The field's own line, else its parent's (conduct.budget for
			// conduct.budget.pages).
			for f := fe.field; f != ""; {
				if l, ok := lines[f]; ok {
					line = l
					break
				}
				i := strings.LastIndexByte(f, '.')
				if i < 0 {
					break
				}
				f = f[:i]
			}
		}
		return nil, &FileError{File: name, Line: line, Err: err}
	}
	return p, nil
}

func parseConduct(n *yaml.Node, c *Conduct, lines map[string]int, fail func(*yaml.Node, string, ...any) error) error {
	if n.Kind != yaml.MappingNode {
		return fail(n, "conduct: a mapping of promises (robots, budget, min_pause, backoff, no_auth_bypass)")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			return fail(k, "conduct.%s is given twice", k.Value)
		}
		seen[k.Value] = true
		lines["conduct."+k.Value] = v.Line
		var err error
		switch k.Value {
		case "robots":
			if v.Kind == yaml.ScalarNode && v.Value == "not-promised" {
				c.RobotsNotPromised = true
				continue
			}
			if c.Robots, err = scalarBool(v); err != nil {
				err = errors.New("want true, false or not-promised (its operator says it may ignore robots.txt)")
			}
		case "no_auth_bypass":
			c.NoAuthBypass, err = scalarBool(v)
		case "min_pause":
			c.MinPause, err = scalarDuration(v)
		case "budget":
			b := &Budget{}
			if v.Kind != yaml.MappingNode {
				return fail(v, "conduct.budget: a mapping such as {pages: 20, window: 24h}")
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				bk, bv := v.Content[j], v.Content[j+1]
				lines["conduct.budget."+bk.Value] = bv.Line
				switch bk.Value {
				case "pages":
					b.Pages, err = scalarInt(bv)
				case "window":
					b.Window, err = scalarDuration(bv)
				default:
					return fail(bk, "unknown key conduct.budget.%s: a budget has pages and window", clip(bk.Value))
				}
				if err != nil {
					return fail(bv, "conduct.budget.%s: %v", bk.Value, err)
				}
			}
			if b.Pages == 0 || b.Window == 0 {
				return fail(v, "conduct.budget: give both pages and window, such as {pages: 20, window: 24h}")
			}
			c.Budget = b
			continue
		case "backoff":
			b := &Backoff{}
			if v.Kind != yaml.MappingNode {
				return fail(v, "conduct.backoff: a mapping such as {min: 30s}")
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				bk, bv := v.Content[j], v.Content[j+1]
				lines["conduct.backoff."+bk.Value] = bv.Line
				if bk.Value != "min" {
					return fail(bk, "unknown key conduct.backoff.%s: a backoff has min", clip(bk.Value))
				}
				if b.Min, err = scalarDuration(bv); err != nil {
					return fail(bv, "conduct.backoff.min: %v", err)
				}
			}
			c.Backoff = b
			continue
		default:
			return fail(k, "unknown key conduct.%s: conduct has robots, budget, min_pause, backoff and no_auth_bypass", clip(k.Value))
		}
		if err != nil {
			return fail(v, "conduct.%s: %v", k.Value, err)
		}
	}
	return nil
}

// itemLines records the line of each item of a list field, as
// "key.INDEX", so that an error about one item names its line.
func itemLines(lines map[string]int, key string, v *yaml.Node) {
	if v.Kind == yaml.SequenceNode {
		for i, c := range v.Content {
			lines[key+"."+strconv.Itoa(i)] = c.Line
		}
	}
}

func scalarString(n *yaml.Node) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", errors.New("want a string")
	}
	return n.Value, nil
}

func stringList(n *yaml.Node) ([]string, error) {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return []string{n.Value}, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, errors.New("want a list such as [a, b]")
	}
	out := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode || c.Tag == "!!null" {
			return nil, fmt.Errorf("item on line %d is not a string", c.Line)
		}
		out = append(out, c.Value)
	}
	return out, nil
}

func scalarBool(n *yaml.Node) (bool, error) {
	if n.Kind == yaml.ScalarNode {
		switch n.Value {
		case "true", "True", "TRUE", "yes", "on":
			return true, nil
		case "false", "False", "FALSE", "no", "off":
			return false, nil
		}
	}
	return false, errors.New("want true or false")
}

func scalarInt(n *yaml.Node) (int, error) {
	if n.Kind == yaml.ScalarNode {
		if v, err := strconv.Atoi(n.Value); err == nil {
			return v, nil
		}
	}
	return 0, errors.New("want a whole number")
}

func scalarDuration(n *yaml.Node) (time.Duration, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, errors.New("want a duration such as 30s, 24h or 7d")
	}
	d, err := ParseDuration(n.Value)
	if err != nil {
		return 0, err
	}
	return d, nil
}

// ParseDuration parses a Go duration ("1s", "24h", "1h30m") or a number of
// days ("7d", "1d12h").
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	bad := fmt.Errorf("%q: want a duration such as 30s, 24h or 7d", clip(s))
	if s == "" {
		return 0, bad
	}
	var days int64
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.ParseInt(s[:i], 10, 32)
		if err != nil || n < 0 || n > 3650 {
			return 0, bad
		}
		days, s = n, s[i+1:]
	}
	var rest time.Duration
	if s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, bad
		}
		rest = d
	} else if days == 0 {
		return 0, bad
	}
	if days > 0 && rest < 0 {
		return 0, bad
	}
	return time.Duration(days)*24*time.Hour + rest, nil
}

// yamlErrorLine digs the line number out of a yaml.v3 error ("yaml: line
// 3: …"), or 0.
func yamlErrorLine(err error) int {
	msg := err.Error()
	const p = "line "
	i := strings.Index(msg, p)
	if i < 0 {
		return 0
	}
	j := i + len(p)
	k := j
	for k < len(msg) && msg[k] >= '0' && msg[k] <= '9' {
		k++
	}
	n, _ := strconv.Atoi(msg[j:k])
	return n
}

// yamlErrorText is a yaml.v3 error without its "yaml: line N: " prefix.
func yamlErrorText(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if strings.HasPrefix(msg, "line ") {
		if i := strings.Index(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
	}
	return msg
}
