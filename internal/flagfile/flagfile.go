// Package flagfile applies a YAML file of flag values to a command's
// flags: the keys are flag names, a list sets a repeatable flag once per
// element, and flags given on the command line win over the file. A key
// that names no flag of the program is an error, as a typo would
// otherwise be ignored. Every error is one line that names the file and
// the line.
package flagfile

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"
)

// annotation marks a flag whose value came from a file.
const annotation = "flagfile"

// Apply sets every flag of fs that was not set on the command line from
// the YAML document data, read from the file path. known holds the flag
// names of every command of the program: a key that is one of them but
// not a flag of fs is left alone (a shared file serves every command); a
// key that is none of them is an error. A flag set from the file is not
// marked Changed (Given tells it apart), so that checks of what the
// command line gave still hold.
func Apply(fs *pflag.FlagSet, known map[string]bool, path string, data []byte) error {
	fail := func(line int, format string, a ...any) error {
		return fmt.Errorf("config file %s: line %d: %s", path, line, fmt.Sprintf(format, a...))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("config file %s: %s", path, yamlErrorText(err))
	}
	if len(doc.Content) == 0 {
		return nil // empty, or only comments
	}
	root := yamlResolve(doc.Content[0])
	switch root.Kind {
	case yaml.MappingNode:
	case yaml.ScalarNode:
		if root.Tag == "!!null" {
			return nil
		}
		return fail(root.Line, "want keys and values, such as log-format: combined, not a value")
	default:
		return fail(root.Line, "want keys and values, such as log-format: combined, not %s", yamlKindName(root))
	}
	firstLine := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		kn, vn := yamlResolve(root.Content[i]), yamlResolve(root.Content[i+1])
		if kn.Kind != yaml.ScalarNode {
			return fail(kn.Line, "a key must be a flag name, not %s", yamlKindName(kn))
		}
		// opted_out is opted-out: YAML's usual spelling of a flag name.
		k := strings.ReplaceAll(kn.Value, "_", "-")
		if prev, ok := firstLine[k]; ok {
			return fail(kn.Line, "key %q given twice (first on line %d); give a list for a flag that takes several values", k, prev)
		}
		firstLine[k] = kn.Line
		if !known[k] {
			return fail(kn.Line, "unknown key %q (keys are flag names, such as log-format)", k)
		}
		fl := fs.Lookup(k)
		if fl == nil || fl.Changed || k == "config" {
			continue
		}
		values, err := configValues(vn)
		if err != nil {
			return fail(vn.Line, "key %q: %v", k, err)
		}
		repeatable := strings.HasSuffix(fl.Value.Type(), "Array") || strings.HasSuffix(fl.Value.Type(), "Slice")
		if vn.Kind == yaml.SequenceNode && !repeatable {
			return fail(vn.Line, "key %q: takes one value, not a list", k)
		}
		for _, v := range values {
			if err := fl.Value.Set(v.value); err != nil {
				return fail(v.line, "key %q: invalid argument %q: %v", k, v.value, configSetError(err))
			}
		}
		// Not Changed: that means "on the command line" to checks such
		// as emit's per-target flags, which a shared config must pass.
		if fl.Annotations == nil {
			fl.Annotations = map[string][]string{}
		}
		fl.Annotations[annotation] = []string{path}
	}
	return nil
}

// Given reports whether the flag name of fs was given, on the command
// line or in a file.
func Given(fs *pflag.FlagSet, name string) bool {
	fl := fs.Lookup(name)
	return fl != nil && (fl.Changed || len(fl.Annotations[annotation]) > 0)
}

// configValue is one value of a config key, with its line.
type configValue struct {
	value string
	line  int
}

// configValues returns the values of a config key's node: a scalar is
// one value (null none), a list one per element.
func configValues(n *yaml.Node) ([]configValue, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil, nil
		}
		return []configValue{{n.Value, n.Line}}, nil
	case yaml.SequenceNode:
		out := make([]configValue, 0, len(n.Content))
		for _, e := range n.Content {
			e = yamlResolve(e)
			if e.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("want a value or a list of values, not a list of %s", yamlKindPlural(e))
			}
			if e.Tag != "!!null" {
				out = append(out, configValue{e.Value, e.Line})
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a value or a list of values, not %s", yamlKindName(n))
}

// configSetError is a flag's parse error without the parser's prefix.
func configSetError(err error) string {
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		return ne.Err.Error()
	}
	return err.Error()
}

// yamlResolve follows an alias (*name) to the node it names.
func yamlResolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func yamlKindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "keys and values"
	}
	return "a value"
}

func yamlKindPlural(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "lists"
	case yaml.MappingNode:
		return "keys and values"
	}
	return "values"
}

// yamlErrorText turns a YAML parse error into one line: "line N: what",
// with every problem of a multi-line error joined by "; ".
func yamlErrorText(err error) string {
	var te *yaml.TypeError
	var parts []string
	if errors.As(err, &te) {
		parts = te.Errors
	} else {
		parts = strings.Split(err.Error(), "\n")
	}
	for i, p := range parts {
		parts[i] = strings.TrimPrefix(strings.TrimSpace(p), "yaml: ")
	}
	return strings.Join(parts, "; ")
}
