package shell

import "testing"

// TestLaunchCorpus runs the cases of this family's rules (launch.go).
func TestLaunchCorpus(t *testing.T) { runCorpus(t, "launchers", "w02-options", "w03-wrappers") }
