package cli

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra/doc"
)

// TestCLIReference keeps docs/cli/, the command reference, generated from
// the command tree: a flag or command added without regenerating the
// pages fails here. Regenerate with go test ./internal/cli -run
// TestCLIReference -update.
func TestCLIReference(t *testing.T) {
	const dir = "../../docs/cli"
	got := t.TempDir()
	root := newRootCmd()
	root.DisableAutoGenTag = true
	link := func(name string) string { return name } // pages link to each other in the same folder
	if err := doc.GenMarkdownTreeCustom(root, got, func(string) string { return "" }, link); err != nil {
		t.Fatal(err)
	}
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" { // the flag of the cli_test package, in the same binary
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(dir, os.DirFS(got)); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := readTree(t, dir)
	have := readTree(t, got)
	for name, body := range have {
		if w, ok := want[name]; !ok {
			t.Errorf("docs/cli/%s is missing: go test ./internal/cli -run TestCLIReference -update", name)
		} else if w != body {
			t.Errorf("docs/cli/%s is out of date: go test ./internal/cli -run TestCLIReference -update", name)
		}
	}
	for name := range want {
		if _, ok := have[name]; !ok {
			t.Errorf("docs/cli/%s documents a command that no longer exists: go test ./internal/cli -run TestCLIReference -update", name)
		}
	}
}

// readTree reads the .md files of dir by name.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}
