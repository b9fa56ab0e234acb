package shell

import "testing"

// TestNetworkCorpus runs the cases of this family's rules (network.go).
func TestNetworkCorpus(t *testing.T) { runCorpus(t, "network", "remote") }
