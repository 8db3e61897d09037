package render

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"strings"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/parse"
	"gopkg.in/yaml.v3"
)

// writeYAML prints v as YAML with the same field names as the JSON; a
// *audit.Report is streamed. A string that is not valid UTF-8 (a
// User-Agent logged as \xff\xfe) is written with each bad byte as U+FFFD,
// as the JSON has it, not as !!binary: a string field keeps its type. To
// a terminal (tty), a string holding a rune a terminal could act on is
// written double-quoted, with that rune escaped.
func writeYAML(w io.Writer, v any, tty bool) error {
	if r, ok := v.(*audit.Report); ok {
		return writeReportYAML(w, r, tty)
	}
	n, err := yamlNode(v)
	if err != nil {
		return err
	}
	b, err := yamlText(n, tty)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// yamlNode returns v as a YAML node, as yaml.Node.Encode does, but by way
// of text indented by two spaces: Encode indents by four, and yaml.v3
// cannot read back its own four-space text for a string that starts with
// a space and holds a line break inside a list.
func yamlNode(v any) (*yaml.Node, error) {
	var buf bytes.Buffer
	if err := encodeYAML(&buf, v); err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(buf.Bytes(), &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, fmt.Errorf("yaml: %T did not encode as one document", v)
	}
	return doc.Content[0], nil
}

// encodeYAML writes v as yaml.v3 does with a two-space indent.
func encodeYAML(w io.Writer, v any) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return enc.Close()
}

// yamlText encodes a node as the reports' YAML (two-space indent), with
// the fixes writeYAML describes.
func yamlText(n *yaml.Node, tty bool) ([]byte, error) {
	yamlValidUTF8(n)
	if tty {
		yamlTerminalStyle(n)
	}
	var buf bytes.Buffer
	if err := encodeYAML(&buf, n); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	if tty {
		b = yamlTerminalEscape(b)
	}
	return b, nil
}

// writeReportYAML streams a report as writeYAML would print it: the
// report without its long lists in one go, then each element of them
// encoded where it stands (under its key, as the only element, with the
// key's line dropped), so that each is written as in the whole document.
func writeReportYAML(w io.Writer, r *audit.Report, tty bool) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	head, lists := reportLists(r)
	n, err := yamlNode(&head)
	if err != nil {
		return err
	}
	text, err := yamlText(n, tty)
	if err != nil {
		return err
	}
	pos := 0 // text before pos is written
	for _, l := range lists {
		if l.n == 0 {
			continue
		}
		marker := []byte("\n" + l.key + ": []\n")
		from := max(pos-1, 0) // the newline before pos may start the marker
		at := bytes.Index(text[from:], marker)
		if at < 0 {
			return fmt.Errorf("%w: %s", errSplice, l.key)
		}
		at += from
		bw.Write(text[pos : at+1])
		bw.WriteString(l.key + ":\n")
		var encErr error
		var direct bytes.Buffer
		l.each(func(v any) bool {
			// Most elements are plain ASCII and need no fixing: yaml.v3's
			// own text for the element under its key is then what the
			// way through a node gives, three times faster.
			if !tty {
				direct.Reset()
				if encErr = encodeYAML(&direct, map[string]any{l.key: []any{v}}); encErr != nil {
					return false
				}
				if b := direct.Bytes(); plainASCII(b) && !bytes.Contains(b, []byte("!!binary")) {
					bw.Write(b[len(l.key)+2:])
					return true
				}
			}
			var item *yaml.Node
			if item, encErr = yamlNode(v); encErr != nil {
				return false
			}
			doc := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
				{Kind: yaml.ScalarNode, Tag: "!!str", Value: l.key},
				{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{item}},
			}}
			var b []byte
			if b, encErr = yamlText(doc, tty); encErr != nil {
				return false
			}
			bw.Write(b[len(l.key)+2:]) // after "KEY:\n"
			return true
		})
		if encErr != nil {
			return encErr
		}
		pos = at + len(marker)
	}
	bw.Write(text[pos:])
	return bw.Flush()
}

// plainASCII reports whether b holds only printable ASCII and line ends.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 || c > 0x7e) && c != '\n' {
			return false
		}
	}
	return true
}

// yamlValidUTF8 turns the !!binary scalars that yaml.v3 makes of invalid
// UTF-8 strings back into strings, each bad byte replaced by U+FFFD.
// Nothing in the reports is binary data.
func yamlValidUTF8(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!binary" {
		if b, err := base64.StdEncoding.DecodeString(n.Value); err == nil {
			n.Value = string([]rune(string(b)))
			n.Tag, n.Style = "!!str", 0
		}
	}
	for _, c := range n.Content {
		yamlValidUTF8(c)
	}
}

// yamlTerminalStyle makes every scalar that holds a rune a terminal could
// act on double-quoted: yaml.v3 then escapes the controls and line
// separators, and yamlTerminalEscape the rest.
func yamlTerminalStyle(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && strings.ContainsFunc(n.Value, func(r rune) bool { return r < 0x20 || parse.IsTerminalUnsafe(r) }) {
		n.Style = yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		yamlTerminalStyle(c)
	}
}

// yamlTerminalEscape escapes, as \uXXXX (\UXXXXXXXX beyond U+FFFF), the
// runes a terminal could act on that yaml.v3 writes as they are inside
// double quotes (the bidi and other invisible format characters).
// yamlTerminalStyle has put every scalar holding one in double quotes,
// where the escape means the same.
func yamlTerminalEscape(b []byte) []byte {
	return terminalEscape(b, func(out []byte, r rune) []byte {
		if r > 0xffff {
			return fmt.Appendf(out, `\U%08x`, r)
		}
		return fmt.Appendf(out, `\u%04x`, r)
	})
}
