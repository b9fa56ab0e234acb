package shell

import "testing"

// TestProcessCorpus runs the cases of this family's rules (process.go).
func TestProcessCorpus(t *testing.T) { runCorpus(t, "process", "system") }
