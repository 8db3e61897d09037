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

// Reload gives a fresh command the values of the command line, and the
// file's (as it is now) for the others; a key of another command of the
// program is left alone, though fresh is no part of the program.
func TestReloadTakesCommandLineThenFile(t *testing.T) {
	_, logs := program()
	if err := logs.Flags().Parse([]string{"--top", "5"}); err != nil {
		t.Fatal(err)
	}
	path := writeConfig(t, "site: old.example\n")
	if err := LoadCommand(logs, path, func(string) string { return "" }); err != nil {
		t.Fatalf("LoadCommand: %v", err)
	}
	if err := os.WriteFile(path, []byte("site: new.example\ntop: 9\nttl: 1h\nverbose: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fresh := &cobra.Command{Use: "logs"}
	fresh.Flags().String("site", "", "")
	fresh.Flags().Int("top", 0, "")
	if err := Reload(logs, fresh, path, func(string) string { return "" }); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	site, _ := fresh.Flags().GetString("site")
	top, _ := fresh.Flags().GetInt("top")
	if site != "new.example" || top != 5 {
		t.Errorf("site %q, top %d; want new.example from the file as it is now and 5 from the command line", site, top)
	}
	if !fresh.Flags().Changed("top") || fresh.Flags().Changed("site") {
		t.Errorf("Changed: top %v, site %v; want only the command line's flag marked", fresh.Flags().Changed("top"), fresh.Flags().Changed("site"))
	}
}

// A repeatable flag of the command line is copied whole, not appended
// to the fresh command's default.
func TestReloadCopiesRepeatableFlags(t *testing.T) {
	c := &cobra.Command{Use: "watch"}
	c.Flags().StringArray("never-block", []string{"192.0.2.0/24"}, "")
	if err := c.Flags().Parse([]string{"--never-block", "198.51.100.0/24", "--never-block", "203.0.113.7"}); err != nil {
		t.Fatal(err)
	}
	fresh := &cobra.Command{Use: "watch"}
	fresh.Flags().StringArray("never-block", []string{"192.0.2.0/24"}, "")
	if err := Reload(c, fresh, "", func(string) string { return "" }); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	got, _ := fresh.Flags().GetStringArray("never-block")
	if strings.Join(got, " ") != "198.51.100.0/24 203.0.113.7" {
		t.Errorf("never-block %q; want the command line's two values", got)
	}
}

// A file that is no longer a config is Load's usage error.
func TestReloadRefusesABrokenFile(t *testing.T) {
	_, logs := program()
	path := writeConfig(t, "site: [unclosed\n")
	fresh := &cobra.Command{Use: "logs"}
	fresh.Flags().String("site", "", "")
	if err := Reload(logs, fresh, path, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "config file") {
		t.Errorf("Reload = %v; want the config file's error", err)
	}
}
