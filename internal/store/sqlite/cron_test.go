package sqlite

import (
	"testing"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/storetest"
)

func TestCronConformance(t *testing.T) {
	storetest.RunCron(t, func(t *testing.T) store.CronStore { return openTest(t) })
}
