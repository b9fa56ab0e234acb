package storetest

import (
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/store"
)

// RunProcesses runs the process-record suite: records read back as
// written (times Equal), oldest first, and forgetting one leaves the
// others; forgetting an unknown id is no error; an id is recorded once;
// every machine's records are listed (the fence picks its own). open
// returns a new, empty store for each subtest; if it is an io.Closer,
// RunProcesses closes it when the subtest ends.
func RunProcesses(t *testing.T, open func(t *testing.T) store.Processes) {
	t.Helper()
	runCases(t, open, processTests)
}

var processTests = []testCase[store.Processes]{
	{"record, list, forget", func(t *testing.T, s store.Processes) {
		ctx := t.Context()
		at := time.Date(2026, 12, 2, 3, 4, 5, 6, time.UTC)
		a := store.Process{ID: "a", Spawner: "h1", SpawnerPID: 10, SpawnerStart: 1 << 40, Machine: "m1", Boot: "boot", PID: 11, Start: 12, PGID: 11,
			Sandboxed: true, Owner: "cron:job,run=r1", Run: "cron:r1", What: "sh -c true", TempDir: "/state/sandbox/call-1", Started: at}
		b := a
		b.ID, b.PID, b.Sandboxed, b.Started, b.Machine = "b", 13, false, at.Add(time.Second), "m2"
		must(t, "record b", s.RecordProcess(ctx, b))
		must(t, "record a", s.RecordProcess(ctx, a))
		if err := s.RecordProcess(ctx, a); err == nil {
			t.Error("recording an id twice succeeded")
		}
		got, err := s.ListProcesses(ctx)
		must(t, "list", err)
		if len(got) != 2 || !sameProcess(got[0], a) || !sameProcess(got[1], b) {
			t.Fatalf("list: %+v", got)
		}
		must(t, "forget a", s.ForgetProcess(ctx, "a"))
		must(t, "forget unknown", s.ForgetProcess(ctx, "nope"))
		got, err = s.ListProcesses(ctx)
		must(t, "list", err)
		if len(got) != 1 || got[0].ID != "b" {
			t.Fatalf("after forget: %+v", got)
		}
	}},
}

func sameProcess(a, b store.Process) bool {
	at, bt := a.Started, b.Started
	a.Started, b.Started = time.Time{}, time.Time{}
	return a == b && at.Equal(bt)
}
