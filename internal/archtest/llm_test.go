package archtest

import (
	"go/ast"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnlyAdapterImportsOpenAI: the openai-go SDK is large and reads
// OPENAI_* variables through its NewClient, so internal/llm/openai is
// the only package that may import it (tests included: llmtest is an
// independent implementation of the wire protocol on purpose).
func TestOnlyAdapterImportsOpenAI(t *testing.T) {
	root := ".."
	allowed := filepath.Join(root, "llm", "openai")
	checked := walkImports(t, root, true, func(path string, imports []string) {
		for _, p := range imports {
			if strings.HasPrefix(p, "github.com/openai/") && filepath.Dir(path) != allowed {
				t.Errorf("%s imports %s; only internal/llm/openai may", path, p)
			}
		}
	})
	if checked == 0 {
		t.Fatal("no source files checked")
	}
}

// TestGuardianNoAmbientIdentity holds the guardian, which decides
// verdicts, to the decision packages' rule: no environment, no
// processes, no HTTP or SQL of its own (it reaches the model only
// through llm.Client).
func TestGuardianNoAmbientIdentity(t *testing.T) {
	checkNoAmbientIdentity(t, filepath.Join("..", "guardian"))
}

// TestAgentsNoEnvironment: the packages that carry agents' work — the
// model loop, the model adapter, the MCP client and server — never read
// or change the process environment: the API key, the servers' children's
// environments and the owners all come from the edge. (They do run
// processes and speak HTTP, so the decision packages' import rule does
// not apply.)
func TestAgentsNoEnvironment(t *testing.T) {
	for _, p := range []string{"agent", "llm", filepath.Join("llm", "openai"), "mcpclient", "mcpserve", "guardian"} {
		t.Run(p, func(t *testing.T) { checkNoEnvironment(t, filepath.Join("..", p)) })
	}
}

// checkNoEnvironment fails on a use of the process environment (os or
// syscall Getenv, Environ, Setenv, …) in the package in dir.
func checkNoEnvironment(t *testing.T, dir string) {
	t.Helper()
	packageGo(t, dir, func(f goFile) {
		ast.Inspect(f.File, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && (x.Name == "os" || x.Name == "syscall") {
				switch sel.Sel.Name {
				case "Getenv", "LookupEnv", "Environ", "ExpandEnv", "Setenv", "Unsetenv", "Clearenv":
					t.Errorf("%s: %s.%s", f.Path, x.Name, sel.Sel.Name)
				}
			}
			return true
		})
	})
}
