package shell

import "testing"

// TestGitCorpus runs the cases of this family's rules (git.go).
func TestGitCorpus(t *testing.T) { runCorpus(t, "git") }
