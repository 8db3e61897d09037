package flagfile

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// flags is a command's flags, as the tests apply files to them.
type flags struct {
	fs       *pflag.FlagSet
	offline  bool
	budget   int
	pause    time.Duration
	format   string
	since    string
	robots   []string
	resolver []string
}

func newFlags() *flags {
	f := &flags{fs: pflag.NewFlagSet("logs", pflag.ContinueOnError)}
	f.fs.BoolVar(&f.offline, "offline", false, "")
	f.fs.IntVar(&f.budget, "budget", 20, "")
	f.fs.DurationVar(&f.pause, "min-pause", time.Second, "")
	f.fs.StringVar(&f.format, "format", "", "")
	f.fs.StringVar(&f.since, "since", "", "")
	f.fs.StringArrayVar(&f.robots, "robots", nil, "")
	f.fs.StringArrayVar(&f.resolver, "resolver", nil, "")
	f.fs.String("config", "", "")
	return f
}

// known are the flags of every command: "mode" is another command's.
var known = map[string]bool{"offline": true, "budget": true, "min-pause": true, "format": true, "since": true,
	"robots": true, "resolver": true, "config": true, "mode": true, "log-format": true, "site": true}

// TestApplyErrors: a file that cannot be used is one line naming the file,
// the line and the problem.
func TestApplyErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"a list, not keys", "- log-format: combined\n- offline: true\n",
			"line 1: want keys and values, such as log-format: combined, not a list"},
		{"a key given twice", "offline: true\nbudget: 10\nbudget: 20\n",
			`line 3: key "budget" given twice (first on line 2)`},
		{"bad syntax", "offline: true\nbudget: 20\n  bad: indent\n",
			"line 3: mapping values are not allowed in this context"},
		{"tab indentation", "robots:\n\t- a\n",
			"line 2: found character that cannot start any token"},
		{"unknown key", "offline: true\n\nfail-onn: spoofed\n",
			`line 3: unknown key "fail-onn" (keys are flag names, such as log-format)`},
		{"bad value", "offline: true\nbudget: many\n",
			`line 2: key "budget": invalid argument "many"`},
		{"a mapping as value", "offline: true\nrobots:\n  shop: robots.txt\n",
			`line 3: key "robots": want a value or a list of values, not keys and values`},
		{"a list in a list", "robots:\n  - [a, b]\n",
			`line 2: key "robots": want a value or a list of values, not a list of lists`},
		{"a list for a single value", "budget: [1, 2]\n",
			`line 1: key "budget": takes one value, not a list`},
		{"scalar document", "just text\n",
			"line 1: want keys and values, such as log-format: combined, not a value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Apply(newFlags().fs, known, "/etc/x.yaml", []byte(tc.yaml))
			want := "config file /etc/x.yaml: " + tc.want
			if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err %v\nwant one line starting %q", err, want)
			}
		})
	}
}

// TestApplyValues: anchors, nulls, lists for repeatable flags, times and
// numbers as written; the command line wins; another command's key is
// left alone; a flag from the file is given but not Changed.
func TestApplyValues(t *testing.T) {
	f := newFlags()
	if err := f.fs.Parse([]string{"--min-pause", "3s"}); err != nil {
		t.Fatal(err)
	}
	doc := "offline: true\nformat: &f csv\nsince: 2020-01-02T03:04:05Z\nbudget: 7\nmin-pause: 9s\nsite: ~\nresolver: []\n" +
		"mode: allow-bot\nrobots:\n  - a.txt\n  - *f\n"
	if err := Apply(f.fs, known, "c.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	if !f.offline || f.format != "csv" || f.since != "2020-01-02T03:04:05Z" || f.budget != 7 || f.pause != 3*time.Second ||
		!slices.Equal(f.robots, []string{"a.txt", "csv"}) || f.resolver != nil {
		t.Errorf("flags %+v", f)
	}
	if !Given(f.fs, "budget") || f.fs.Lookup("budget").Changed || !Given(f.fs, "min-pause") || Given(f.fs, "format") == false || Given(f.fs, "nope") {
		t.Error("Given: want budget and format (file) and min-pause (command line), not an unknown flag")
	}
	if g := newFlags(); Given(g.fs, "budget") {
		t.Error("Given: a flag left at its default is given")
	}
	for _, empty := range []string{"", "# only a comment\n", "~\n"} {
		if err := Apply(newFlags().fs, known, "c.yaml", []byte(empty)); err != nil {
			t.Errorf("%q: %v", empty, err)
		}
	}
}

// FuzzApply: a file never panics the loader, and an error is one line
// naming the file.
func FuzzApply(f *testing.F) {
	for _, s := range []string{
		"log-format: combined\nrobots:\n  - a=b.txt\n",
		"- a\n- b\n",
		"budget: &x 20\nmin-pause: *x\n",
		"site: [a, [b]]\n",
		"offline: true\noffline: false\n",
		"? [a]\n: b\n",
		"robots: {a: b}\n",
		"",
		"%YAML 1.2\n---\nformat: json\n...\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := Apply(newFlags().fs, known, "/x/config.yaml", data)
		if err == nil {
			return
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "/x/config.yaml") {
			t.Errorf("error %q is not one line naming the file", msg)
		}
	})
}
