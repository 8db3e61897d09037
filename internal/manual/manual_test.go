package manual

import (
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/completion"
	"github.com/spf13/cobra"
)

// program is a small lohibot-audit tree: the commands' paths and flags
// are what the entries follow from.
func program() *cobra.Command {
	root := &cobra.Command{Use: "lohibot-audit"}
	logs := &cobra.Command{Use: "logs"}
	for _, name := range []string{"config", "cache-dir", "format", "no-progress"} {
		logs.Flags().String(name, "", "")
	}
	completion.Values(logs.Flags(), "format", "table", "json")
	robots := &cobra.Command{Use: "robots"}
	test := &cobra.Command{Use: "test"}
	test.Flags().String("format", "", "")
	completion.Values(test.Flags(), "format", "text", "json")
	robots.AddCommand(test)
	format := &cobra.Command{Use: "format"}
	format.AddCommand(&cobra.Command{Use: "test"})
	watch := &cobra.Command{Use: "watch"}
	watch.Flags().String("state-dir", "", "")
	root.AddCommand(logs, robots, format, watch)
	return root
}

func find(t *testing.T, args ...string) *cobra.Command {
	t.Helper()
	c, _, err := program().Find(args)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func names(entries []Entry) string {
	var n []string
	for _, e := range entries {
		n = append(n, e.Name)
	}
	return strings.Join(n, " ")
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "0 1 2 3 130"},
		{[]string{"logs"}, "0 1 2 3 130"},
		{[]string{"robots", "test"}, "0 2 3 130"},
		{[]string{"watch"}, "0 2"},
		// A command of no list of its own: 3 only for one that writes a
		// --format.
		{[]string{"format", "test"}, "0 2"},
	} {
		if got := names(Of(find(t, tc.args...)).Exit); got != tc.want {
			t.Errorf("%q exits %s; want %s", tc.args, got, tc.want)
		}
	}
}

func TestFilesAndEnvironmentFollowTheFlags(t *testing.T) {
	logs := Of(find(t, "logs"))
	if got, want := names(logs.Files), "$XDG_CONFIG_HOME/lohibot-audit/config.yaml /etc/lohibot-audit/config.yaml $XDG_CACHE_HOME/lohibot-audit/"; got != want {
		t.Errorf("logs files: %s; want %s", got, want)
	}
	if got, want := names(logs.Environment), "XDG_CONFIG_HOME XDG_CACHE_HOME HOME COLUMNS CI TERM"; got != want {
		t.Errorf("logs environment: %s; want %s", got, want)
	}
	// robots test's --format offers no table: COLUMNS is not read.
	if got := names(Of(find(t, "robots", "test")).Environment); got != "" {
		t.Errorf("robots test environment: %s; want none", got)
	}
	watch := Of(find(t, "watch"))
	if got := names(watch.Environment); got != "STATE_DIRECTORY" {
		t.Errorf("watch environment: %s; want STATE_DIRECTORY", got)
	}
	if got := names(watch.Files); !strings.Contains(got, "lohibot-audit-watch.service") {
		t.Errorf("watch files: %s; want its service unit among them", got)
	}
}
