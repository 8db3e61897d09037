package cmd

import (
	"archive/zip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// TestGoInstallReportsModuleVersion installs the program as a user does,
// `go install github.com/lohisoft/lohibot-audit/cmd/lohibot-audit@VERSION`,
// from a module proxy in a directory (this tree as that version, the
// dependencies from the module cache), and checks that --version and
// `version` say VERSION, not "dev".
func TestGoInstallReportsModuleVersion(t *testing.T) {
	const module = "github.com/lohisoft/lohibot-audit"
	// A version of its own for each run: the module cache keeps what it
	// once extracted, and other runs may share it.
	version := fmt.Sprintf("v1.2.3-test.%d.%d", os.Getpid(), time.Now().UnixNano())
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("no go command on PATH")
	}
	out, err := exec.Command(goTool, "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	modcache := strings.TrimSpace(string(out))
	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	at := filepath.Join(proxy, module, "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteFile(t, filepath.Join(at, "list"), version+"\n")
	testutil.WriteFile(t, filepath.Join(at, version+".info"), `{"Version":"`+version+`","Time":"2026-12-01T00:00:00Z"}`)
	testutil.WriteFile(t, filepath.Join(at, version+".mod"), string(gomod))
	zipModule(t, "..", module+"@"+version, filepath.Join(at, version+".zip"))
	t.Cleanup(func() {
		// Out of the shared module cache again (it keeps files read-only).
		dir := filepath.Join(modcache, module+"@"+version)
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
		os.RemoveAll(dir)
		dl, _ := filepath.Glob(filepath.Join(modcache, "cache", "download", module, "@v", version+".*"))
		for _, f := range dl {
			os.Remove(f)
		}
	})

	env := append(os.Environ(),
		// This tree as the version, its dependencies from the module cache.
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(modcache, "cache", "download")),
		"GOSUMDB=off", "GOFLAGS=", "GOTOOLCHAIN=local", "GOBIN="+filepath.Join(tmp, "bin"))
	install := exec.Command(goTool, "install", module+"/cmd/lohibot-audit@"+version)
	install.Env = env
	install.Dir = tmp
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install %s@%s: %v\n%s", module, version, err, out)
	}
	bin := filepath.Join(tmp, "bin", "lohibot-audit")
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("lohibot-audit %s: %v\n%s", args[0], err, out)
		}
		if got, want := strings.TrimSpace(string(out)), "lohibot-audit "+version; got != want {
			t.Errorf("lohibot-audit %s = %q, want %q", args[0], got, want)
		}
	}
}

// zipModule writes the module zip of the tree at root (as the go command
// lays it out: every file under prefix/), leaving out hidden directories
// and what builds and releases generate.
func zipModule(t *testing.T, root, prefix, out string) {
	t.Helper()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch {
			case rel == ".":
				return nil
			case strings.HasPrefix(d.Name(), "."), rel == "dist", rel == "completions", rel == "manpages", rel == "bench-out":
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || rel == "lohibot-audit" || strings.HasSuffix(rel, ".test") {
			return nil
		}
		w, err := zw.Create(prefix + "/" + rel)
		if err != nil {
			return err
		}
		src, err := os.Open(path)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(w, src)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatalf("zipping the module: %v", err)
	}
}
