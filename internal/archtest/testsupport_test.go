package archtest

import (
	"path/filepath"
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
	checked := 0
	walkImports(t, root, false, func(p string, imports []string) {
		if testSupport(module + "/" + filepath.ToSlash(filepath.Dir(p[len(root)+1:]))) {
			return
		}
		checked++
		for _, ip := range imports {
			if testSupport(ip) {
				t.Errorf("%s imports the test-support package %s", p, ip)
			}
		}
	})
	// A walk that finds (almost) nothing would pass vacuously.
	if checked < 100 {
		t.Fatalf("only %d product files checked: the walk is broken", checked)
	}
}
