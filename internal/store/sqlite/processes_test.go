package sqlite

import (
	"testing"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/storetest"
)

func TestProcessesConformance(t *testing.T) {
	storetest.RunProcesses(t, func(t *testing.T) store.Processes { return openClosed(t) })
}
