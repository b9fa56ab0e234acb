package shell

import "testing"

// TestWardenCorpus runs the cases of this family's rules (warden.go).
func TestWardenCorpus(t *testing.T) { runCorpus(t, "warden") }
