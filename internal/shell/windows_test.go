package shell

import "testing"

// TestWindowsCorpus runs the cases of this family's rules (windows.go).
func TestWindowsCorpus(t *testing.T) { runCorpus(t, "windows") }
