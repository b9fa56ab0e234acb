package dispatch

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
)

// BenchmarkDispatch100 runs 100 script tasks (`true`) through 4
// concurrent workers (and, for comparison, through one), end to end: claim, token, spawn of a real worker
// process (this test binary), hello on the worker socket, the step
// decided, audited and run by the host, complete.
//
// Reported, from the store's own timestamps:
//   - tasks/s: 100 / (last run finished − first run started);
//   - spawn-ms/task: mean time from a run's claim to the host receiving
//     its first shell request (token minted, process spawned, Go runtime
//     up, token read from fd 3, socket dialled, hello checked);
//   - step-ms/task: mean time of the step itself (gate, audit append
//     with fsync, /bin/sh -c true);
//   - run-ms/task: mean claim-to-finish time of a run.
//
// Run without -race: go test -run '^$' -bench Dispatch100 ./internal/dispatch/
func BenchmarkDispatch100(b *testing.B) {
	for _, workers := range []int{4, 1} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) { benchDispatch(b, workers) })
	}
}

func benchDispatch(b *testing.B, workers int) {
	const tasks = 100
	for b.Loop() {
		h := startHost(b, hostSetup{concurrency: workers, before: func(db *sqlite.DB) {
			for i := range tasks {
				id := fmt.Sprintf("t%03d", i)
				if _, err := db.AddTask(context.Background(), store.Task{ID: id, Title: id, Workspace: store.WorkspaceScratch, Script: []string{"true"}}); err != nil {
					b.Fatal(err)
				}
			}
		}})
		deadline := time.Now().Add(5 * time.Minute)
		for {
			done, err := h.db.ListTasks(context.Background(), store.TaskFilter{Status: store.TaskDone})
			if err != nil {
				b.Fatal(err)
			}
			if len(done) == tasks {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d tasks done", len(done), tasks)
			}
			time.Sleep(5 * time.Millisecond)
		}
		var first, last time.Time
		var spawn, step, run time.Duration
		for i := range tasks {
			runs, err := h.db.TaskRuns(context.Background(), fmt.Sprintf("t%03d", i))
			if err != nil || len(runs) != 1 || len(runs[0].Steps) != 1 {
				b.Fatalf("task %d: %+v, %v", i, runs, err)
			}
			r := runs[0]
			if first.IsZero() || r.Started.Before(first) {
				first = r.Started
			}
			last = slices.MaxFunc([]time.Time{last, r.Finished}, time.Time.Compare)
			spawn += r.Steps[0].Started.Sub(r.Started)
			step += r.Steps[0].Finished.Sub(r.Steps[0].Started)
			run += r.Finished.Sub(r.Started)
		}
		h.stop(b)
		b.ReportMetric(tasks/last.Sub(first).Seconds(), "tasks/s")
		b.ReportMetric(float64(spawn.Milliseconds())/tasks, "spawn-ms/task")
		b.ReportMetric(float64(step.Microseconds())/1000/tasks, "step-ms/task")
		b.ReportMetric(float64(run.Milliseconds())/tasks, "run-ms/task")
	}
}
