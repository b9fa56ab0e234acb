package shell

import "testing"

// TestPackagesCorpus runs the cases of this family's rules (packages.go).
func TestPackagesCorpus(t *testing.T) { runCorpus(t, "packages") }
