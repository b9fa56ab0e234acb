package archtest

import (
	"go/ast"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// decisionPackages decide who may do what. None of them may learn who is
// asking from the process: not from the environment, not by running
// programs, serving HTTP or querying SQL (DESIGN.md invariant 1).
var decisionPackages = []string{"owner", "action", "policy", "config", "gate", "grant", "shell", "broker", "hook"}

// TestInvariant01_NoAmbientIdentity fails if a non-test file of a
// decision package reads or writes the process environment or imports a
// package that runs processes, serves HTTP or talks SQL.
func TestInvariant01_NoAmbientIdentity(t *testing.T) {
	for _, p := range decisionPackages {
		dir := filepath.Join("..", p)
		if _, err := os.Stat(dir); os.IsNotExist(err) && p == "broker" {
			continue // not written yet
		}
		t.Run(p, func(t *testing.T) { checkNoAmbientIdentity(t, dir) })
	}
}

// checkNoAmbientIdentity fails if the package in dir imports a package
// that runs processes, serves HTTP or talks SQL, or uses the process
// environment.
func checkNoAmbientIdentity(t *testing.T, dir string) {
	t.Helper()
	bannedImports := map[string]bool{"os/exec": true, "net/http": true, "database/sql": true}
	bannedCalls := map[string]bool{
		"os.Getenv": true, "os.LookupEnv": true, "os.Environ": true, "os.ExpandEnv": true,
		"os.Setenv": true, "os.Unsetenv": true, "os.Clearenv": true,
		"syscall.Getenv": true, "syscall.Environ": true, "syscall.Setenv": true,
	}
	packageGo(t, dir, func(f goFile) {
		local := map[string]string{} // import name in file -> path
		for _, imp := range f.File.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if bannedImports[path] {
				t.Errorf("%s imports %s", f.Fset.Position(imp.Pos()), path)
			}
			n := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				n = imp.Name.Name
			}
			local[n] = path
		}
		ast.Inspect(f.File, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok {
				if path, ok := local[id.Name]; ok && bannedCalls[path+"."+sel.Sel.Name] {
					t.Errorf("%s uses %s.%s", f.Fset.Position(sel.Pos()), path, sel.Sel.Name)
				}
			}
			return true
		})
	})
}
