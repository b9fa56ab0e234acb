package archtest

import (
	"go/ast"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneWayToStartAProcess fails if a non-test file outside
// internal/sandbox can start a process: imports os/exec, or calls
// os.StartProcess, syscall.ForkExec, syscall.StartProcess or
// syscall.Exec. Every process warden starts for an agent runs in the
// sandbox (invariant 11), so the sandbox is the only place that may.
// The exception is internal/cli, the operator's edge, which starts the
// operator's own tools (a browser for a login link, the service
// manager) and never anything for an agent; and internal/testfs, a
// test-support package (it mounts the small file systems of the fault
// tests) that no non-test code imports (TestTestSupportOnlyInTests); and
// internal/hookrun, the warden-hook binary's edge, which with no host
// running starts the warden binary beside it (an absolute path, no
// shell, the hook's own payload) and never anything for an agent.
func TestOneWayToStartAProcess(t *testing.T) {
	banned := map[string]bool{"os.StartProcess": true, "syscall.ForkExec": true, "syscall.StartProcess": true, "syscall.Exec": true}
	sandboxed := 0
	walkSource(t, filepath.Join("..", ".."), false, func(f goFile) {
		slash := filepath.ToSlash(f.Path)
		if strings.HasPrefix(slash, "../../internal/cli/") || strings.HasPrefix(slash, "../../internal/testfs/") || strings.HasPrefix(slash, "../../internal/hookrun/") {
			return
		}
		inSandbox := strings.HasPrefix(slash, "../../internal/sandbox/")
		for _, p := range f.imports() {
			if p == "os/exec" {
				if inSandbox {
					sandboxed++
				} else {
					t.Errorf("%s imports os/exec: start processes through internal/sandbox", f.Path)
				}
			}
		}
		if inSandbox {
			return
		}
		ast.Inspect(f.File, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && banned[id.Name+"."+sel.Sel.Name] {
				t.Errorf("%s: %s.%s: start processes through internal/sandbox", f.Fset.Position(sel.Pos()), id.Name, sel.Sel.Name)
			}
			return true
		})
	})
	if sandboxed == 0 {
		t.Fatal("internal/sandbox does not import os/exec: the scan is broken")
	}
}
