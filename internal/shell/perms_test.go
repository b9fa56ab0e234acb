package shell

import "testing"

// TestPermsCorpus runs the cases of this family's rules (perms.go).
func TestPermsCorpus(t *testing.T) { runCorpus(t, "perms") }
