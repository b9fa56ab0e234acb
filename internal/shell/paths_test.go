package shell

import "testing"

// TestPathsCorpus runs the cases of this family's rules (paths.go).
func TestPathsCorpus(t *testing.T) { runCorpus(t, "w07-paths") }
