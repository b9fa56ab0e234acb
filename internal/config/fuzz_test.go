package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that Parse never panics and that it returns either a
// config or an error matching ErrInvalid, never both or neither. The
// golden inputs seed it.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/parse/*.yaml")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, _, err := Parse(data, "fuzz.yaml")
		if (cfg == nil) == (err == nil) {
			t.Fatalf("Parse returned config %v and error %v", cfg != nil, err)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Fatalf("error %v does not match ErrInvalid", err)
		}
	})
}
