package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneWriterOfTheAudit: the runner is the only writer of decisions
// (issue 15): no other package calls the audit writer (AppendDecision),
// not even as a method value, and none but the stores write the audit
// table itself: the SQL both stores run (store/sqldb) holds the one
// statement that does, its committer's. The records of a request's life
// are the store's own, written inside its request methods. The conformance suite
// (store/storetest) exercises the writer, and tests may use it.
func TestOneWriterOfTheAudit(t *testing.T) {
	allowed := map[string]bool{
		filepath.Join("..", "runner"):             true,
		filepath.Join("..", "store", "storetest"): true,
	}
	// The SQLite and PostgreSQL stores write audit records through the
	// committer they share, with the request state changes.
	storeDir := filepath.Join("..", "store", "sqldb")
	calls := 0
	for _, root := range []string{"..", filepath.Join("..", "..", "cmd")} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			dir := filepath.Dir(path)
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if n.Sel.Name != "AppendDecision" {
						return true
					}
					calls++
					if !allowed[dir] {
						t.Errorf("%s: %s uses the audit writer; only internal/runner writes decisions", fset.Position(n.Pos()), dir)
					}
				case *ast.BasicLit:
					if n.Kind == token.STRING && strings.Contains(strings.ToUpper(n.Value), "INTO AUDIT") && dir != storeDir {
						t.Errorf("%s: %s writes the audit table directly", fset.Position(n.Pos()), dir)
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if calls == 0 {
		t.Fatal("no use of AppendDecision found: the scan is broken")
	}
}
