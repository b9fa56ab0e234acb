package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/store"
)

func openBench(b *testing.B, o Options) *DB {
	b.Helper()
	db, err := OpenWith(context.Background(), filepath.Join(b.TempDir(), "warden.db"), o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

func benchDecision(i int) store.Decision {
	return store.Decision{
		Time:        time.Now(),
		Session:     "web:bench",
		Owner:       json.RawMessage(`{"kind":"web","session":"bench","surface":"console"}`),
		OwnerText:   "web:bench",
		Kind:        action.Shell,
		Payload:     fmt.Sprintf("rm -rf build/%d", i),
		PayloadHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Classes:     []string{"delete.recursive"},
		Verdict:     "allow",
		Rule:        "human.once",
		RequestID:   fmt.Sprintf("req-%d", i),
		By:          "ann",
		Surface:     "web",
	}
}

// BenchmarkAppendDecision is the latency an action waits for its audit
// record: one immediate transaction reading the chain head and
// inserting, committed with the writer's synchronous setting. FULL is
// what Open uses; NORMAL is shown for what durability costs.
func BenchmarkAppendDecision(b *testing.B) {
	for _, sync := range []string{"FULL", "NORMAL"} {
		b.Run("sync="+sync, func(b *testing.B) {
			db := openBench(b, Options{synchronous: sync})
			ctx := b.Context()
			i := 0
			for b.Loop() {
				if _, err := db.AppendDecision(ctx, benchDecision(i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkAppendDecisionParallel appends from many goroutines at once;
// they queue on the single writer connection.
func BenchmarkAppendDecisionParallel(b *testing.B) {
	db := openBench(b, Options{synchronous: "FULL"})
	ctx := b.Context()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := db.AppendDecision(ctx, benchDecision(i)); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
}

// BenchmarkRequestRoundTrip creates a request and resolves it: the
// store's share of ask → answer.
func BenchmarkRequestRoundTrip(b *testing.B) {
	db := openBench(b, Options{synchronous: "FULL"})
	ctx := b.Context()
	now := time.Now()
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("req-%08d", i)
		r := store.Request{
			ID: id, Session: "web:bench", Owner: json.RawMessage(`{"kind":"web","session":"bench"}`), OwnerText: "web:bench",
			Action: action.NewShell("rm -rf build"), Digest: "d", Classes: []string{"delete.recursive"},
			Rule: "ask.attended", Created: now, Deadline: now.Add(time.Minute), Host: "h1",
		}
		if err := db.CreateRequest(ctx, r); err != nil {
			b.Fatal(err)
		}
		if _, err := db.ResolveRequest(ctx, id, store.Resolution{State: store.Answered, Scope: store.Once, Grain: grant.Exact, By: "ann", Surface: "web", At: now}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkVerifyChain verifies a 10,000-record log; allocations per
// op stay per-row (the rows are streamed, not collected).
func BenchmarkVerifyChain(b *testing.B) {
	const n = 10_000
	db := openBench(b, Options{synchronous: "OFF"})
	ctx := b.Context()
	for i := range n {
		if _, err := db.AppendDecision(ctx, benchDecision(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if got, err := db.VerifyChain(ctx); got != n || err != nil {
			b.Fatal(got, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
}

// BenchmarkGroupCommit appends from 1, 16 and 256 concurrent writers,
// with group commit off (MaxBatch 1: one transaction and one fsync per
// record) and on (the default): ns/op is per record, so records per
// second is 1e9 / ns/op.
func BenchmarkGroupCommit(b *testing.B) {
	for _, batch := range []int{1, 0} {
		for _, writers := range []int{1, 16, 256} {
			name := fmt.Sprintf("batch=%s/writers=%d", map[int]string{1: "off", 0: "on"}[batch], writers)
			b.Run(name, func(b *testing.B) {
				db := openBench(b, Options{MaxBatch: batch})
				ctx := b.Context()
				b.SetParallelism((writers + 1) / 2) // RunParallel starts p × GOMAXPROCS goroutines
				if writers == 1 {
					for i := 0; b.Loop(); i++ {
						if _, err := db.AppendDecision(ctx, benchDecision(i)); err != nil {
							b.Fatal(err)
						}
					}
					return
				}
				b.RunParallel(func(pb *testing.PB) {
					for i := 0; pb.Next(); i++ {
						if _, err := db.AppendDecision(ctx, benchDecision(i)); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// BenchmarkCronRun is a scheduled run's life in the store: the claim
// (one immediate transaction), two steps and the finish (ops of the
// committer), as a job that fires every minute costs it.
func BenchmarkCronRun(b *testing.B) {
	db := openBench(b, Options{})
	ctx := b.Context()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	job := store.CronJob{
		Name: "bench", Schedule: "* * * * *", Kind: store.CronScript, Steps: []string{"true", "true"},
		Overlap: store.OverlapAllow, CatchUp: store.CatchUpOnce, Enabled: true,
		NextRun: at, NextSlot: at.Format(time.RFC3339), Created: at,
	}
	if err := db.AddCronJob(ctx, job); err != nil {
		b.Fatal(err)
	}
	plan := store.CronPlan{Late: time.Minute, Next: func(_ store.CronJob, after time.Time) (store.CronSlot, error) {
		next := after.Truncate(time.Minute).Add(time.Minute)
		return store.CronSlot{At: next, Key: next.Format(time.RFC3339)}, nil
	}}
	for b.Loop() {
		runs, err := db.ClaimDue(ctx, at, "bench", plan)
		if err != nil || len(runs) != 1 {
			b.Fatalf("claimed %d runs: %v", len(runs), err)
		}
		for i := range 2 {
			st := store.CronStep{Command: fmt.Sprint("step ", i), Verdict: "allow", Rule: "safe", Output: "ok\n", Started: at, Finished: at}
			if _, err := db.AppendCronStep(ctx, runs[0].ID, st); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := db.FinishCronRun(ctx, runs[0].ID, store.RunSucceeded, at, ""); err != nil {
			b.Fatal(err)
		}
		at = at.Add(time.Minute)
	}
}

// BenchmarkBoardRun is a kanban worker's round on the board: claim the
// ready task, record a step, fail (limit 0: the task is ready again),
// then the reads the dispatcher and console make (the task, the open
// runs, the board).
func BenchmarkBoardRun(b *testing.B) {
	ctx := b.Context()
	db := openBench(b, Options{})
	if _, err := db.AddTask(ctx, store.Task{ID: "t", Title: "bench", Workspace: store.WorkspaceScratch, Script: []string{"true"}}); err != nil {
		b.Fatal(err)
	}
	for i := range b.N {
		run := fmt.Sprintf("r%d", i)
		if _, _, err := db.ClaimTask(ctx, store.TaskClaim{Run: run, Holder: "h", Lease: time.Hour}); err != nil {
			b.Fatal(err)
		}
		if _, err := db.AppendRunStep(ctx, run, store.TaskStep{Command: "true", Verdict: "allow"}); err != nil {
			b.Fatal(err)
		}
		if _, err := db.RecordFailure(ctx, run, "bench", 0, time.Time{}); err != nil {
			b.Fatal(err)
		}
		if _, err := db.GetTask(ctx, "t"); err != nil {
			b.Fatal(err)
		}
		if _, err := db.RunningRuns(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := db.ListTasks(ctx, store.TaskFilter{}); err != nil {
			b.Fatal(err)
		}
	}
}
