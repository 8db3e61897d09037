package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// claimLine is one access-log line claiming the crawler from a spoofer.
const claimLine = `203.0.113.7 - - [01/Dec/2026:06:03:42 +0100] "GET / HTTP/1.1" 200 5 "-" "LohiSoftBot/1.0"` + "\n"

// inputsReport runs logs --format json over args and returns the exit
// code, the files and lines the report counts, its warnings and stderr.
func inputsReport(t *testing.T, args ...string) (code, files, lines int, warnings []string, stderr string) {
	t.Helper()
	code, out, errOut := runInMemory(t, "", append([]string{"logs", "--offline", "--no-cache", "--format", "json", "--log-format", "combined"}, args...)...)
	if code != 0 {
		return code, 0, 0, nil, errOut
	}
	var rep struct {
		Summary struct {
			Files, Lines int
		}
		Warnings []string
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	return code, rep.Summary.Files, rep.Summary.Lines, rep.Warnings, errOut
}

func hasWarning(ws []string, part string) bool {
	for _, w := range ws {
		if strings.Contains(w, part) {
			return true
		}
	}
	return false
}

// A fresh host: nginx wrote access.log, nothing is rotated yet. The
// pattern for the rotated logs matches nothing, which a cron run takes in
// its stride; a concrete name that does not exist stays a usage error.
func TestLogsPatternMatchingNothing(t *testing.T) {
	dir := t.TempDir()
	current := filepath.Join(dir, "access.log")
	testutil.WriteFile(t, current, claimLine)
	rotated := filepath.Join(dir, "access.log.*")

	code, files, lines, warnings, errOut := inputsReport(t, current, rotated)
	if code != 0 {
		t.Fatalf("exit %d, want 0: %s", code, errOut)
	}
	if files != 1 || lines != 1 {
		t.Errorf("read %d files, %d lines; want 1, 1", files, lines)
	}
	if !hasWarning(warnings, "no log file matches "+rotated) {
		t.Errorf("warnings %q do not say the pattern matched nothing", warnings)
	}
	if !strings.Contains(errOut, "no log file matches") {
		t.Errorf("stderr does not say the pattern matched nothing: %s", errOut)
	}

	// Only patterns, none matching: nothing to read is a usage error.
	code, _, _, _, errOut = inputsReport(t, rotated, filepath.Join(dir, "other-*.log"))
	if code != fail.ExitUsage || !strings.Contains(errOut, "no log file matches") {
		t.Errorf("patterns matching nothing: exit %d, %s; want exit 2 naming them", code, errOut)
	}
	// A concrete name that does not exist: exit 2.
	code, _, _, _, errOut = inputsReport(t, current, filepath.Join(dir, "access.log.1"))
	if code != fail.ExitUsage || !strings.Contains(errOut, "access.log.1") {
		t.Errorf("missing access.log.1: exit %d, %s; want exit 2 naming it", code, errOut)
	}
	// A malformed pattern: exit 2.
	code, _, _, _, errOut = inputsReport(t, current, filepath.Join(dir, "access.log.[1"))
	if code != fail.ExitUsage || !strings.Contains(errOut, "bad pattern") {
		t.Errorf("bad pattern: exit %d, %s; want exit 2", code, errOut)
	}
}

// After rotations the pattern reads every rotated log, plain and
// compressed; a file named and matched is read once; a name that holds a
// pattern character and exists is that file.
func TestLogsPatternMatches(t *testing.T) {
	dir := t.TempDir()
	current := filepath.Join(dir, "access.log")
	testutil.WriteFile(t, current, claimLine)
	testutil.WriteFile(t, filepath.Join(dir, "access.log.1"), claimLine+claimLine)
	gz, err := os.ReadFile("../testdata/sample/access.log.1.gz")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "access.log.2.gz"), gz, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "access.log.old"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, _, gzLines, _, _ := inputsReport(t, filepath.Join(dir, "access.log.2.gz"))
	if gzLines == 0 {
		t.Fatal("the sample .gz has no lines")
	}

	code, files, lines, warnings, errOut := inputsReport(t, current, filepath.Join(dir, "access.log*"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if files != 3 || lines != 3+gzLines {
		t.Errorf("read %d files, %d lines; want 3 files (access.log once, the directory left out), %d lines", files, lines, 3+gzLines)
	}
	if hasWarning(warnings, "matches") {
		t.Errorf("warnings %q, want none about patterns", warnings)
	}

	odd := filepath.Join(dir, "we*ird[1].log")
	testutil.WriteFile(t, odd, claimLine)
	if code, files, _, _, errOut := inputsReport(t, odd); code != 0 || files != 1 {
		t.Errorf("a file named %s: exit %d, %d files: %s", odd, code, files, errOut)
	}
}

// The nightly rules job on a fresh host: emit over access.log and the
// pattern of its rotations writes rules, exit 0.
func TestEmitPatternMatchingNothing(t *testing.T) {
	dir := t.TempDir()
	current := filepath.Join(dir, "access.log")
	testutil.WriteFile(t, current, claimLine)
	out := filepath.Join(dir, "lohibot.nft")
	code, _, errOut := runInMemory(t, "", "emit", "nftables", "--offline", "--no-cache", "--log-format", "combined",
		current, filepath.Join(dir, "access.log.*"), "-o", out)
	if code != 0 {
		t.Fatalf("emit: exit %d: %s", code, errOut)
	}
	rules, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(rules), "203.0.113.7") {
		t.Errorf("rules (%v) do not block the spoofer:\n%s", err, rules)
	}
	if !strings.Contains(errOut, "no log file matches") {
		t.Errorf("stderr does not say the pattern matched nothing: %s", errOut)
	}
}

// logs --help names every compression it reads, and each one named is
// read; those it does not read are refused naming them.
func TestLogsHelpNamesCompressions(t *testing.T) {
	code, help, _ := runInMemory(t, "", "logs", "--help")
	if code != 0 {
		t.Fatalf("logs --help: exit %d", code)
	}
	help = strings.Join(strings.Fields(help), " ")
	for _, tc := range []struct{ name, file string }{
		{"gzip", "../testdata/sample/access.log.1.gz"},
		{"bzip2", "../parse/testdata/compressed/access.log.bz2"},
		{"xz", "../parse/testdata/compressed/access.log.xz"},
		{"zstd", "../parse/testdata/compressed/access.log.zst"},
	} {
		if !strings.Contains(help, tc.name) {
			t.Errorf("logs --help does not name %s:\n%s", tc.name, help)
		}
		code, _, lines, _, errOut := inputsReport(t, tc.file)
		if code != 0 || lines == 0 {
			t.Errorf("logs %s (%s): exit %d, %d lines: %s", tc.file, tc.name, code, lines, errOut)
		}
	}
	for _, tc := range []struct{ name, file string }{
		{"lz4", "../parse/testdata/compressed/access.log.lz4"},
		{"zip", "../parse/testdata/compressed/access.log.zip"},
	} {
		if code, _, _, _, errOut := inputsReport(t, tc.file); code != fail.ExitIncomplete || !strings.Contains(errOut, tc.name) {
			t.Errorf("logs %s: exit %d, %s; want exit 3 naming %s", tc.file, code, errOut, tc.name)
		}
	}
}
