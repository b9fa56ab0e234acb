package shell

import "testing"

// TestPersistenceCorpus runs the cases of this family's rules (persistence.go).
func TestPersistenceCorpus(t *testing.T) { runCorpus(t, "w08-classes") }
