package manual

import (
	"embed"
	"path"
	"sort"
	"strings"
	"text/template"

	"github.com/lohisoft/lohibot-audit/crawler"
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
	Crawler    string // its title (LohiSoftBot)
	IPList     string // the URL of its IP list
	BuiltinIPs string // its built-in addresses, comma separated
	ExampleIP  string // the first of them
	FCrDNS     string // the host name its PTR names end in
	Signals    string // what watch says of the signals it takes (this system's)
}

// ValuesOf are the Values of the crawler p, on this system.
func ValuesOf(p *crawler.Profile) Values {
	v := Values{Crawler: p.Title(), Signals: watchSignals}
	if len(p.IPLists) > 0 {
		v.IPList = p.IPLists[0]
	}
	if len(p.FCrDNS) > 0 {
		v.FCrDNS = p.FCrDNS[0]
	}
	addrs := make([]string, len(p.BuiltinIPs))
	for i, pfx := range p.BuiltinIPs {
		addrs[i] = ipfmt.Prefix(pfx)
	}
	v.BuiltinIPs = strings.Join(addrs, ", ")
	if len(addrs) > 0 {
		v.ExampleIP = p.BuiltinIPs[0].Addr().String()
	}
	return v
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
		if err := t.Execute(&out, v); err != nil {
			panic(err)
		}
		long, example, _ := strings.Cut(strings.TrimSuffix(out.String(), "\n"), strings.TrimPrefix(examplesLine, "\n"))
		texts[strings.TrimSuffix(f.Name(), ".txt")] = helpText{strings.TrimSuffix(long, "\n"), example}
	}
	return texts
}
