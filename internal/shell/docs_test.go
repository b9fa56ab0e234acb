package shell

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestDocs: the generated part of docs/analysis.md is Markdown() — the
// catalogue, program tables and known-safe list the analyser runs on.
func TestDocs(t *testing.T) {
	const file = "../../docs/analysis.md"
	const begin, end = "<!-- BEGIN GENERATED -->\n", "<!-- END GENERATED -->"
	doc, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s has no generated section", file)
	}
	got := Markdown()
	if *update {
		out := append([]byte{}, doc[:i+len(begin)]...)
		out = append(out, got...)
		out = append(out, doc[j:]...)
		if err := os.WriteFile(file, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(doc[i+len(begin):j]) != got {
		t.Errorf("%s is out of date: go test ./internal/shell -run TestDocs -update", file)
	}
	for _, c := range Catalogue() {
		if !strings.Contains(got, "`"+c.Key+"`") {
			t.Errorf("class %s missing from the docs", c.Key)
		}
	}
}
