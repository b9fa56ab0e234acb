package config

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: the
// Watcher's loop must end when its context does.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
