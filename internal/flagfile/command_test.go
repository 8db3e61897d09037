package flagfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// program is a root with two commands, each with a flag of its own, and
// a persistent flag on the root.
func program() (root, logs *cobra.Command) {
	root = &cobra.Command{Use: "prog"}
	root.PersistentFlags().Bool("verbose", false, "")
	logs = &cobra.Command{Use: "logs"}
	logs.Flags().String("site", "", "")
	logs.Flags().Int("top", 0, "")
	emit := &cobra.Command{Use: "emit"}
	emit.Flags().String("ttl", "", "")
	root.AddCommand(logs, emit)
	return root, logs
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadCommandTakesEveryCommandsFlags(t *testing.T) {
	_, logs := program()
	if err := logs.Flags().Parse([]string{"--top", "5"}); err != nil {
		t.Fatal(err)
	}
	// ttl is emit's, verbose the root's: left alone for logs.
	path := writeConfig(t, "site: example.com\ntop: 9\nttl: 1h\nverbose: true\n")
	if err := LoadCommand(logs, path, func(string) string { return "" }); err != nil {
		t.Fatalf("LoadCommand: %v", err)
	}
	site, _ := logs.Flags().GetString("site")
	top, _ := logs.Flags().GetInt("top")
	if site != "example.com" || top != 5 {
		t.Errorf("site %q, top %d; want example.com from the file and 5 from the command line", site, top)
	}
}

func TestLoadCommandRefusesAnUnknownKey(t *testing.T) {
	_, logs := program()
	path := writeConfig(t, "site: example.com\ntpo: 9\n")
	err := LoadCommand(logs, path, func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "tpo") {
		t.Errorf("LoadCommand = %v; want an error naming the key tpo", err)
	}
}
