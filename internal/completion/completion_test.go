package completion

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// offers runs root's hidden completion command, as a shell's script does,
// and returns the words offered and the directive line.
func offers(t *testing.T, root *cobra.Command, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&bytes.Buffer{})
	root.SetArgs(append([]string{cobra.ShellCompRequestCmd}, args...))
	if err := root.Execute(); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return strings.ReplaceAll(strings.TrimSpace(out.String()), "\n", " ")
}

func program() *cobra.Command {
	root := &cobra.Command{Use: "prog"}
	run := func(*cobra.Command, []string) {}
	logs := &cobra.Command{Use: "logs", Run: run}
	logs.Flags().String("format", "", "")
	logs.Flags().String("crawler", "", "")
	logs.Flags().String("site", "", "")
	Values(logs.Flags(), "format", "table", "json")
	emit := &cobra.Command{Use: "emit", Run: run}
	emit.Flags().String("crawler", "", "")
	// A flag with values of its own keeps them over byName's.
	emit.Flags().String("format", "", "")
	Values(emit.Flags(), "format", "nft")
	root.AddCommand(logs, emit)
	Register(root, map[string]cobra.CompletionFunc{
		"crawler": cobra.FixedCompletions([]string{"googlebot"}, cobra.ShellCompDirectiveDefault),
		"format":  cobra.FixedCompletions([]string{"never"}, cobra.ShellCompDirectiveDefault),
	})
	return root
}

func TestRegister(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"logs", "--format", ""}, "table json :4"},
		{[]string{"emit", "--format", ""}, "nft :4"},
		{[]string{"logs", "--crawler", ""}, "googlebot :0"},
		{[]string{"emit", "--crawler", ""}, "googlebot :0"},
	} {
		got := offers(t, program(), tc.args...)
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%q offers %q; want %q first", tc.args, got, tc.want)
		}
	}
}

func TestValuesOf(t *testing.T) {
	root := program()
	logs, _, _ := root.Find([]string{"logs"})
	if got := ValuesOf(logs.Flags().Lookup("format")); strings.Join(got, ",") != "table,json" {
		t.Errorf("ValuesOf(logs --format) = %q; want table, json", got)
	}
	if got := ValuesOf(logs.Flags().Lookup("site")); got != nil {
		t.Errorf("ValuesOf(logs --site) = %q; want none", got)
	}
}
