package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigFileErrors checks that a config file that cannot be used is
// one line naming the file, the line and the problem (exit 2).
func TestConfigFileErrors(t *testing.T) {
	log := filepath.Join("..", "testdata", "logs", "combined.log")
	tests := []struct {
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
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(cfg, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runInMemory(t, "", "logs", "--no-cache", "--config", cfg, log)
			if code != ExitUsage || out != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing", code, out)
			}
			want := "lohibot-audit: error: config file " + cfg + ": " + tc.want
			if !strings.HasPrefix(errOut, want) {
				t.Errorf("stderr %q\nwant it to start %q", errOut, want)
			}
			if strings.Count(errOut, "\n") != 1 {
				t.Errorf("stderr is not one line: %q", errOut)
			}
		})
	}
}

// TestConfigFileValues checks what a config file may hold: anchors,
// nulls, lists for repeatable flags, times and numbers as written.
func TestConfigFileValues(t *testing.T) {
	log := filepath.Join("..", "testdata", "logs", "combined.log")
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	yaml := "offline: true\nformat: &f csv\nsince: 2020-01-02T03:04:05Z\nbudget: 20\nsite: ~\nresolver: []\nrobots:\n  - " +
		filepath.Join("..", "testdata", "sample", "robots.txt") + "\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runInMemory(t, "", "logs", "--no-cache", "--config", cfg, log)
	if code != ExitOK || !strings.HasPrefix(out, "ip,verdict,") {
		t.Errorf("exit %d, stdout %.40q, stderr %q", code, out, errOut)
	}
}

// FuzzLoadConfig feeds config files to loadConfig: it never panics, and
// an error is one line naming the file.
func FuzzLoadConfig(f *testing.F) {
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
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(cfg, data, 0o644); err != nil {
			t.Fatal(err)
		}
		env := &Env{Getenv: func(string) string { return "" }}
		c := newLogsCmd(env)
		newRootCmd(env).AddCommand(c)
		err := loadConfig(env, c, cfg)
		if err == nil {
			return
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.Contains(msg, cfg) {
			t.Errorf("error %q is not one line naming the file", msg)
		}
	})
}
