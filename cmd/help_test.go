package cmd

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/manual"
	"github.com/spf13/cobra"
)

// Every help file of the manual belongs to a command of the program, and
// every command that says more than its one line says it from there.
func TestHelpFilesAndCommandsAgree(t *testing.T) {
	root := newRootCmd(&Env{})
	if unused := manual.Describe(root, manualValues(crawler.DefaultProfile())); len(unused) > 0 {
		t.Errorf("help files no command takes: %v", unused)
	}
	// Commands that say only their one line: groups and the trivial.
	short := map[string]bool{"lohibot-audit format": true, "lohibot-audit ips show": true, "lohibot-audit version": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := c.CommandPath()
		if strings.HasPrefix(path, "lohibot-audit completion") || path == "lohibot-audit help" {
			return
		}
		if (c.Long == "" && c.Example == "") != short[path] {
			t.Errorf("%s: Long %d bytes, Example %d bytes", path, len(c.Long), len(c.Example))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// No command says its description or examples in code: they are the
// manual's, where Describe would overwrite a text said here, or a command
// without a file would keep it unseen by the test above.
func TestNoHelpTextInCode(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files here: %v", err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if kv, ok := n.(*ast.KeyValueExpr); ok {
				if id, ok := kv.Key.(*ast.Ident); ok && (id.Name == "Long" || id.Name == "Example") {
					t.Errorf("%s: %s in code; put it in internal/manual/help", fset.Position(kv.Pos()), id.Name)
				}
			}
			return true
		})
	}
}
