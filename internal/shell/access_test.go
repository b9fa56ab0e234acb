package shell

import "testing"

// TestAccessCorpus runs the cases of this family's rules (access.go).
func TestAccessCorpus(t *testing.T) { runCorpus(t, "safe", "w10-false-alarms") }
