package archtest

import (
	"go/ast"
	"go/token"
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
		walkSource(t, root, false, func(f goFile) {
			dir := filepath.Dir(f.Path)
			ast.Inspect(f.File, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if n.Sel.Name != "AppendDecision" {
						return true
					}
					calls++
					if !allowed[dir] {
						t.Errorf("%s: %s uses the audit writer; only internal/runner writes decisions", f.Fset.Position(n.Pos()), dir)
					}
				case *ast.BasicLit:
					if n.Kind == token.STRING && strings.Contains(strings.ToUpper(n.Value), "INTO AUDIT") && dir != storeDir {
						t.Errorf("%s: %s writes the audit table directly", f.Fset.Position(n.Pos()), dir)
					}
				}
				return true
			})
		})
	}
	if calls == 0 {
		t.Fatal("no use of AppendDecision found: the scan is broken")
	}
}
