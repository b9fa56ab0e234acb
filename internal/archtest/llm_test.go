package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
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
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		checked++
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "github.com/openai/") && filepath.Dir(path) != allowed {
				t.Errorf("%s imports %s; only internal/llm/openai may", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
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
