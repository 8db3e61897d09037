package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// TestConfigFileErrors checks that a config file that cannot be used is
// an error of one line naming the file, the line and the problem (exit
// 2); internal/flagfile tests every problem.
func TestConfigFileErrors(t *testing.T) {
	log := filepath.Join("..", "testdata", "logs", "combined.log")
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("offline: true\n\nfail-onn: spoofed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runInMemory(t, "", "logs", "--no-cache", "--config", cfg, log)
	if code != fail.ExitUsage || out != "" {
		t.Errorf("exit %d, stdout %q; want 2 and nothing", code, out)
	}
	want := "lohibot-audit: error: config file " + cfg + `: line 3: unknown key "fail-onn" (keys are flag names, such as log-format)` + "\n"
	if errOut != want {
		t.Errorf("stderr %q\nwant %q", errOut, want)
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
	if code != fail.ExitOK || !strings.HasPrefix(out, "ip,verdict,") {
		t.Errorf("exit %d, stdout %.40q, stderr %q", code, out, errOut)
	}
}
