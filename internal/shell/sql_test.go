package shell

import "testing"

// TestSqlCorpus runs the cases of this family's rules (sql.go).
func TestSqlCorpus(t *testing.T) { runCorpus(t, "sql") }
