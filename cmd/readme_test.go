package cmd

import (
	"bufio"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The README is what users copy from: these tests hold it to the commands
// as they are. Every command line it shows must name a real command with
// flags that exist and arguments the command accepts; every flag a table
// lists must exist on each command the table's heading names; every field
// of the JSON report must be named in it.

const readmePath = "../README.md"

// readmeCommand is one example command line and where it was found.
type readmeCommand struct {
	where string
	text  string
}

// readmeCommands returns the lohibot-audit command lines of the README's
// code blocks and of every command's Example text.
func readmeCommands(t *testing.T, root *cobra.Command) []readmeCommand {
	t.Helper()
	f, err := os.Open(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []readmeCommand
	sc := bufio.NewScanner(f)
	inBlock, n := false, 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock {
			out = append(out, readmeCommand{where: "README.md:" + itoa(n), text: line})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
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
	data, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	var commands []*cobra.Command
	heading := ""
	rows := 0
	for i, line := range strings.Split(string(data), "\n") {
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
					t.Errorf("README.md:%d: %s lists %s, which `%s` does not have", i+1, strings.TrimSpace(heading), name, c.CommandPath())
				}
			}
		}
	}
	if rows < 10 {
		t.Fatalf("only %d flags found in the README's tables", rows)
	}
}

func TestReadmeNamesEveryReportField(t *testing.T) {
	data, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	// Names in backticks, line by line outside code blocks (where a
	// fence's backticks would pair with the wrong ones).
	named := map[string]bool{}
	inBlock := false
	for line := range strings.SplitSeq(readme, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock {
			continue
		}
		for _, m := range backtickRE.FindAllStringSubmatch(line, -1) {
			for _, w := range regexp.MustCompile(`[a-z_]+`).FindAllString(m[1], -1) {
				named[w] = true
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
	var report any
	if err := json.Unmarshal([]byte(stdout.String()), &report); err != nil {
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
	slices.Sort(missing)
	missing = slices.Compact(missing)
	if len(missing) > 0 {
		t.Errorf("the README does not name these report fields: %s", strings.Join(missing, ", "))
	}
}
