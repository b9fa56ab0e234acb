package shell

import "testing"

// TestDiskCorpus runs the cases of this family's rules (disk.go).
func TestDiskCorpus(t *testing.T) { runCorpus(t, "disk") }
