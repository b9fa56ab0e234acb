package archtest

import (
	"go/ast"
	"go/token"
	"testing"
)

// TestInvariant03_NoInheritedEnvironment fails if a non-test function
// builds an exec.Cmd without assigning its Env in the same function: a
// nil Env inherits warden's whole environment, the bug class invariant 3
// exists to kill.
func TestInvariant03_NoInheritedEnvironment(t *testing.T) {
	found := 0
	walkSource(t, "..", false, func(f goFile) {
		for _, decl := range f.File.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			var calls []token.Pos
			setsEnv := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
						if id, ok := sel.X.(*ast.Ident); ok && id.Name == "exec" && (sel.Sel.Name == "Command" || sel.Sel.Name == "CommandContext") {
							calls = append(calls, n.Pos())
						}
					}
				case *ast.AssignStmt:
					for _, l := range n.Lhs {
						if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Env" {
							setsEnv = true
						}
					}
				}
				return true
			})
			found += len(calls)
			if len(calls) > 0 && !setsEnv {
				for _, c := range calls {
					t.Errorf("%s: exec.Cmd built without setting Env in %s", f.Fset.Position(c), fn.Name.Name)
				}
			}
		}
	})
	if found == 0 {
		t.Fatal("no exec.Command call found: the scan is broken")
	}
}
