package shell

import "testing"

// TestContainersCorpus runs the cases of this family's rules (containers.go).
func TestContainersCorpus(t *testing.T) { runCorpus(t, "containers") }
