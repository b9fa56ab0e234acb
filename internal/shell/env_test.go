package shell

import "testing"

// TestEnvCorpus runs the cases of this family's rules (env.go).
func TestEnvCorpus(t *testing.T) { runCorpus(t, "env") }
