package shell

import "testing"

// TestWritesCorpus runs the cases of this family's rules (writes.go).
func TestWritesCorpus(t *testing.T) { runCorpus(t, "writes", "secrets") }
