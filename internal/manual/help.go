package manual

import (
	"embed"
	"net/netip"
	"path"
	"sort"
	"strings"
	"text/template"

	"github.com/lohisoft/lohibot-audit/internal/ipfmt"
	"github.com/spf13/cobra"
)

// The commands' help texts, one file a command, named after its path
// without the program's name ("robots-test.txt"; the program itself is
// "lohibot-audit.txt"): the description (cobra's Long), then, after a line
// "--- examples ---", the examples. They are text/template templates of
// Values.
//
//go:embed help/*.txt
var helpFiles embed.FS

// examplesLine parts a help file's description from its examples.
const examplesLine = "\n--- examples ---\n"

// Values are the facts the help texts name that the code holds, so that
// they are said as the code says them: the default crawler's.
type Values struct {
	Crawler string // its title, as its User-Agent writes it
	IPList  string // the URL of its IP list
	FCrDNS  string // the host name its PTR names end in
	// Builtin are its built-in addresses: the texts name them all, and
	// the first as an example.
	Builtin []netip.Prefix
}

// fill are the values a help file is made with: v's, and this system's
// signals.
type fill struct {
	Values
	BuiltinIPs string // Builtin, comma separated
	ExampleIP  string // the first address of Builtin
	Signals    string // what watch says of the signals it takes
}

func (v Values) fill() fill {
	f := fill{Values: v, Signals: watchSignals}
	addrs := make([]string, len(v.Builtin))
	for i, p := range v.Builtin {
		addrs[i] = ipfmt.Prefix(p)
	}
	f.BuiltinIPs = strings.Join(addrs, ", ")
	if len(v.Builtin) > 0 {
		f.ExampleIP = v.Builtin[0].Addr().String()
	}
	return f
}

// Describe fills in the description and examples of root and of each of
// its commands that has a help file, with v, and returns the names of the
// help files that no command took (none, if the files and the commands
// agree; a test holds them to it). A command without a file keeps its own
// (cobra's completion and help).
func Describe(root *cobra.Command, v Values) (unused []string) {
	texts := helpTexts(v)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		name := helpName(c)
		if t, ok := texts[name]; ok {
			c.Long, c.Example = t.long, t.example
			delete(texts, name)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for name := range texts {
		unused = append(unused, name+".txt")
	}
	sort.Strings(unused)
	return unused
}

// helpName is the name of c's help file, without ".txt".
func helpName(c *cobra.Command) string {
	if !c.HasParent() {
		return c.Name()
	}
	return strings.ReplaceAll(strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" "), " ", "-")
}

// helpText is a command's description and examples.
type helpText struct{ long, example string }

// helpTexts are the help files made with v, by name. The files are part
// of the program: one that does not make is a mistake in the program,
// and panics, which every test that builds the commands finds.
func helpTexts(v Values) map[string]helpText {
	files, err := helpFiles.ReadDir("help")
	if err != nil {
		panic(err)
	}
	texts := make(map[string]helpText, len(files))
	for _, f := range files {
		b, err := helpFiles.ReadFile(path.Join("help", f.Name()))
		if err != nil {
			panic(err)
		}
		t := template.Must(template.New(f.Name()).Option("missingkey=error").Parse(string(b)))
		var out strings.Builder
		if err := t.Execute(&out, v.fill()); err != nil {
			panic(err)
		}
		long, example, _ := strings.Cut(strings.TrimSuffix(out.String(), "\n"), strings.TrimPrefix(examplesLine, "\n"))
		texts[strings.TrimSuffix(f.Name(), ".txt")] = helpText{strings.TrimSuffix(long, "\n"), example}
	}
	return texts
}
