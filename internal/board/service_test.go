package board_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"pgregory.net/rapid"

	"github.com/wardenhq/warden/internal/board"
	"github.com/wardenhq/warden/internal/runner/runnertest"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func openStore(t testing.TB) *sqlite.DB { return runnertest.Store(t) }

func TestService(t *testing.T) {
	ctx := t.Context()
	db := openStore(t)
	s := board.New(board.Options{Store: db})

	a, err := s.Add(ctx, board.NewTask{Title: "build", Script: []string{"make"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Add(ctx, board.NewTask{Title: "deploy", Workspace: "dir:/srv/app/", Script: []string{"make deploy"}, After: []string{a.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != store.TaskReady || b.Status != store.TaskTodo || b.Workspace != "dir:/srv/app" || b.ID <= a.ID {
		t.Errorf("added %+v and %+v", a, b)
	}
	if _, err := s.Add(ctx, board.NewTask{Title: "x", Workspace: "dir:rel"}); !errors.Is(err, board.ErrWorkspace) {
		t.Errorf("relative workspace: %v", err)
	}
	if _, err := s.Add(ctx, board.NewTask{Title: " "}); err == nil {
		t.Error("empty title accepted")
	}
	if _, err := s.List(ctx, "nonsense"); err == nil {
		t.Error("List of an unknown status")
	}

	// Block with a reason: comment and last error.
	if _, err := s.Apply(ctx, a.ID, board.Block, "alice", "waiting for creds"); err != nil {
		t.Fatal(err)
	}
	card, err := s.Show(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if card.Status != store.TaskBlocked || card.LastError != "waiting for creds" || len(card.Comments) != 1 ||
		card.Comments[0].Author != "alice" || card.Comments[0].Body != "block: waiting for creds" {
		t.Errorf("after block: %+v", card)
	}
	// Unblock promotes at once.
	got, err := s.Apply(ctx, a.ID, board.Unblock, "alice", "")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.TaskReady {
		t.Errorf("unblocked task without parents is %s, want ready", got.Status)
	}
	if _, err := s.Apply(ctx, b.ID, board.Rerun, "alice", ""); !errors.Is(err, store.ErrTransition) {
		t.Errorf("rerun of a todo task: %v, want ErrTransition", err)
	}
	if _, err := s.Apply(ctx, a.ID, board.Done, "alice", ""); err != nil {
		t.Fatal(err)
	}
	if ids, err := s.Promote(ctx); err != nil || !slices.Equal(ids, []string{b.ID}) {
		t.Errorf("Promote = %v, %v; want [%s]", ids, err, b.ID)
	}
	if _, err := s.Comment(ctx, b.ID, "bob", "  "); err == nil {
		t.Error("empty comment accepted")
	}
	c, err := s.Comment(ctx, b.ID, "bob", "go ahead")
	if err != nil || c.Author != "bob" {
		t.Errorf("Comment = %+v, %v", c, err)
	}
	all, err := s.List(ctx, "")
	if err != nil || len(all) != 2 {
		t.Errorf("List = %d tasks, %v", len(all), err)
	}
}

// TestBoardProperties drives random operations (adds with parents,
// claims, run ends, failures, operator verbs, promotion) against a real
// store and checks after each one:
//   - a ready, running or review task has every parent done;
//   - a task is running iff it has exactly one running run, and it is
//     that run's task;
//   - retries never pass the failure limit without the task blocking;
//   - done tasks stay done.
func TestBoardProperties(t *testing.T) {
	const limit = 2
	rapid.Check(t, func(rt *rapid.T) {
		ctx := t.Context()
		db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "warden.db"))
		if err != nil {
			rt.Fatal(err)
		}
		defer db.Close()
		s := board.New(board.Options{Store: db})
		var ids, runs []string
		done := map[string]bool{}
		nrun := 0
		openRun := func(rt *rapid.T) (string, bool) {
			rs, err := db.RunningRuns(ctx)
			if err != nil {
				rt.Fatal(err)
			}
			if len(rs) == 0 {
				return "", false
			}
			return rapid.SampledFrom(rs).Draw(rt, "run").ID, true
		}
		for range rapid.IntRange(1, 30).Draw(rt, "ops") {
			switch op := rapid.IntRange(0, 6).Draw(rt, "op"); op {
			case 0: // add
				var after []string
				if len(ids) > 0 {
					after = rapid.SliceOfNDistinct(rapid.SampledFrom(ids), 0, 2, rapid.ID).Draw(rt, "after")
				}
				tk, err := s.Add(ctx, board.NewTask{Title: "t", Script: []string{"true"}, After: after})
				if err != nil {
					rt.Fatal(err)
				}
				ids = append(ids, tk.ID)
			case 1: // claim
				nrun++
				id := fmt.Sprintf("r%03d", nrun)
				if _, _, err := db.ClaimTask(ctx, store.TaskClaim{Run: id}); err == nil {
					runs = append(runs, id)
				} else if !errors.Is(err, store.ErrNothingReady) {
					rt.Fatal(err)
				}
			case 2, 3: // a run ends
				r, ok := openRun(rt)
				if !ok {
					continue
				}
				var err error
				switch rapid.IntRange(0, 3).Draw(rt, "end") {
				case 0:
					_, err = db.FinishRun(ctx, r, store.RunFinish{Status: store.TaskRunSucceeded})
				case 1:
					_, err = db.FinishRun(ctx, r, store.RunFinish{Status: store.TaskRunSucceeded, Review: true})
				case 2:
					_, err = db.FinishRun(ctx, r, store.RunFinish{Status: store.TaskRunBlocked, Reason: "denied"})
				case 3:
					_, err = db.RecordFailure(ctx, r, "died", limit, time.Now())
				}
				if err != nil {
					rt.Fatal(err)
				}
			case 4: // an operator
				if len(ids) == 0 {
					continue
				}
				id := rapid.SampledFrom(ids).Draw(rt, "task")
				v := rapid.SampledFrom([]board.Verb{board.Block, board.Unblock, board.Done, board.Rerun}).Draw(rt, "verb")
				before, err := s.Get(ctx, id)
				if err != nil {
					rt.Fatal(err)
				}
				_, err = s.Apply(ctx, id, v, "op", "")
				if v.Allowed(before.Status) != (err == nil) {
					rt.Fatalf("%s on a %s task: %v", v, before.Status, err)
				}
			case 5:
				if _, err := s.Promote(ctx); err != nil {
					rt.Fatal(err)
				}
			case 6: // a late end of an ended run changes nothing
				if len(runs) == 0 {
					continue
				}
				r := rapid.SampledFrom(runs).Draw(rt, "old run")
				run, err := db.GetRun(ctx, r)
				if err != nil {
					rt.Fatal(err)
				}
				if run.Status == store.TaskRunRunning {
					continue
				}
				if _, err := db.RecordFailure(ctx, r, "late", limit, time.Now()); !errors.Is(err, store.ErrTaskRunEnded) {
					rt.Fatalf("late failure of %s run %s: %v", run.Status, r, err)
				}
			}
			check(rt, db, done, limit)
		}
	})
}

func check(rt *rapid.T, db *sqlite.DB, done map[string]bool, limit int) {
	ctx := rt.Context()
	ts, err := db.ListTasks(ctx, store.TaskFilter{})
	if err != nil {
		rt.Fatal(err)
	}
	status := map[string]store.TaskStatus{}
	for _, tk := range ts {
		status[tk.ID] = tk.Status
	}
	running, err := db.RunningRuns(ctx)
	if err != nil {
		rt.Fatal(err)
	}
	open := map[string][]string{}
	for _, r := range running {
		open[r.Task] = append(open[r.Task], r.ID)
	}
	for _, tk := range ts {
		var ps []store.TaskStatus
		for _, p := range tk.Parents {
			ps = append(ps, status[p])
		}
		switch tk.Status {
		case store.TaskReady, store.TaskRunning, store.TaskReview:
			if !board.Ready(ps) {
				rt.Fatalf("task %s is %s with parents %v", tk.ID, tk.Status, ps)
			}
		}
		if (tk.Status == store.TaskRunning) != (len(open[tk.ID]) == 1) || len(open[tk.ID]) > 1 {
			rt.Fatalf("task %s is %s with open runs %v", tk.ID, tk.Status, open[tk.ID])
		}
		if tk.Status == store.TaskRunning && open[tk.ID][0] != tk.Run {
			rt.Fatalf("task %s runs %s but its open run is %s", tk.ID, tk.Run, open[tk.ID][0])
		}
		if tk.Retries >= limit && tk.Status != store.TaskBlocked && tk.Status != store.TaskDone {
			// Unblocking resets retries; anything else at the limit is
			// blocked (or was marked done by hand).
			rt.Fatalf("task %s has %d retries (limit %d) and is %s", tk.ID, tk.Retries, limit, tk.Status)
		}
		if done[tk.ID] && tk.Status != store.TaskDone {
			rt.Fatalf("done task %s moved to %s", tk.ID, tk.Status)
		}
		if tk.Status == store.TaskDone {
			done[tk.ID] = true
		}
	}
}

// TestServiceRuns: a worker's run operations, on the service's clock: a
// token is burnt by its first use, a step lands in the run, a failure
// under the limit sends the task back to ready, a finish ends the run at
// the service's time and nothing more is added to it.
func TestServiceRuns(t *testing.T) {
	ctx := t.Context()
	db := openStore(t)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := board.New(board.Options{Store: db, Now: func() time.Time { return at }})
	tk, err := s.Add(ctx, board.NewTask{Title: "build", Script: []string{"make"}})
	if err != nil {
		t.Fatal(err)
	}
	claim := func() store.TaskRun {
		t.Helper()
		_, r, err := db.ClaimTask(ctx, store.TaskClaim{Run: s.NewID(), At: at})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := claim()
	hash := strings.Repeat("ab", 32)
	if err := db.MintToken(ctx, store.WorkerToken{Hash: hash, Task: tk.ID, Run: r.ID, Created: at, Expires: at.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if tok, err := s.Redeem(ctx, hash, tk.ID); err != nil || tok.Run != r.ID {
		t.Fatalf("redeem: %+v %v", tok, err)
	}
	if _, err := s.Redeem(ctx, hash, tk.ID); err == nil {
		t.Error("a token redeemed twice")
	}
	if st, err := s.Step(ctx, r.ID, store.TaskStep{Command: "make", Verdict: "allow", Rule: "safe", Started: at, Finished: at}); err != nil || st.N != 0 {
		t.Fatalf("step: %+v %v", st, err)
	}
	if got, err := s.Fail(ctx, r.ID, "make failed", 3); err != nil || got.Status != store.TaskReady {
		t.Fatalf("fail: %+v %v", got, err)
	}
	r = claim()
	if got, err := s.Finish(ctx, r.ID, store.RunFinish{Status: store.TaskRunSucceeded}); err != nil || got.Status != store.TaskDone {
		t.Fatalf("finish: %+v %v", got, err)
	}
	run, err := s.Run(ctx, r.ID)
	if err != nil || run.Status != store.TaskRunSucceeded || !run.Finished.Equal(at) {
		t.Errorf("run after finish: %+v %v", run, err)
	}
	if _, err := s.Step(ctx, r.ID, store.TaskStep{Command: "late", Started: at, Finished: at}); !errors.Is(err, store.ErrTaskRunEnded) {
		t.Errorf("a step after the end: %v", err)
	}
}
