package sqlite

import (
	"fmt"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/storetest"
)

func TestBoardConformance(t *testing.T) {
	storetest.RunBoard(t, func(t *testing.T) store.BoardStore { return openTest(t) })
}

func TestCredentialsConformance(t *testing.T) {
	storetest.RunCredentials(t, func(t *testing.T) store.Credentials { return openTest(t) })
}

func TestChatPostsConformance(t *testing.T) {
	storetest.RunChatPosts(t, func(t *testing.T) store.ChatPosts { return openTest(t) })
}

func TestHostsConformance(t *testing.T) {
	storetest.RunHosts(t, func(t *testing.T) storetest.HostStore { return openTest(t) })
}

func TestFencedRunsConformance(t *testing.T) {
	storetest.RunFencedRuns(t, func(t *testing.T) storetest.FencedStore { return openTest(t) })
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
