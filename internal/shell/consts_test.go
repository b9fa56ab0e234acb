package shell

import "testing"

// TestConstsCorpus runs the cases of this family's rules (consts.go).
func TestConstsCorpus(t *testing.T) { runCorpus(t, "w06-unnamed") }
