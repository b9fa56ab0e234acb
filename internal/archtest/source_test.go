package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// goFile is one parsed Go file: its path as walked and its syntax, whose
// positions Fset reads.
type goFile struct {
	Path string
	Fset *token.FileSet
	File *ast.File
}

// walkGo parses every Go file below root with mode (test files only if
// tests) and calls visit with each. Hidden directories (.git) hold none
// of warden's code and are not entered. It returns how many files it
// visited: a test whose walk found nothing would pass vacuously, so
// callers check it.
func walkGo(t *testing.T, root string, tests bool, mode parser.Mode, visit func(goFile)) int {
	t.Helper()
	fset := token.NewFileSet()
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || !tests && strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, mode)
		if err != nil {
			return err
		}
		n++
		visit(goFile{path, fset, f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// walkSource is walkGo over whole files, for tests that read code.
func walkSource(t *testing.T, root string, tests bool, visit func(goFile)) int {
	t.Helper()
	return walkGo(t, root, tests, parser.SkipObjectResolution, visit)
}

// walkImports is walkGo reading only the import lists, for tests about
// imports: visit gets each file's path and the paths it imports.
func walkImports(t *testing.T, root string, tests bool, visit func(path string, imports []string)) int {
	t.Helper()
	return walkGo(t, root, tests, parser.ImportsOnly, func(f goFile) { visit(f.Path, f.imports()) })
}

// packageGo parses the non-test Go files of the one package in dir (not
// the packages below it) and calls visit with each; it fails the test
// when dir holds none.
func packageGo(t *testing.T, dir string, visit func(goFile)) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		visit(goFile{name, fset, f})
	}
	if checked == 0 {
		t.Fatalf("no source files in %s", dir)
	}
}

// imports returns the paths f imports.
func (f goFile) imports() []string {
	out := make([]string, 0, len(f.File.Imports))
	for _, imp := range f.File.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		out = append(out, p)
	}
	return out
}
