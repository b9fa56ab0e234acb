package shell

import "testing"

// TestDeleteCorpus runs the cases of this family's rules (delete.go).
func TestDeleteCorpus(t *testing.T) { runCorpus(t, "delete") }
