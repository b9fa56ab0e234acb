package shell

import "testing"

// TestRawCorpus runs the cases of this family's rules (raw.go).
func TestRawCorpus(t *testing.T) { runCorpus(t, "tricks", "w01-raw", "malformed") }
