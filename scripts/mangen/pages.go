package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/manual"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// writePages writes a man page (section 1) for root and each of its
// visible commands into dir: lohibot-audit.1, lohibot-audit-logs.1, ...
// version, when not empty, is printed in each page's footer.
func writePages(root *cobra.Command, dir string, when time.Time, version string) error {
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		if c.HasParent() && !c.IsAvailableCommand() {
			return nil
		}
		name := filepath.Join(dir, pageName(c)+".1")
		f, err := os.Create(name)
		if err != nil {
			return err
		}
		w := bufio.NewWriter(f)
		writePage(w, c, when, version)
		if err := w.Flush(); err != nil {
			f.Close()
			return fmt.Errorf("writing %s: %w", name, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
		for _, sub := range c.Commands() {
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root); err != nil {
		return fmt.Errorf("writing man pages into %s: %w", dir, err)
	}
	return nil
}

// pageName is the page's name: the command path joined by hyphens.
func pageName(c *cobra.Command) string { return strings.ReplaceAll(c.CommandPath(), " ", "-") }

// writePage writes c's page in the man(7) macros: NAME, SYNOPSIS,
// DESCRIPTION, OPTIONS, EXIT STATUS, FILES, ENVIRONMENT, EXAMPLES and SEE
// ALSO. Text is escaped for roff as it is written: nothing a command says
// can be taken for a request, and a <placeholder> stays what it is.
func writePage(w io.Writer, c *cobra.Command, when time.Time, version string) {
	source := "lohibot-audit"
	if version != "" {
		source += " " + version
	}
	fmt.Fprintf(w, ".\\\" Generated from the command tree by scripts/mangen: do not edit.\n")
	fmt.Fprintf(w, ".TH %s 1 %s %s \"User Commands\"\n", quote(strings.ToUpper(pageName(c))), quote(when.Format(time.DateOnly)), quote(source))
	// No hyphenation (names, flags and paths are not words), and a ragged
	// right margin, so that a long path never leaves a line to stretch.
	fmt.Fprintf(w, ".nh\n.ad l\n")

	fmt.Fprintf(w, ".SH NAME\n%s \\- %s\n", text(pageName(c)), text(c.Short))

	fmt.Fprintf(w, ".SH SYNOPSIS\n")
	for i, line := range synopses(c) {
		if i > 0 {
			fmt.Fprintf(w, ".br\n")
		}
		fmt.Fprintf(w, "%s\n", line)
	}

	fmt.Fprintf(w, ".SH DESCRIPTION\n")
	long := c.Long
	if long == "" {
		long = c.Short + "."
	}
	writeProse(w, long)
	if subs := visibleSubcommands(c); len(subs) > 0 {
		fmt.Fprintf(w, ".PP\nCommands:\n")
		for _, s := range subs {
			fmt.Fprintf(w, ".TP\n\\fB%s\\fR\n%s; see \\fB%s\\fR(1).\n", text(s.Name()), text(s.Short), text(pageName(s)))
		}
	}

	// The help and version flags cobra adds as it runs.
	c.InitDefaultHelpFlag()
	if !c.HasParent() {
		c.InitDefaultVersionFlag()
	}
	fmt.Fprintf(w, ".SH OPTIONS\n")
	writeFlags(w, c.NonInheritedFlags())
	writeFlags(w, c.InheritedFlags())

	m := manual.Of(c)
	fmt.Fprintf(w, ".SH EXIT STATUS\n")
	writeEntries(w, m.Exit, "B")
	fmt.Fprintf(w, ".SH FILES\n")
	if len(m.Files) == 0 {
		fmt.Fprintf(w, "None.\n")
	}
	writeEntries(w, m.Files, "I")
	fmt.Fprintf(w, ".SH ENVIRONMENT\n")
	if len(m.Environment) == 0 {
		fmt.Fprintf(w, "None.\n")
	}
	writeEntries(w, m.Environment, "B")

	fmt.Fprintf(w, ".SH EXAMPLES\n")
	if ex := strings.Trim(c.Example, "\n"); ex != "" {
		fmt.Fprintf(w, ".PP\n.nf\n.RS 4\n")
		for _, line := range strings.Split(ex, "\n") {
			for _, part := range splitExample(strings.TrimPrefix(line, "  "), exampleWidth) {
				fmt.Fprintf(w, "%s\n", text(part))
			}
		}
		fmt.Fprintf(w, ".RE\n.fi\n")
	} else {
		fmt.Fprintf(w, ".PP\n.nf\n.RS 4\n%s\n.RE\n.fi\n", text(c.CommandPath()+" --help"))
	}

	fmt.Fprintf(w, ".SH SEE ALSO\n%s\n", seeAlso(c))
}

// exampleWidth is the longest example line on an 80-column terminal (the
// examples are indented by 11 columns).
const exampleWidth = 68

// splitExample cuts a command line longer than width at spaces, as a shell
// reads it: each part but the last ends in " \\", the parts after the first
// are indented by four spaces. A quoted space is never cut at.
func splitExample(line string, width int) []string {
	var out []string
	indent := ""
	for len(indent)+len(line) > width {
		// The last space that leaves the part within width, else the
		// first space at all.
		cut, first := -1, -1
		quoted := byte(0)
		for i := 0; i < len(line); i++ {
			switch c := line[i]; {
			case quoted != 0:
				if c == quoted {
					quoted = 0
				}
			case c == '\'' || c == '"':
				quoted = c
			case c == ' ' && i > 0:
				if first < 0 {
					first = i
				}
				if len(indent)+i+2 <= width {
					cut = i
				}
			}
		}
		if cut < 0 {
			cut = first
		}
		if cut < 0 {
			break
		}
		out = append(out, indent+line[:cut]+" \\")
		line = strings.TrimLeft(line[cut:], " ")
		indent = "    "
	}
	return append(out, indent+line)
}

// synopses are the SYNOPSIS lines of c: its path in bold and its
// arguments, the upper-case words (FILE, IP, ROBOTS) in italics; one line
// for each runnable command under one that groups others.
func synopses(c *cobra.Command) []string {
	var out []string
	if c.Runnable() {
		out = append(out, synopsis(c))
	}
	for _, s := range visibleSubcommands(c) {
		out = append(out, synopses(s)...)
	}
	if !c.HasParent() {
		out = append(out, `\fB`+text(c.Name())+`\fR \fB\-\-version\fR`)
	}
	return out
}

var placeholder = regexp.MustCompile(`[A-Z][A-Z0-9_]+`)

func synopsis(c *cobra.Command) string {
	args := ""
	if i := strings.IndexByte(c.Use, ' '); i >= 0 {
		args = strings.TrimSpace(c.Use[i+1:])
	}
	line := "\\fB" + text(c.CommandPath()) + "\\fR"
	if c.HasAvailableFlags() {
		line += " [\\fIoptions\\fR]"
	}
	if args != "" {
		line += " " + placeholder.ReplaceAllStringFunc(text(args), func(s string) string { return "\\fI" + s + "\\fR" })
	}
	return line
}

func visibleSubcommands(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() {
			out = append(out, s)
		}
	}
	return out
}

// writeFlags writes each visible flag as a tagged paragraph: its names and
// value in the tag, its usage and default below.
func writeFlags(w io.Writer, fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		varname, usage := pflag.UnquoteUsage(f)
		tag := ""
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			tag = "\\fB" + text("-"+f.Shorthand) + "\\fR, "
		}
		tag += "\\fB" + text("--"+f.Name) + "\\fR"
		if f.Value.Type() != "bool" && varname != "" {
			tag += " \\fI" + text(varname) + "\\fR"
		}
		if def := defaultOf(f); def != "" && !strings.Contains(usage, "default") {
			usage += " (default " + def + ")"
		}
		fmt.Fprintf(w, ".TP\n%s\n%s\n", tag, text(usage))
	})
}

// defaultOf is the default of f worth saying: none for false, zero,
// empty values.
func defaultOf(f *pflag.Flag) string {
	switch f.DefValue {
	case "", "false", "0", "[]", "0s":
		return ""
	}
	return f.DefValue
}

func writeEntries(w io.Writer, es []manual.Entry, font string) {
	for _, e := range es {
		fmt.Fprintf(w, ".TP\n\\f%s%s\\fR\n%s\n", font, text(e.Name), text(e.Text))
	}
}

// seeAlso names the parent, the subcommands and the siblings of c, then
// the pages of the tools it works with.
func seeAlso(c *cobra.Command) string {
	var refs []string
	if p := c.Parent(); p != nil {
		refs = append(refs, ref(pageName(p), "1"))
	}
	for _, s := range visibleSubcommands(c) {
		refs = append(refs, ref(pageName(s), "1"))
	}
	if p := c.Parent(); p != nil {
		for _, s := range visibleSubcommands(p) {
			if s != c {
				refs = append(refs, ref(pageName(s), "1"))
			}
		}
	}
	switch c.Name() {
	case "emit", "watch":
		refs = append(refs, ref("nft", "8"), ref("systemd.timer", "5"))
	case "lohibot-audit":
		refs = append(refs, ref("nft", "8"))
	}
	return strings.Join(refs, ",\n")
}

func ref(name, section string) string { return "\\fB" + text(name) + "\\fR(" + section + ")" }

// writeProse writes the text of a command's long help as roff. A
// paragraph is lines that are not indented; an indented block after it is
// a list: each line at the block's indentation starts an item, a line
// indented deeper goes on with it. An item is numbered ("1. text"), or a
// term and its text set apart by two spaces or more ("genuine     the PTR
// name ..."), or else text kept as it is set (a command, a table).
func writeProse(w io.Writer, long string) {
	for _, block := range strings.Split(strings.Trim(long, "\n"), "\n\n") {
		lines := strings.Split(strings.TrimRight(block, "\n"), "\n")
		i := 0
		var para []string
		for i < len(lines) && indentOf(lines[i]) == 0 {
			para = append(para, strings.TrimSpace(lines[i]))
			i++
		}
		if len(para) > 0 {
			fmt.Fprintf(w, ".PP\n%s\n", text(strings.Join(para, " ")))
		}
		if i < len(lines) {
			writeList(w, lines[i:])
		}
	}
}

var (
	numbered = regexp.MustCompile(`^(\d+\.)\s+(.*)$`)
	termText = regexp.MustCompile(`^(\S+(?: \S+)*?)\s{2,}(\S.*)$`)
)

func writeList(w io.Writer, lines []string) {
	base := indentOf(lines[0])
	type item struct{ first, rest []string }
	var items []item
	for _, l := range lines {
		if indentOf(l) <= base || len(items) == 0 {
			items = append(items, item{first: []string{strings.TrimSpace(l)}})
			continue
		}
		it := &items[len(items)-1]
		it.rest = append(it.rest, strings.TrimSpace(l))
	}
	listed := false
	for _, it := range items {
		head := it.first[0]
		more := strings.Join(it.rest, " ")
		join := func(s string) string { return strings.TrimSpace(s + " " + more) }
		if m := numbered.FindStringSubmatch(head); m != nil {
			fmt.Fprintf(w, ".IP %s 4\n%s\n", quote(m[1]), text(join(m[2])))
			listed = true
			continue
		}
		if m := termText.FindStringSubmatch(head); m != nil {
			fmt.Fprintf(w, ".TP\n\\fB%s\\fR\n%s\n", text(m[1]), text(join(m[2])))
			listed = true
			continue
		}
		// Set as it is.
		fmt.Fprintf(w, ".PP\n.nf\n.RS 4\n%s\n", text(head))
		for _, r := range it.rest {
			fmt.Fprintf(w, "%s\n", text(r))
		}
		fmt.Fprintf(w, ".RE\n.fi\n")
	}
	if listed {
		fmt.Fprintf(w, ".PP\n")
	}
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

// text escapes s for a line of roff text: backslashes, hyphens (written
// \- so that options copy as they are), a leading dot or quote, and long
// words such as paths and URLs get places where a line may break.
func text(s string) string {
	var b strings.Builder
	for i, word := range strings.Split(s, " ") {
		if i > 0 {
			b.WriteByte(' ')
		}
		long := len(word) > 30
		for _, r := range word {
			switch r {
			case '\\':
				b.WriteString(`\e`)
			case '-':
				b.WriteString(`\-`)
			default:
				if r < 0x80 {
					b.WriteRune(r)
				} else {
					// groff reads bytes, not UTF-8: name the character.
					fmt.Fprintf(&b, `\[u%04X]`, r)
				}
			}
			if long && (r == '/' || r == ',' || r == ';' || r == '=' || r == '&') {
				b.WriteString(`\:`)
			}
		}
	}
	out := b.String()
	if strings.HasPrefix(out, ".") || strings.HasPrefix(out, "'") {
		out = `\&` + out
	}
	return out
}

// quote makes s one argument of a roff request.
func quote(s string) string {
	return `"` + strings.ReplaceAll(text(s), `"`, `\(dq`) + `"`
}

// pageDate is the date printed in the pages: date (YYYY-MM-DD) when given,
// else SOURCE_DATE_EPOCH (seconds), so that a release build is
// reproducible, else today.
func pageDate(date, epoch string) (time.Time, error) {
	switch {
	case date != "":
		t, err := time.Parse(time.DateOnly, date)
		if err != nil {
			return time.Time{}, fmt.Errorf("-date %q: give a date such as 2026-12-02", date)
		}
		return t, nil
	case epoch != "":
		s, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want seconds since 1970", epoch)
		}
		return time.Unix(s, 0).UTC(), nil
	}
	return time.Now().UTC(), nil
}
