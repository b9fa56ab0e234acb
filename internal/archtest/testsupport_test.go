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

// testSupport reports whether an import path is a test-support package
// (storetest, sandboxtest, runnertest, ownertest, the platform fakes,
// testfs, and what lies under them): code that only
// tests may use, some of which does what the product must not (start
// processes, mount file systems).
func testSupport(p string) bool {
	if !strings.HasPrefix(p, module+"/") {
		return false
	}
	for _, el := range strings.Split(p[len(module)+1:], "/") {
		if strings.HasSuffix(el, "test") || el == "testfs" {
			return true
		}
	}
	return false
}

// TestTestSupportOnlyInTests fails if a non-test file of the product
// imports a test-support package; test-support packages may import one
// another.
func TestTestSupportOnlyInTests(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		if testSupport(module + "/" + filepath.ToSlash(filepath.Dir(p[len(root)+1:]))) {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			if ip, _ := strconv.Unquote(imp.Path.Value); testSupport(ip) {
				t.Errorf("%s imports the test-support package %s", p, ip)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A walk that finds (almost) nothing would pass vacuously.
	if checked < 100 {
		t.Fatalf("only %d product files checked: the walk is broken", checked)
	}
}
