package cmd

import (
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// TestWriteToDevFull runs every command that writes, with its output on
// /dev/full: each exits 3 and says in one error line what it could not
// write, whatever its exit would have been.
func TestWriteToDevFull(t *testing.T) {
	log := filepath.Join("..", "testdata", "logs", "combined.log")
	list := testutil.TempFile(t, "ips.json", `["79.139.58.98"]`)
	blocked := robotsFixture("lohisoftbot-blocked.txt")
	off := []string{"--offline", "--no-cache", "--ip-list", list}

	// ips update fetches over HTTPS: the program trusts the test server's
	// certificate through SSL_CERT_FILE.
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `["79.139.58.98"]`)
	}))
	defer srv.Close()
	certFile := filepath.Join(t.TempDir(), "cert.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		args []string
	}{
		{"logs json", append([]string{"logs", "--format", "json", log}, off...)},
		{"logs table", append([]string{"logs", "--format", "table", log}, off...)},
		{"logs csv", append([]string{"logs", "--format", "csv", log}, off...)},
		{"logs fail-on", append([]string{"logs", "--format", "json", "--fail-on", "any", log}, off...)},
		{"verify", append([]string{"verify", "--format", "json", "79.139.58.98"}, off...)},
		{"verify table", append([]string{"verify", "--format", "table", "79.139.58.98"}, off...)},
		{"emit", append([]string{"emit", "nftables", log}, off...)},
		{"emit -o /dev/full", append([]string{"emit", "nftables", "-o", "/dev/full", log}, off...)},
		{"robots test", []string{"robots", "test", blocked, "/", "/a"}},
		{"robots test json", []string{"robots", "test", "--format", "json", blocked, "/"}},
		{"robots check", []string{"robots", "check", blocked}},
		{"robots check failing", []string{"robots", "check", "--expect", "allowed", blocked}},
		{"ips show", append([]string{"ips", "show"}, off[1:]...)},
		{"ips show json", append([]string{"ips", "show", "--format", "json"}, off[1:]...)},
		{"ips update", []string{"ips", "update", "--ip-list", srv.URL + "/ips.json"}},
		{"version", []string{"version"}},
		{"--version", []string{"--version"}},
		{"help", []string{"logs", "--help"}},
		{"completion", []string{"completion", "bash"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := append(binaryEnv(t), "SSL_CERT_FILE="+certFile)
			got := runBinary(t, env, devFull(t), tc.args...)
			if got.code != fail.ExitIncomplete {
				t.Errorf("exit %d, want 3; stderr:\n%s", got.code, got.stderr)
			}
			var errs []string
			for _, line := range strings.Split(strings.TrimSuffix(got.stderr, "\n"), "\n") {
				if strings.HasPrefix(line, "lohibot-audit: error: ") {
					errs = append(errs, line)
				}
			}
			if len(errs) != 1 || !strings.Contains(errs[0], "cannot write") || !strings.Contains(errs[0], "no space left on device") {
				t.Errorf("error lines %q, want one saying what could not be written and why", errs)
			}
		})
	}
}

// emitUnwritable is a log with many spoofers: its rules do not fit in a
// few KiB.
func emitUnwritable(t *testing.T) string {
	var b strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&b, "203.0.%d.%d - - [01/Dec/2026:10:00:00 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"LohiSoftBot/1.0\"\n", 113+i/250, i%250+1)
	}
	return testutil.TempFile(t, "spoofers.log", b.String())
}

// TestEmitOutputUnwritable runs emit -o into a read-only directory and
// onto a full file system (mounts in a private mount namespace, so the
// test needs no privilege on the host): exit 3, one error line, the old
// file as it was, and no temporary file left behind.
func TestEmitOutputUnwritable(t *testing.T) {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		testutil.Missing(t, "unshare is not installed: %v", err)
	}
	if out, err := exec.Command(unshare, "-rm", "true").CombinedOutput(); err != nil {
		testutil.Missing(t, "cannot make a mount namespace (unshare -rm): %v %s", err, out)
	}
	bin := auditBinary(t)
	log := emitUnwritable(t)
	list := testutil.TempFile(t, "ips.json", `["79.139.58.98"]`)
	tests := []struct {
		name  string
		mount string // shell: make $D unwritable
		want  string
	}{
		{"read-only directory", `mount --bind "$D" "$D" && mount -o remount,bind,ro "$D"`, "read-only file system"},
		{"full file system", `mount -t tmpfs -o size=12k tmpfs "$D" && printf 'old rules\n' > "$D/rules.nft"`, "no space left on device"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.name == "read-only directory" {
				if err := os.WriteFile(filepath.Join(dir, "rules.nft"), []byte("old rules\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			script := tc.mount + `
"$BIN" emit nftables --offline --no-cache --ip-list "$LIST" -o "$D/rules.nft" "$LOG"
echo "exit $?"
echo "--- files"
ls -A "$D"
echo "--- rules"
cat "$D/rules.nft"
`
			cmd := exec.Command(unshare, "-rm", "sh", "-c", script)
			cmd.Env = append(binaryEnv(t), "D="+dir, "BIN="+bin, "LIST="+list, "LOG="+log)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			text := string(out)
			head, rest, _ := strings.Cut(text, "--- files\n")
			files, rules, _ := strings.Cut(rest, "--- rules\n")
			if !strings.HasSuffix(head, "exit 3\n") {
				t.Errorf("want exit 3:\n%s", text)
			}
			if strings.Count(head, "lohibot-audit: error: ") != 1 || !strings.Contains(head, "cannot write the rules to "+dir+"/rules.nft") || !strings.Contains(head, tc.want) {
				t.Errorf("want one error line saying the rules could not be written (%s):\n%s", tc.want, head)
			}
			if files != "rules.nft\n" {
				t.Errorf("files left in the directory: %q, want only the old rules.nft", files)
			}
			if rules != "old rules\n" {
				t.Errorf("the old rules changed: %q", rules)
			}
		})
	}
}
