package shell

import "testing"

// TestInterpCorpus runs the cases of this family's rules (interp.go).
func TestInterpCorpus(t *testing.T) { runCorpus(t, "exec", "w04-channels", "w05-inline") }
