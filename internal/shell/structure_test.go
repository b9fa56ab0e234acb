package shell

import "testing"

// TestStructureCorpus runs the cases of this family's rules (structure.go).
func TestStructureCorpus(t *testing.T) { runCorpus(t, "structure", "w09-forkbombs") }
