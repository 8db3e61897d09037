package cmd

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"io"
	"iter"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"gopkg.in/yaml.v3"
)

// terminal marks standard output when it is a terminal: JSON and YAML
// written to it have the runes a terminal could act on escaped (JSON to a
// pipe or a file stays exactly as encoding/json writes it).
type terminal struct{ io.Writer }

// stdout returns env.Stdout, marked when it is a terminal.
func stdout(env *Env) io.Writer {
	if env.StdoutTTY {
		return terminal{env.Stdout}
	}
	return env.Stdout
}

// toTerminal reports whether w is (or wraps) standard output on a
// terminal.
func toTerminal(w io.Writer) bool {
	for {
		switch x := w.(type) {
		case terminal:
			return true
		case *stickyWriter:
			w = x.w
		default:
			return false
		}
	}
}

// writeYAML prints v as YAML with the same field names as the JSON; a
// *audit.Report is streamed. A string that is not valid UTF-8 (a
// User-Agent logged as \xff\xfe) is written with each bad byte as U+FFFD,
// as the JSON has it, not as !!binary: a string field keeps its type. To
// a terminal, a string holding a rune a terminal could act on is written
// double-quoted, with that rune escaped.
func writeYAML(w io.Writer, v any) error {
	if r, ok := v.(*audit.Report); ok {
		return writeReportYAML(w, r)
	}
	n, err := yamlNode(v)
	if err != nil {
		return err
	}
	b, err := yamlText(n, toTerminal(w))
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
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
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

// yamlText encodes a node as the reports' YAML (two-space indent), with
// the fixes writeYAML describes.
func yamlText(n *yaml.Node, tty bool) ([]byte, error) {
	yamlValidUTF8(n)
	if tty {
		yamlTerminalStyle(n)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
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
func writeReportYAML(w io.Writer, r *audit.Report) error {
	tty := toTerminal(w)
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
				enc := yaml.NewEncoder(&direct)
				enc.SetIndent(2)
				encErr = enc.Encode(map[string]any{l.key: []any{v}})
				if encErr == nil {
					encErr = enc.Close()
				}
				if encErr != nil {
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

// yamlTerminalEscape escapes, as \uXXXX, the runes a terminal could act on
// that yaml.v3 writes as they are inside double quotes (the bidi
// controls). yamlTerminalStyle has put every scalar holding one in double
// quotes, where the escape means the same.
func yamlTerminalEscape(b []byte) []byte { return jsonTerminalEscape(b) }

// stickyWriter remembers the first write error, so that text printed in
// many small writes (tables, lines) can be checked once at the end.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	s.err = err
	return n, err
}

// writeReport prints a logs report in the chosen format. Give it
// stdout(env), so that it knows whether it writes to a terminal.
func writeReport(w io.Writer, r *audit.Report, format string) error {
	switch format {
	case "json":
		return writeJSON(w, r)
	case "yaml":
		return writeYAML(w, r)
	case "csv":
		return writeIPsCSVSeq(w, r.AllIPs())
	}
	sw := &stickyWriter{w: w}
	if err := writeReportText(sw, r, format == "markdown"); err != nil {
		return err
	}
	return sw.err
}

// csvHeader is the header of the csv output: one row per address.
var csvHeader = []string{"ip", "verdict", "method", "reason", "in_ip_list", "hits", "first_seen", "last_seen", "ptr", "forward", "user_agents", "warnings"}

// writeIPsCSV prints one row per address. Cells that a spreadsheet would
// take for a formula are prefixed with a quote: user agents and PTR names
// are written by strangers.
func writeIPsCSV(w io.Writer, ips []audit.IPReport) error {
	return writeIPsCSVSeq(w, slices.Values(ips))
}

// writeIPsCSVSeq is writeIPsCSV for addresses made one at a time.
func writeIPsCSVSeq(w io.Writer, ips iter.Seq[audit.IPReport]) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for ip := range ips {
		row := []string{
			ip.IP, string(ip.Verdict), ip.Method, ip.Reason,
			strconv.FormatBool(ip.InIPList), strconv.FormatInt(ip.Hits, 10),
			csvTime(ip.FirstSeen), csvTime(ip.LastSeen),
			strings.Join(ip.PTR, " "), strings.Join(ip.Forward, " "),
			strings.Join(ip.UserAgents, " | "), strings.Join(ip.Warnings, " "),
		}
		for i := range row {
			row[i] = csvCell(row[i])
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func csvCell(s string) string {
	s = sanitize(s)
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// cell makes text from logs safe and short enough for a table cell.
func cell(s string, max int) string {
	s = sanitize(s)
	if max > 0 && len(s) > max {
		cut := max
		for cut > 0 && s[cut]&0xc0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// mdEscaper backslash-escapes the characters that Markdown (GitHub's
// included) would read as markup: emphasis, code, links and images, HTML,
// headings and table cells.
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `[`, `\[`, `]`, `\]`,
	`<`, `\<`, `>`, `\>`, `#`, `\#`, `!`, `\!`, `|`, `\|`,
)

// mdText makes text from strangers (a log, DNS, a robots.txt) safe for
// Markdown: control characters escaped as sanitize does, so it stays on
// one line, then markup characters escaped.
func mdText(s string) string { return mdEscaper.Replace(sanitize(s)) }

// textCell is cell, escaped for Markdown too when md is set.
func textCell(s string, max int, md bool) string {
	s = cell(s, max)
	if md {
		s = mdEscaper.Replace(s)
	}
	return s
}

// textLine is sanitize, escaped for Markdown too when md is set.
func textLine(s string, md bool) string {
	if md {
		return mdText(s)
	}
	return sanitize(s)
}

// whyText is a verdict's method and reason for people, with its warnings:
// "fcrdns: ptr-mismatch", "ip-list (fcrdns-failed)".
func whyText(method, reason string, warnings []string) string {
	why := method
	if reason != "" {
		why = strings.TrimPrefix(why+": "+reason, ": ")
	}
	if len(warnings) > 0 {
		why += " (" + strings.Join(warnings, ", ") + ")"
	}
	return why
}

func newTable(w io.Writer, markdown bool, header ...string) *tablewriter.Table {
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	}
	if markdown {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	t := tablewriter.NewTable(w, opts...)
	t.Header(header)
	return t
}

func heading(w io.Writer, markdown bool, title string) {
	if markdown {
		fmt.Fprintf(w, "\n## %s\n\n", title)
	} else {
		fmt.Fprintf(w, "\n%s\n", strings.ToUpper(title))
	}
}

// writeReportText prints the report for people, as a terminal table or
// as Markdown. Text from logs, DNS and files is escaped for the terminal
// and, in Markdown, for Markdown.
func writeReportText(w io.Writer, r *audit.Report, md bool) error {
	s := r.Summary
	if md {
		fmt.Fprintf(w, "# lohibot-audit report\n\n")
	}
	fmt.Fprintf(w, "%d file(s), %d lines (%d malformed), log format %s\n", s.Files, s.Lines, s.Malformed, textLine(orDash(s.LogFormat), md))
	fmt.Fprintf(w, "%d claimed LohiSoftBot hits: %d genuine, %d spoofed, %d unverified; %d violations\n",
		s.ClaimedHits, s.GenuineHits, s.SpoofedHits, s.UnverifiedHits, s.Violations)
	if s.FilteredOut > 0 {
		fmt.Fprintf(w, "%d claimed hits outside --since/--until left out\n", s.FilteredOut)
	}
	if s.UnclaimedHit > 0 {
		fmt.Fprintf(w, "%d requests from the crawler's listed addresses did not carry its User-Agent\n", s.UnclaimedHit)
	}
	fmt.Fprintf(w, "IP list: %s\n", textLine(orDash(s.IPListSource), md))

	if r.NumIPs() > 0 {
		heading(w, md, "Addresses claiming to be LohiSoftBot")
		t := newTable(w, md, "IP", "VERDICT", "WHY", "HITS", "PTR", "FIRST SEEN", "LAST SEEN")
		for ip := range r.AllIPs() {
			if err := t.Append([]string{textCell(ip.IP, 45, md), textCell(string(ip.Verdict), 0, md), textCell(whyText(ip.Method, ip.Reason, ip.Warnings), 60, md),
				strconv.FormatInt(ip.Hits, 10), textCell(strings.Join(ip.PTR, " "), 60, md), tableTime(ip.FirstSeen), tableTime(ip.LastSeen)}); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
	}

	if len(r.Sites) > 0 {
		heading(w, md, "Sites")
		t := newTable(w, md, "SITE", "CLAIMED HITS", "GENUINE PAGES", "ROBOTS.TXT FETCHES", "VIOLATIONS", "CHECKS SKIPPED")
		for _, site := range r.Sites {
			if err := t.Append([]string{textCell(site.Site, 60, md), strconv.FormatInt(site.ClaimedHits, 10), strconv.FormatInt(site.Pages, 10),
				strconv.FormatInt(site.RobotsFetches, 10), strconv.Itoa(site.Violations), textCell(orDash(strings.Join(site.ChecksSkipped, ", ")), 0, md)}); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
	}

	if len(r.Violations) > 0 {
		heading(w, md, "Violations by the genuine crawler")
		bySite := map[string][]audit.Violation{}
		var sites []string
		for _, v := range r.Violations {
			if _, ok := bySite[v.Site]; !ok {
				sites = append(sites, v.Site)
			}
			bySite[v.Site] = append(bySite[v.Site], v)
		}
		sort.Strings(sites)
		for _, site := range sites {
			vs := bySite[site]
			kinds := map[string]int{}
			for _, v := range vs {
				kinds[v.Kind]++
			}
			var counts []string
			for k, n := range kinds {
				counts = append(counts, fmt.Sprintf("%s %d", k, n))
			}
			sort.Strings(counts)
			title := textCell(site, 80, md) + ": " + textLine(strings.Join(counts, ", "), md)
			if md {
				fmt.Fprintf(w, "### %s\n\n", title)
			} else {
				fmt.Fprintf(w, "%s\n", title)
			}
			t := newTable(w, md, "KIND", "TIME", "IP", "WHERE", "PATH", "DETAIL")
			for _, v := range vs {
				if err := t.Append([]string{textCell(v.Kind, 0, md), tableTime(v.Time), textCell(v.IP, 45, md), textCell(fmt.Sprintf("%s:%d", v.File, v.Line), 60, md),
					textCell(v.Path, 60, md), textCell(v.Detail, 120, md)}); err != nil {
					return err
				}
			}
			if err := t.Render(); err != nil {
				return err
			}
		}
	}

	if len(r.MalformedExamples) > 0 {
		heading(w, md, "Malformed lines (first examples)")
		t := newTable(w, md, "WHERE", "REASON", "LINE")
		for _, m := range r.MalformedExamples {
			if err := t.Append([]string{textCell(fmt.Sprintf("%s:%d", m.File, m.Line), 60, md), textCell(orDash(m.Reason), 60, md), textCell(m.Text, 100, md)}); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	if len(r.Warnings) > 0 {
		heading(w, md, "Warnings")
		for _, wn := range r.Warnings {
			fmt.Fprintf(w, "- %s\n", textLine(wn, md))
		}
	}
	return nil
}

func tableTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
