package cmd

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The README and the reference in docs/ are what users copy from: these
// tests hold them to the commands as they are. Every command line they
// show must name a real command with flags that exist and arguments the
// command accepts; every flag a table lists must exist on each command the
// table's heading names; every field of the JSON report must be named in
// them; every link between them must lead somewhere.

// userDoc is one file of the user's documentation, as the tests read it.
type userDoc struct {
	name string // README.md, docs/reference.md, ...
	text string
}

// userDocs reads README.md and every docs/*.md.
func userDocs(t *testing.T) []userDoc {
	t.Helper()
	names, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	names = append([]string{"../README.md"}, names...)
	var docs []userDoc
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, userDoc{name: strings.TrimPrefix(name, "../"), text: string(b)})
	}
	return docs
}

// readmeCommand is one example command line and where it was found.
type readmeCommand struct {
	where string
	text  string
}

// readmeCommands returns the lohibot-audit command lines of the code
// blocks of README.md and docs/*.md, and of every command's Example text.
func readmeCommands(t *testing.T, root *cobra.Command) []readmeCommand {
	t.Helper()
	var out []readmeCommand
	for _, doc := range userDocs(t) {
		inBlock := false
		for n, line := range strings.Split(doc.text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inBlock = !inBlock
				continue
			}
			if inBlock {
				out = append(out, readmeCommand{where: doc.name + ":" + itoa(n+1), text: line})
			}
		}
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for line := range strings.SplitSeq(c.Example, "\n") {
			out = append(out, readmeCommand{where: c.CommandPath() + " --help", text: line})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return out
}

// invocationRE finds the program's name where a command starts: at the
// start of the line, after a pipe or &&, or as the binary of a systemd
// ExecStart= or a go run.
var invocationRE = regexp.MustCompile(`(?:^|[|;&=]\s*|\s)(?:/usr/(?:local/)?bin/)?lohibot-audit(?:\s|$)|go run \./cmd/lohibot-audit(?:\s|$)`)

// shellWords splits the part of line after the program's name into
// words, as sh would, up to the end of the command (a pipe, a
// redirection, && or a comment). Variables expand to a placeholder.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				j = len(line) - i - 1
			}
			cur.WriteString(line[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '"':
			j := strings.IndexByte(line[i+1:], '"')
			if j < 0 {
				j = len(line) - i - 1
			}
			cur.WriteString(line[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '$':
			// $VAR or ${VAR}: a value the example leaves to the reader.
			j := i + 1
			if j < len(line) && line[j] == '{' {
				if k := strings.IndexByte(line[j:], '}'); k >= 0 {
					j += k + 1
				}
			} else {
				for j < len(line) && (line[j] == '_' || line[j] >= 'A' && line[j] <= 'Z' || line[j] >= 'a' && line[j] <= 'z' || line[j] >= '0' && line[j] <= '9') {
					j++
				}
			}
			if !inWord && strings.HasPrefix(line[i:j], "$LOHIBOT_") && strings.HasSuffix(line[i:j], "_ARGS") {
				// Extra flags the reader may add: none.
				i = j - 1
				continue
			}
			cur.WriteString("value")
			inWord = true
			i = j - 1
		case c == ' ' || c == '\t':
			flush()
		case c == '|' || c == '>' || c == '<' || c == ';' || c == '&' || c == '#' && !inWord:
			flush()
			return words
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words
}

func TestReadmeExamplesAreValidCommands(t *testing.T) {
	env := &Env{Stdin: strings.NewReader(""), Stdout: new(strings.Builder), Stderr: new(strings.Builder), Getenv: func(string) string { return "" }}
	root := newRootCmd(env)
	checked := 0
	for _, ex := range readmeCommands(t, root) {
		loc := invocationRE.FindStringIndex(ex.text)
		if loc == nil {
			continue
		}
		args := shellWords(ex.text[loc[1]:])
		if len(args) == 0 {
			continue
		}
		checked++
		c, rest, err := root.Find(args)
		if err != nil || c == root {
			t.Errorf("%s: %q: no such command (%v)", ex.where, ex.text, err)
			continue
		}
		c.InitDefaultHelpFlag()
		if err := c.ParseFlags(rest); err != nil {
			t.Errorf("%s: %q: %v", ex.where, ex.text, err)
			resetFlags(c)
			continue
		}
		if c.Args != nil {
			if err := c.Args(c, c.Flags().Args()); err != nil {
				t.Errorf("%s: %q: %v", ex.where, ex.text, err)
			}
		}
		resetFlags(c)
	}
	if checked < 10 {
		t.Fatalf("only %d example commands found: is the README where this test looks?", checked)
	}
}

// resetFlags puts c's flags back to their defaults, so that the next
// example is parsed as if alone.
func resetFlags(c *cobra.Command) {
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Changed {
			if sv, ok := f.Value.(interface{ Replace([]string) error }); ok {
				_ = sv.Replace(nil)
			} else {
				_ = f.Value.Set(f.DefValue)
			}
			f.Changed = false
		}
	})
}

var (
	headingRE  = regexp.MustCompile("^#+ ")
	backtickRE = regexp.MustCompile("`([^`]+)`")
	flagRE     = regexp.MustCompile(`--[a-z][a-z0-9-]*`)
)

func TestReadmeFlagTablesMatchCommands(t *testing.T) {
	env := &Env{Stdin: strings.NewReader(""), Stdout: new(strings.Builder), Stderr: new(strings.Builder), Getenv: func(string) string { return "" }}
	root := newRootCmd(env)
	var commands []*cobra.Command
	heading := ""
	rows := 0
	for _, doc := range userDocs(t) {
		for i, line := range strings.Split(doc.text, "\n") {
			if headingRE.MatchString(line) {
				heading = line
				commands = commands[:0]
				for _, m := range backtickRE.FindAllStringSubmatch(line, -1) {
					c, rest, err := root.Find(strings.Fields(m[1]))
					if err == nil && c != root && len(rest) == 0 {
						commands = append(commands, c)
					}
				}
				continue
			}
			if !strings.HasPrefix(line, "|") || len(commands) == 0 {
				continue
			}
			cells := strings.Split(line, "|")
			if len(cells) < 3 {
				continue
			}
			for _, name := range flagRE.FindAllString(cells[1], -1) {
				rows++
				for _, c := range commands {
					if c.Flags().Lookup(name[2:]) == nil && c.InheritedFlags().Lookup(name[2:]) == nil {
						t.Errorf("%s:%d: %s lists %s, which `%s` does not have", doc.name, i+1, strings.TrimSpace(heading), name, c.CommandPath())
					}
				}
			}
		}
	}
	if rows < 10 {
		t.Fatalf("only %d flags found in the tables of README.md and docs/", rows)
	}
}

func TestReadmeNamesEveryReportField(t *testing.T) {
	// Names in backticks, line by line outside code blocks (where a
	// fence's backticks would pair with the wrong ones).
	named := map[string]bool{}
	for _, doc := range userDocs(t) {
		inBlock := false
		for line := range strings.SplitSeq(doc.text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inBlock = !inBlock
				continue
			}
			if inBlock {
				continue
			}
			for _, m := range backtickRE.FindAllStringSubmatch(line, -1) {
				for _, w := range regexp.MustCompile(`[a-z_][a-z0-9_]*`).FindAllString(m[1], -1) {
					named[w] = true
				}
			}
		}
	}
	// The sample report, as the README's first command makes it.
	stdout := new(strings.Builder)
	env := &Env{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: new(strings.Builder), Getenv: func(string) string { return "" }, Now: func() time.Time { return fixedNow }}
	code := Run(t.Context(), env, []string{"logs", "--offline", "--no-cache", "--format", "json",
		"--robots", "../testdata/sample/robots.txt", "../testdata/sample/access.log", "../testdata/sample/access.log.1.gz"})
	if code != 0 {
		t.Fatalf("logs exited %d: %s", code, env.Stderr)
	}
	var report, every any
	if err := json.Unmarshal([]byte(stdout.String()), &report); err != nil {
		t.Fatal(err)
	}
	// And a report with every field set, so that a field the sample does
	// not show is named too.
	if err := json.Unmarshal(filledReportJSON(t), &every); err != nil {
		t.Fatal(err)
	}
	var missing []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if !named[k] {
					missing = append(missing, path+k)
				}
				walk(path+k+".", x)
			}
		case []any:
			for _, x := range v {
				walk(strings.TrimSuffix(path, ".")+"[].", x)
			}
		}
	}
	walk("", report)
	walk("", every)
	slices.Sort(missing)
	missing = slices.Compact(missing)
	if len(missing) > 0 {
		t.Errorf("neither README.md nor docs/ names these report fields: %s", strings.Join(missing, ", "))
	}
}

var (
	linkRE   = regexp.MustCompile(`\]\(([^()\s]+)\)`)
	anchorRE = regexp.MustCompile(`[^a-z0-9 _-]`)
)

// anchors returns the anchors GitHub gives the headings of a Markdown
// text: lower case, punctuation dropped, spaces as dashes, a repeated one
// numbered.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	inBlock := false
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock || !headingRE.MatchString(line) {
			continue
		}
		a := anchorRE.ReplaceAllString(strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#"))), "")
		a = strings.ReplaceAll(a, " ", "-")
		name := a
		for i := 1; out[name]; i++ {
			name = a + "-" + itoa(i)
		}
		out[name] = true
	}
	return out
}

// Every link of README.md and docs/*.md to a file of the repository
// leads to one that exists, and to a heading it has; none speaks of a
// specification the user does not have.
func TestUserDocsLinksAndWords(t *testing.T) {
	docs := userDocs(t)
	heads := map[string]map[string]bool{}
	for _, d := range docs {
		heads[d.name] = anchors(d.text)
	}
	links := 0
	for _, d := range docs {
		for i, line := range strings.Split(d.text, "\n") {
			for _, bad := range []string{"SPEC", "§"} {
				if strings.Contains(line, bad) {
					t.Errorf("%s:%d: %q speaks of a text the user does not have: %s", d.name, i+1, bad, line)
				}
			}
			for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				file, anchor, _ := strings.Cut(target, "#")
				name := d.name
				if file != "" {
					name = path.Clean(path.Join(path.Dir(d.name), file))
					if _, err := os.Stat(filepath.Join("..", name)); err != nil {
						t.Errorf("%s:%d: the link to %s leads nowhere", d.name, i+1, target)
						continue
					}
				}
				if anchor == "" {
					continue
				}
				h, ok := heads[name]
				if !ok {
					t.Errorf("%s:%d: the link %s names a heading of %s, which is not Markdown", d.name, i+1, target, name)
				} else if !h[anchor] {
					t.Errorf("%s:%d: %s has no heading #%s", d.name, i+1, name, anchor)
				}
			}
		}
	}
	if links < 10 {
		t.Errorf("only %d links found in README.md and docs/", links)
	}
}
