package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/store"
)

// RunBoard is the conformance suite for store.BoardStore. open returns a
// new, empty store for each subtest; if it is an io.Closer, RunBoard
// closes it when the subtest ends.
//
// Besides the interface's comments, the suite pins down:
//   - every pair of statuses against store.TaskTransitions for the
//     operator's moves, and that the claim, promoter and run ends move
//     only as the table says;
//   - concurrent claimers never get the same task, and every ready task
//     is claimed exactly once;
//   - a worker token works once, for its own task, while its run runs and
//     before it expires; a token shown for another task is burnt.
func RunBoard(t *testing.T, open func(t *testing.T) store.BoardStore) {
	t.Helper()
	fresh := func(t *testing.T) store.BoardStore { return openFresh(t, open) }
	for _, tc := range slices.Concat(boardTests, leaseTests) {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, fresh(t)) })
	}
}

type boardTest struct {
	name string
	run  func(t *testing.T, s store.BoardStore)
}

// boardTask is a task fixture.
func boardTask(id string, parents ...string) store.Task {
	return store.Task{
		ID: id, Title: "task " + id, Body: "do " + id,
		Workspace: store.WorkspaceScratch,
		Script:    []string{"echo " + id, "true"},
		Parents:   parents,
		Created:   base,
	}
}

func addTask(t *testing.T, s store.BoardStore, tk store.Task) store.Task {
	t.Helper()
	out, err := s.AddTask(t.Context(), tk)
	must(t, "AddTask "+tk.ID, err)
	return out
}

func taskStatus(t *testing.T, s store.BoardStore, id string) store.TaskStatus {
	t.Helper()
	tk, err := s.GetTask(t.Context(), id)
	must(t, "GetTask "+id, err)
	return tk.Status
}

func claimTask(t *testing.T, s store.BoardStore, run string) (store.Task, store.TaskRun) {
	t.Helper()
	tk, r, err := s.ClaimTask(t.Context(), store.TaskClaim{Run: run, Log: "/logs/" + run + ".log", At: base.Add(time.Minute)})
	must(t, "ClaimTask "+run, err)
	return tk, r
}

func tokenHash(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// emptyList fails t unless a list came back without error and empty:
// an empty slice, not nil, so that it marshals as [] rather than null.
func emptyList[T any](t *testing.T, what string, got []T, err error) {
	t.Helper()
	must(t, what, err)
	if got == nil || len(got) != 0 {
		t.Errorf("%s: %#v, want an empty list", what, got)
	}
}

// taskInStatus adds task id and moves it to st by the legal route.
func taskInStatus(t *testing.T, s store.BoardStore, id string, st store.TaskStatus) {
	t.Helper()
	ctx := t.Context()
	switch st {
	case store.TaskTodo:
		addTask(t, s, boardTask(id+"-parent"))
		addTask(t, s, boardTask(id, id+"-parent"))
		// Keep the parent from being claimed by later fixtures.
		_, err := s.SetTaskStatus(ctx, id+"-parent", store.TaskBlocked, "held", base)
		must(t, "block parent", err)
		return
	case store.TaskReady:
		addTask(t, s, boardTask(id))
		return
	}
	// Every other status goes through running; make id the only ready
	// task so the claim takes it.
	addTask(t, s, boardTask(id))
	ready, err := s.ListTasks(ctx, store.TaskFilter{Status: store.TaskReady})
	must(t, "ListTasks", err)
	if len(ready) != 1 {
		t.Fatalf("fixture: %d ready tasks, want only %s", len(ready), id)
	}
	_, r := claimTask(t, s, "run-"+id)
	switch st {
	case store.TaskRunning:
	case store.TaskBlocked:
		_, err = s.FinishRun(ctx, r.ID, store.RunFinish{Status: store.TaskRunBlocked, Reason: "fixture"})
	case store.TaskReview:
		_, err = s.FinishRun(ctx, r.ID, store.RunFinish{Status: store.TaskRunSucceeded, Review: true})
	case store.TaskDone:
		_, err = s.FinishRun(ctx, r.ID, store.RunFinish{Status: store.TaskRunSucceeded})
	default:
		t.Fatalf("fixture: status %q", st)
	}
	must(t, "fixture move to "+string(st), err)
	if got := taskStatus(t, s, id); got != st {
		t.Fatalf("fixture: %s is %s, want %s", id, got, st)
	}
}

var boardTests = []boardTest{
	{"add and get", func(t *testing.T, s store.BoardStore) {
		ctx := t.Context()
		a := addTask(t, s, boardTask("a"))
		if a.Status != store.TaskReady || a.Retries != 0 || a.Run != "" || len(a.Parents) != 0 {
			t.Errorf("new task without parents: %+v, want ready", a)
		}
		in := boardTask("b", "a", "a")
		in.Created = base.In(elsewhere)
		in.Workspace = "dir:/srv/project"
		b := addTask(t, s, in)
		got, err := s.GetTask(ctx, "b")
		must(t, "GetTask", err)
		want := in
		want.Status, want.Parents, want.Updated = store.TaskTodo, []string{"a"}, in.Created
		want.Created, want.Updated = utc(want.Created), utc(want.Updated)
		got.Created, got.Updated = utc(got.Created), utc(got.Updated)
		same(t, "GetTask", got, want)
		b.Created, b.Updated = utc(b.Created), utc(b.Updated)
		same(t, "AddTask's return", b, want)
		if _, err := s.GetTask(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetTask(nope) = %v, want ErrNotFound", err)
		}
	}},
	{"prompt task round trip", func(t *testing.T, s store.BoardStore) {
		tk := boardTask("p")
		tk.Script, tk.Prompt = nil, "summarise the logs"
		out := addTask(t, s, tk)
		got, err := s.GetTask(t.Context(), "p")
		must(t, "GetTask", err)
		if got.Prompt != "summarise the logs" || out.Prompt != got.Prompt || len(got.Script) != 0 {
			t.Errorf("prompt task read back as %+v", got)
		}
	}},
	{"add refuses bad tasks", func(t *testing.T, s store.BoardStore) {
		ctx := t.Context()
		addTask(t, s, boardTask("a"))
		bad := map[string]store.Task{}
		tk := boardTask("")
		bad["empty id"] = tk
		tk = boardTask("x")
		tk.Title = " "
		bad["empty title"] = tk
		for _, w := range []string{"", "dir:", "dir:rel", "dir:/a/../b", "dir:/a/", "/abs", "tmp"} {
			tk = boardTask("x")
			tk.Workspace = w
			bad["workspace "+w] = tk
		}
		tk = boardTask("x")
		tk.Script = []string{"true", "  "}
		bad["empty script line"] = tk
		tk = boardTask("x")
		tk.Prompt = "do it yourself"
		bad["script and prompt"] = tk
		bad["self parent"] = boardTask("x", "x")
		bad["duplicate id"] = boardTask("a")
		for name, tk := range bad {
			if _, err := s.AddTask(ctx, tk); err == nil {
				t.Errorf("%s: AddTask took %+v", name, tk)
			}
		}
		if _, err := s.AddTask(ctx, boardTask("x", "missing")); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown parent: %v, want ErrNotFound", err)
		}
		if _, err := s.GetTask(ctx, "x"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a refused task was stored: %v", err)
		}
	}},
	{"list", func(t *testing.T, s store.BoardStore) {
		ctx := t.Context()
		addTask(t, s, boardTask("c"))
		addTask(t, s, boardTask("a"))
		addTask(t, s, boardTask("b", "a", "c"))
		all, err := s.ListTasks(ctx, store.TaskFilter{})
		must(t, "ListTasks", err)
		var got []string
		for _, tk := range all {
			got = append(got, tk.ID+":"+string(tk.Status)+":"+strings.Join(tk.Parents, ","))
		}
		same(t, "ListTasks", got, []string{"a:ready:", "b:todo:a,c", "c:ready:"})
		todo, err := s.ListTasks(ctx, store.TaskFilter{Status: store.TaskTodo})
		must(t, "ListTasks todo", err)
		if len(todo) != 1 || todo[0].ID != "b" {
			t.Errorf("todo: %+v", todo)
		}
		none, err := s.ListTasks(ctx, store.TaskFilter{Status: store.TaskReview})
		emptyList(t, "ListTasks review", none, err)
	}},
	{"promote waits for every parent", func(t *testing.T, s store.BoardStore) {
		ctx := t.Context()
		addTask(t, s, boardTask("p1"))
		addTask(t, s, boardTask("p2"))
		addTask(t, s, boardTask("c", "p1", "p2"))
		addTask(t, s, boardTask("g", "c"))
		finish := func(want string) {
			t.Helper()
			tk, r := claimTask(t, s, "run-"+want)
			if tk.ID != want {
				t.Fatalf("claimed %s, want %s", tk.ID, want)
			}
			_, err := s.FinishRun(ctx, r.ID, store.RunFinish{Status: store.TaskRunSucceeded})
			must(t, "FinishRun", err)
		}
		finish("p1")
		ids, err := s.Promote(ctx, base)
		must(t, "Promote", err)
		if len(ids) != 0 || taskStatus(t, s, "c") != store.TaskTodo {
			t.Errorf("promoted %v with p2 not done", ids)
		}
		finish("p2")
		ids, err = s.Promote(ctx, base)
		must(t, "Promote", err)
		same(t, "promoted", ids, []string{"c"})
		if st := taskStatus(t, s, "g"); st != store.TaskTodo {
			t.Errorf("grandchild is %s, want todo", st)
		}
		ids, err = s.Promote(ctx, base)
		must(t, "Promote again", err)
		if len(ids) != 0 {
			t.Errorf("second Promote moved %v", ids)
		}
		// A task added after its parents are done starts ready.
		if tk := addTask(t, s, boardTask("late", "p1", "p2")); tk.Status != store.TaskReady {
			t.Errorf("task with done parents starts %s, want ready", tk.Status)
		}
	}},
	{"operator transitions table", func(t *testing.T, s store.BoardStore) {
		ctx := t.Context()
		for _, from := range store.TaskStatuses() {
			for _, to := range store.TaskStatuses() {
				id := fmt.Sprintf("%s-%s", from, to)
				taskInStatus(t, s, id, from)
				got, err := s.SetTaskStatus(ctx, id, to, "because", base.Add(time.Hour))
				legal := store.CanMove(from, to, store.ByOperator)
				switch {
				case legal && err != nil:
					t.Errorf("%s → %s: %v, want it allowed", from, to, err)
				case legal && got.Status != to:
					t.Errorf("%s → %s: task is %s", from, to, got.Status)
				case !legal && !errors.Is(err, store.ErrTransition):
					t.Errorf("%s → %s: %v, want ErrTransition", from, to, err)
				case !legal && taskStatus(t, s, id) != from:
					t.Errorf("%s → %s refused but the task moved to %s", from, to, taskStatus(t, s, id))
				}
				// Park the task so it never takes part in a later claim.
				if st := taskStatus(t, s, id); st == store.TaskReady || st == store.TaskRunning {
					_, err := s.SetTaskStatus(ctx, id, store.TaskBlocked, "parked", base)
					must(t, "park "+id, err)
				}
			}
		}
		// No operator move leads into running, or out of done.
		for _, tr := range store.TaskTransitions() {
			if tr.By == store.ByOperator && (tr.To == store.TaskRunning || tr.From == store.TaskDone) {
				t.Errorf("table lets the operator move %s → %s", tr.From, tr.To)
			}
			if tr.To == store.TaskRunning && tr.By != store.ByClaim {
				t.Errorf("table: %s → running by %s; only the claim starts a run", tr.From, tr.By)
			}
		}
	}},
	{"operator stops a running task", func(t *testing.T, s store.BoardStore) {
		ctx := t.Context()
		addTask(t, s, boardTask("a"))
		_, r := claimTask(t, s, "r1")
		tk, err := s.SetTaskStatus(ctx, "a", store.TaskBlocked, "wrong approach", base.Add(time.Hour))
		must(t, "block running task", err)
		if tk.Status != store.TaskBlocked || tk.Run != "" || tk.LastError != "wrong approach" {
			t.Errorf("task after block: %+v", tk)
		}
		run, err := s.GetRun(ctx, r.ID)
		must(t, "GetRun", err)
		if run.Status != store.TaskRunBlocked || run.Finished.IsZero() || run.Error != "wrong approach" {
			t.Errorf("run after the operator's block: %+v", run)
		}
		if _, err := s.FinishRun(ctx, r.ID, store.RunFinish{Status: store.TaskRunSucceeded}); !errors.Is(err, store.ErrTaskRunEnded) {
			t.Errorf("worker finishing a stopped run: %v, want ErrRunEnded", err)
		}
		if _, err := s.AppendRunStep(ctx, r.ID, store.TaskStep{Command: "true"}); !errors.Is(err, store.ErrTaskRunEnded) {
			t.Errorf("step on a stopped run: %v, want ErrRunEnded", err)
		}
		if taskStatus(t, s, "a") != store.TaskBlocked {
			t.Error("a late end moved the task")
		}
	}},
	{"claim", func(t *testing.T, s store.BoardStore) {
		ctx := t.Context()
		if _, _, err := s.ClaimTask(ctx, store.TaskClaim{Run: "r0"}); !errors.Is(err, store.ErrNothingReady) {
			t.Errorf("claim on an empty board: %v, want ErrNothingReady", err)
		}
		addTask(t, s, boardTask("b"))
		addTask(t, s, boardTask("a"))
		addTask(t, s, boardTask("c", "a"))
		// A claim of one task (for a remote worker) takes only that
		// one, and only when it is ready.
		if _, _, err := s.ClaimTask(ctx, store.TaskClaim{Run: "rx", Task: "c"}); !errors.Is(err, store.ErrNothingReady) {
			t.Errorf("claim of a waiting task: %v, want ErrNothingReady", err)
		}
		if _, _, err := s.ClaimTask(ctx, store.TaskClaim{Run: "rx", Task: "nosuch"}); !errors.Is(err, store.ErrNothingReady) {
			t.Errorf("claim of a missing task: %v, want ErrNothingReady", err)
		}
		tk, r := claimTask(t, s, "r1")
		if tk.ID != "a" || tk.Status != store.TaskRunning || tk.Run != "r1" {
			t.Errorf("first claim: %+v, want a running as r1", tk)
		}
		want := store.TaskRun{ID: "r1", Task: "a", Status: store.TaskRunRunning, Started: base.Add(time.Minute), Steps: []store.TaskStep{}, Log: "/logs/r1.log"}
		r.Started = utc(r.Started)
		same(t, "run", r, want)
		if tk, _ = claimTask(t, s, "r2"); tk.ID != "b" {
			t.Errorf("second claim took %s, want b", tk.ID)
		}
		if _, _, err := s.ClaimTask(ctx, store.TaskClaim{Run: "r3"}); !errors.Is(err, store.ErrNothingReady) {
			t.Errorf("claim with c waiting for a: %v, want ErrNothingReady", err)
		}
		if _, _, err := s.ClaimTask(ctx, store.TaskClaim{Run: "r3", Task: "a"}); !errors.Is(err, store.ErrNothingReady) {
			t.Errorf("claim of a running task: %v, want ErrNothingReady", err)
		}
		if _, _, err := s.ClaimTask(ctx, store.TaskClaim{Run: "r1"}); err == nil {
			t.Error("a run id was used twice")
		}
		running, err := s.RunningRuns(ctx)
		must(t, "RunningRuns", err)
		if len(running) != 2 || running[0].ID != "r1" || running[1].ID != "r2" {
			t.Errorf("RunningRuns: %+v", running)
		}
		must(t, "SetRunPID", s.SetRunPID(ctx, "r1", 4242))
		if got, _ := s.GetRun(ctx, "r1"); got.PID != 4242 {
			t.Errorf("pid %d, want 4242", got.PID)
		}
		if err := s.SetRunPID(ctx, "nope", 1); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("SetRunPID(nope) = %v, want ErrNotFound", err)
		}
	}},
	{"concurrent claimers never share a task", func(t *testing.T, s store.BoardStore) {
		ctx := t.Context()
		const tasks, claimers = 40, 2
		for i := range tasks {
			addTask(t, s, boardTask(fmt.Sprintf("t%03d", i)))
		}
		var (
			mu    sync.Mutex
			got   = map[string]string{} // task -> run
			start = make(chan struct{})
			wg    sync.WaitGroup
		)
		for c := range claimers {
			wg.Go(func() {
				<-start
				for i := 0; ; i++ {
					run := fmt.Sprintf("c%d-%03d", c, i)
					tk, r, err := s.ClaimTask(ctx, store.TaskClaim{Run: run})
					if errors.Is(err, store.ErrNothingReady) {
						return
					}
					if err != nil {
						t.Errorf("claimer %d: %v", c, err)
						return
					}
					if r.Task != tk.ID || tk.Run != run {
						t.Errorf("claimer %d: task %+v with run %+v", c, tk, r)
					}
					mu.Lock()
					if prev, dup := got[tk.ID]; dup {
						t.Errorf("task %s claimed twice: %s and %s", tk.ID, prev, run)
					}
					got[tk.ID] = run
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		if len(got) != tasks {
			t.Errorf("%d tasks claimed, want %d", len(got), tasks)
		}
		running, err := s.RunningRuns(ctx)
		must(t, "RunningRuns", err)
		if len(running) != tasks {
			t.Errorf("%d open runs, want %d", len(running), tasks)
		}
	}},
	{"finish", func(t *testing.T, s store.BoardStore) {
		ctx := t.Context()
		for _, tc := range []struct {
			f    store.RunFinish
			want store.TaskStatus
		}{
			{store.RunFinish{Status: store.TaskRunSucceeded}, store.TaskDone},
			{store.RunFinish{Status: store.TaskRunSucceeded, Review: true}, store.TaskReview},
			{store.RunFinish{Status: store.TaskRunBlocked, Reason: "denied: rm -rf"}, store.TaskBlocked},
		} {
			id := "t-" + string(tc.want)
			addTask(t, s, boardTask(id))
			_, r := claimTask(t, s, "r-"+id)
			tc.f.At = base.Add(2 * time.Minute)
			tk, err := s.FinishRun(ctx, r.ID, tc.f)
			must(t, "FinishRun", err)
			if tk.Status != tc.want || tk.Run != "" || tk.LastError != tc.f.Reason {
				t.Errorf("%+v: task %+v, want %s", tc.f, tk, tc.want)
			}
			run, err := s.GetRun(ctx, r.ID)
			must(t, "GetRun", err)
			if run.Status != tc.f.Status || !run.Finished.Equal(tc.f.At) || run.Error != tc.f.Reason {
				t.Errorf("%+v: run %+v", tc.f, run)
			}
			if _, err := s.FinishRun(ctx, r.ID, store.RunFinish{Status: store.TaskRunSucceeded}); !errors.Is(err, store.ErrTaskRunEnded) {
				t.Errorf("second FinishRun: %v, want ErrRunEnded", err)
			}
			if _, err := s.RecordFailure(ctx, r.ID, "late", 3, base); !errors.Is(err, store.ErrTaskRunEnded) {
				t.Errorf("RecordFailure after finish: %v, want ErrRunEnded", err)
			}
		}
		addTask(t, s, boardTask("x"))
		_, r := claimTask(t, s, "rx")
		if _, err := s.FinishRun(ctx, r.ID, store.RunFinish{Status: store.TaskRunFailed}); err == nil {
			t.Error("FinishRun took a failure")
		}
		if _, err := s.FinishRun(ctx, "nope", store.RunFinish{Status: store.TaskRunSucceeded}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("FinishRun(nope) = %v, want ErrNotFound", err)
		}
	}},
	{"failures retry then block", func(t *testing.T, s store.BoardStore) {
		ctx := t.Context()
		addTask(t, s, boardTask("a"))
		const limit = 3
		for i := 1; i <= limit; i++ {
			_, r := claimTask(t, s, fmt.Sprintf("r%d", i))
			tk, err := s.RecordFailure(ctx, r.ID, fmt.Sprintf("worker died %d", i), limit, base.Add(time.Duration(i)*time.Minute))
			must(t, "RecordFailure", err)
			want := store.TaskReady
			if i == limit {
				want = store.TaskBlocked
			}
			if tk.Status != want || tk.Retries != i || tk.LastError != fmt.Sprintf("worker died %d", i) {
				t.Errorf("failure %d: %+v, want %s with %d retries", i, tk, want, i)
			}
			run, err := s.GetRun(ctx, r.ID)
			must(t, "GetRun", err)
			if run.Status != store.TaskRunFailed || run.Error == "" {
				t.Errorf("failed run: %+v", run)
			}
		}
		runs, err := s.TaskRuns(ctx, "a")
		must(t, "TaskRuns", err)
		if len(runs) != limit || runs[0].ID != "r3" || runs[2].ID != "r1" {
			t.Errorf("TaskRuns not newest first: %+v", runs)
		}
		// Unblocking gives a fresh budget.
		tk, err := s.SetTaskStatus(ctx, "a", store.TaskTodo, "", base)
		must(t, "unblock", err)
		if tk.Retries != 0 || tk.LastError != "" {
			t.Errorf("after unblock: %+v", tk)
		}
		// No limit: never blocked.
		addTask(t, s, boardTask("b"))
		if _, err := s.Promote(ctx, base); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			_, r, err := s.ClaimTask(ctx, store.TaskClaim{Run: fmt.Sprintf("rb%d", i)})
			must(t, "ClaimTask", err)
			tk, err := s.RecordFailure(ctx, r.ID, "again", 0, base)
			must(t, "RecordFailure", err)
			if tk.Status != store.TaskReady {
				t.Fatalf("limit 0, failure %d: %s", i+1, tk.Status)
			}
		}
	}},
	{"steps", func(t *testing.T, s store.BoardStore) {
		ctx := t.Context()
		addTask(t, s, boardTask("a"))
		_, r := claimTask(t, s, "r1")
		steps := []store.TaskStep{
			{Command: "env", Verdict: "allow", Rule: "safe", ExitCode: 0, Output: "PATH=/bin\n", Started: base.Add(time.Second), Finished: base.Add(2 * time.Second)},
			{Command: "rm -rf /srv", Verdict: "deny", Rule: "unattended.kanban_mode", ExitCode: -1, Output: "blocked: a kanban worker runs without a human", Started: base.Add(3 * time.Second), Finished: base.Add(3 * time.Second)},
		}
		for i, st := range steps {
			st.N = 99 // assigned by the store
			got, err := s.AppendRunStep(ctx, r.ID, st)
			must(t, "AppendRunStep", err)
			steps[i].N = i
			got.Started, got.Finished = utc(got.Started), utc(got.Finished)
			same(t, fmt.Sprintf("AppendRunStep %d", i), got, steps[i])
		}
		big := strings.Repeat("é", store.CronOutputCap) // 2 bytes each
		capped, _ := store.CapOutput(big)
		_, err := s.AppendRunStep(ctx, r.ID, store.TaskStep{Command: "yes", Verdict: "allow", Output: big, Started: base})
		must(t, "AppendRunStep big", err)
		got, err := s.GetRun(ctx, r.ID)
		must(t, "GetRun", err)
		if len(got.Steps) != 3 {
			t.Fatalf("%d steps, want 3", len(got.Steps))
		}
		for i := range steps {
			g := got.Steps[i]
			g.Started, g.Finished = utc(g.Started), utc(g.Finished)
			same(t, fmt.Sprintf("step %d", i), g, steps[i])
		}
		last := got.Steps[2]
		if last.Output != capped || last.N != 2 || !last.Finished.Equal(base) {
			t.Errorf("big output: %d bytes, n %d, finished %v; want CapOutput's %d bytes, n 2, finished = started", len(last.Output), last.N, last.Finished, len(capped))
		}
		if _, err := s.AppendRunStep(ctx, "nope", steps[0]); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("step on unknown run: %v, want ErrNotFound", err)
		}
	}},
	{"comments", func(t *testing.T, s store.BoardStore) {
		ctx := t.Context()
		addTask(t, s, boardTask("a"))
		addTask(t, s, boardTask("b"))
		c1, err := s.AddComment(ctx, store.TaskComment{Task: "a", Author: "alice", Body: "please use the staging db", Time: base})
		must(t, "AddComment", err)
		_, err = s.AddComment(ctx, store.TaskComment{Task: "b", Author: "bob", Body: "other", Time: base})
		must(t, "AddComment b", err)
		c2, err := s.AddComment(ctx, store.TaskComment{Task: "a", Author: "worker:r1", Body: "blocked: denied", Time: base.Add(time.Second)})
		must(t, "AddComment 2", err)
		if c1.ID == 0 || c2.ID <= c1.ID {
			t.Errorf("comment ids %d, %d: want increasing", c1.ID, c2.ID)
		}
		cs, err := s.Comments(ctx, "a")
		must(t, "Comments", err)
		for i := range cs {
			cs[i].Time = utc(cs[i].Time)
		}
		c1.Time, c2.Time = utc(c1.Time), utc(c2.Time)
		same(t, "Comments", cs, []store.TaskComment{c1, c2})
		if _, err := s.AddComment(ctx, store.TaskComment{Task: "nope", Author: "x", Body: "y"}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("comment on unknown task: %v, want ErrNotFound", err)
		}
		none, err := s.Comments(ctx, "nope")
		emptyList(t, "Comments of an unknown task", none, err)
	}},
	{"tokens are single use and bound to their task run", func(t *testing.T, s store.BoardStore) {
		ctx := t.Context()
		addTask(t, s, boardTask("a"))
		addTask(t, s, boardTask("b"))
		_, ra := claimTask(t, s, "ra")
		_, rb := claimTask(t, s, "rb")
		at := base.Add(time.Minute)
		mint := func(secret, task, run string, ttl time.Duration) {
			t.Helper()
			must(t, "MintToken", s.MintToken(ctx, store.WorkerToken{Hash: tokenHash(secret), Task: task, Run: run, Created: at, Expires: at.Add(ttl)}))
		}
		refused := func(what, secret, task string, when time.Time) {
			t.Helper()
			if _, err := s.ConsumeToken(ctx, tokenHash(secret), task, when); !errors.Is(err, store.ErrTokenRefused) {
				t.Errorf("%s: %v, want ErrTokenRefused", what, err)
			}
		}
		mint("sa", "a", ra.ID, time.Minute)
		tok, err := s.ConsumeToken(ctx, tokenHash("sa"), "a", at.Add(time.Second))
		must(t, "ConsumeToken", err)
		if tok.Task != "a" || tok.Run != ra.ID || !tok.Used.Equal(at.Add(time.Second)) {
			t.Errorf("token: %+v", tok)
		}
		refused("reused", "sa", "a", at.Add(2*time.Second))
		refused("unknown", "nobody", "a", at)

		mint("sb", "b", rb.ID, time.Minute)
		refused("for another task", "sb", "a", at)
		refused("after being shown for another task", "sb", "b", at)

		mint("sb2", "b", rb.ID, time.Minute)
		refused("expired", "sb2", "b", at.Add(time.Minute))

		mint("sb3", "b", rb.ID, time.Minute)
		_, err = s.FinishRun(ctx, rb.ID, store.RunFinish{Status: store.TaskRunSucceeded})
		must(t, "FinishRun", err)
		refused("after its run ended", "sb3", "b", at)

		if err := s.MintToken(ctx, store.WorkerToken{Hash: tokenHash("late"), Task: "b", Run: rb.ID, Expires: at.Add(time.Minute)}); err == nil {
			t.Error("minted a token for an ended run")
		}
		if err := s.MintToken(ctx, store.WorkerToken{Hash: tokenHash("cross"), Task: "b", Run: ra.ID, Expires: at.Add(time.Minute)}); err == nil {
			t.Error("minted a token binding task b to a's run")
		}
		if err := s.MintToken(ctx, store.WorkerToken{Hash: "short", Task: "a", Run: ra.ID, Expires: at.Add(time.Minute)}); err == nil {
			t.Error("minted a token that is not a SHA-256 hash")
		}
	}},
	{"transitions by the claim, promoter and run ends follow the table", func(t *testing.T, s store.BoardStore) {
		// Every move these methods make must be a row of the table for
		// their mover.
		for _, tr := range []store.Transition{
			{From: store.TaskTodo, To: store.TaskReady, By: store.ByPromote},
			{From: store.TaskReady, To: store.TaskRunning, By: store.ByClaim},
			{From: store.TaskRunning, To: store.TaskDone, By: store.ByRun},
			{From: store.TaskRunning, To: store.TaskReview, By: store.ByRun},
			{From: store.TaskRunning, To: store.TaskBlocked, By: store.ByRun},
			{From: store.TaskRunning, To: store.TaskReady, By: store.ByRun},
		} {
			if !slices.Contains(store.TaskTransitions(), tr) {
				t.Errorf("the table lacks %+v, which the store makes", tr)
			}
		}
	}},
}
