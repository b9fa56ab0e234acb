package sqlite

import (
	"fmt"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/storetest"
)

func TestCronConformance(t *testing.T) {
	storetest.RunCron(t, func(t *testing.T) store.CronStore { return openTest(t) })
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
