package dispatch

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/ancestry"
	"github.com/wardenhq/warden/internal/board"
	"github.com/wardenhq/warden/internal/execenv"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/llm"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/runner/runnertest"
	"github.com/wardenhq/warden/internal/sandbox"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
	"github.com/wardenhq/warden/internal/tools"
	"github.com/wardenhq/warden/internal/workerapi"
)

// testHost is what the host wires for kanban: a real SQLite store, a
// real gate and runner, and a dispatcher whose workers are this test
// binary.
type testHost struct {
	db    *sqlite.DB
	board *board.Service
	d     *Dispatcher
	state string
	// addr and pin are the remote workers' listener and its
	// certificate's fingerprint (remote).
	addr, pin string
	cancel    context.CancelFunc
	done      chan error
	once      sync.Once
}

type hostSetup struct {
	kanbanMode   string
	environ      []string
	failureLimit int
	concurrency  int
	// before runs after the store is open and before the dispatcher
	// starts.
	before func(db *sqlite.DB)
	groups *ancestry.Groups
	// remote serves remote workers on a loopback TLS listener with a
	// lease of remoteLease (default 10 s).
	remote      bool
	remoteLease time.Duration
	// beforeRun runs after the dispatcher is built and before it runs
	// (issue tasks to remote workers before a local one takes them).
	beforeRun func(d *Dispatcher, db *sqlite.DB)
	// model answers prompt tasks' model calls; passthrough and withhold
	// are the dispatcher's.
	model       llm.Client
	passthrough []string
	withhold    []string
}

// testEnviron is a plain parent environment.
func testEnviron(t testing.TB) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8"}
}

func startHost(t testing.TB, s hostSetup) *testHost {
	t.Helper()
	if s.kanbanMode == "" {
		s.kanbanMode = "deny"
	}
	if s.environ == nil {
		s.environ = testEnviron(t)
	}
	state := t.TempDir()
	rf := runnertest.New(t, runnertest.Options{Policy: "approvals:\n  kanban_mode: " + s.kanbanMode + "\n", Dir: state, Hide: []string{state},
		Paths: gate.Paths{Home: t.TempDir(), Protected: []string{state}}, Terminal: tools.Terminal{Env: execenv.Build(s.environ, nil, nil)}})
	db, r, sb := rf.DB, rf.Runner, rf.Terminal.Sandbox
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if s.before != nil {
		s.before(db)
	}
	var remoteLn net.Listener
	var addr, pin string
	if s.remote {
		cert, err := workerapi.SelfSigned(filepath.Join(state, workerapi.TLSDir))
		if err != nil {
			t.Fatal(err)
		}
		if remoteLn, err = workerapi.ListenTLS("127.0.0.1:0", cert); err != nil {
			t.Fatal(err)
		}
		addr, pin = remoteLn.Addr().String(), workerapi.CertFingerprint(cert)
		if s.remoteLease == 0 {
			// Long enough that a loaded machine's stalls never lapse a
			// live worker's lease.
			s.remoteLease = 10 * time.Second
		}
	}
	d, err := New(Options{
		Board: db, Runner: r, Sandbox: sb, Executable: exe, StateDir: state, ScratchDir: t.TempDir(), Environ: s.environ,
		RemoteListener: remoteLn, RemoteLease: s.remoteLease,
		Model: s.model, Passthrough: s.passthrough, Withhold: s.withhold,
		FailureLimit: s.failureLimit, Concurrency: s.concurrency, Poll: 50 * time.Millisecond, Groups: s.groups,
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &testHost{db: db, board: board.New(board.Options{Store: db}), d: d, state: state, addr: addr, pin: pin, cancel: cancel, done: make(chan error, 1)}
	if s.beforeRun != nil {
		s.beforeRun(d, db)
	}
	go func() { h.done <- d.Run(ctx) }()
	t.Cleanup(func() { h.stop(t) })
	return h
}

// stop cancels the dispatcher, waits for it and closes the store.
func (h *testHost) stop(t testing.TB) {
	h.once.Do(func() {
		h.cancel()
		select {
		case err := <-h.done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the dispatcher did not stop")
		}
		h.db.Close()
	})
}

// testWriter sends the dispatcher's log to the test log.
// decidedAs checks that h's audit log holds n decisions, each made as
// run of task.
func decidedAs(t *testing.T, h *testHost, n int, task, run string) {
	t.Helper()
	ds, err := h.db.Decisions(t.Context(), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != n {
		t.Errorf("%d decisions, want %d", len(ds), n)
	}
	for _, d := range ds {
		if !strings.HasPrefix(d.OwnerText, "kanban:"+task) || !strings.Contains(d.OwnerText, "run="+run) {
			t.Errorf("decision %q as %q", d.Payload, d.OwnerText)
		}
	}
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// waitTask polls until task id satisfies ok.
func (h *testHost) waitTask(t testing.TB, id string, what string, ok func(store.Task) bool) store.Task {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		tk, err := h.db.GetTask(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if ok(tk) {
			return tk
		}
		if time.Now().After(deadline) {
			card, _ := h.board.Show(context.Background(), id)
			t.Fatalf("task %s never became %s: %+v", id, what, card)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func status(want ...store.TaskStatus) func(store.Task) bool {
	return func(tk store.Task) bool { return slices.Contains(want, tk.Status) }
}

func (h *testHost) add(t testing.TB, n board.NewTask) store.Task {
	t.Helper()
	tk, err := h.board.Add(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	h.d.Poke()
	return tk
}

func readLog(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// polluted are the names of a parent environment full of credentials
// and approval markers, set to truthy values.
var polluted = []string{
	"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "MY_SERVICE_API_KEY", "GITHUB_TOKEN", "GH_TOKEN", "SLACK_BOT_TOKEN",
	"HERMES_DASHBOARD_SESSION_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "SSH_AUTH_SOCK",
	"HERMES_YOLO_MODE", "WARDEN_YOLO", "YOLO", "HERMES_INTERACTIVE", "INTERACTIVE",
	"HERMES_SESSION_KEY", "HERMES_GATEWAY_SESSION", "SESSION_ID", "HERMES_SESSION_PLATFORM",
	"HERMES_CRON_SESSION", "CRON_JOB_ID", "HERMES_CRON_AUTO_DELIVER_X",
	"HERMES_EXEC_ASK", "EXEC_ASK", "WARDEN_SESSION", "WARDEN_WORKER_TOKEN", "LD_PRELOAD",
}

// TestInvariant03_ChildrenStartClean (DESIGN.md invariant 3): the host
// runs with an environment full of credentials and markers. A kanban
// task runs `env` and then a dangerous command, end to end through a
// real worker process: neither the worker nor the command it asks for
// gets any of those names; the worker's identity is its one-time token,
// which arrives on a file descriptor (not in its environment or argv)
// and is useless once used or for another task; the dangerous step is
// denied under kanban_mode deny (the task blocks with the gate's reason)
// and runs under approve.
func TestInvariant03_ChildrenStartClean(t *testing.T) {
	environ := testEnviron(t)
	for _, name := range polluted {
		environ = append(environ, name+"=1")
	}
	for _, tc := range []struct {
		mode string
		want store.TaskStatus
	}{{"deny", store.TaskBlocked}, {"approve", store.TaskDone}} {
		t.Run("kanban_mode "+tc.mode, func(t *testing.T) {
			h := startHost(t, hostSetup{kanbanMode: tc.mode, environ: environ})
			work := t.TempDir()
			for _, p := range []string{"build", "probe-token"} {
				if err := os.Mkdir(filepath.Join(work, p), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			tk := h.add(t, board.NewTask{Title: "env then rm", Workspace: "dir:" + work, Script: []string{"env", "rm -rf build"}})
			tk = h.waitTask(t, tk.ID, string(tc.want), status(tc.want, store.TaskDone, store.TaskBlocked))
			if tk.Status != tc.want {
				card, _ := h.board.Show(t.Context(), tk.ID)
				t.Fatalf("task ended %s, want %s: %+v", tk.Status, tc.want, card)
			}
			card, err := h.board.Show(t.Context(), tk.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(card.Runs) != 1 || len(card.Runs[0].Steps) != 2 {
				t.Fatalf("runs: %+v", card.Runs)
			}
			run := card.Runs[0]
			// The command's environment (what `env` printed).
			envStep := run.Steps[0]
			if envStep.Verdict != "allow" || envStep.ExitCode != 0 || !strings.Contains(envStep.Output, "PATH=") {
				t.Fatalf("env step: %+v", envStep)
			}
			// The worker's own environment and argv, from its log, once
			// it has finished probing its used token (after the run
			// ended).
			logText := readLog(t, run.Log)
			for deadline := time.Now().Add(30 * time.Second); !strings.Contains(logText, "probe-other-task: ") && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
				logText = readLog(t, run.Log)
			}
			var workerEnv []string
			for _, l := range strings.Split(logText, "\n") {
				if name, ok := strings.CutPrefix(l, "worker-env: "); ok {
					workerEnv = append(workerEnv, name)
				}
			}
			if len(workerEnv) == 0 {
				t.Fatalf("the worker reported no environment; log:\n%s", logText)
			}
			for _, name := range polluted {
				if strings.Contains(envStep.Output, name+"=") {
					t.Errorf("the task's command inherited %s", name)
				}
				if slices.Contains(workerEnv, name) {
					t.Errorf("the worker inherited %s", name)
				}
			}
			for _, name := range workerEnv {
				if strings.HasPrefix(name, "WARDEN_") && name != SocketEnv {
					t.Errorf("the worker has warden variable %s", name)
				}
			}
			if !slices.Contains(workerEnv, SocketEnv) {
				t.Errorf("the worker was not told the socket (%s); env %v", SocketEnv, workerEnv)
			}
			for _, want := range []string{
				`worker-argv: ["worker" "--task" "` + tk.ID + `"]`,
				"token-in-env-or-argv: false",
				"probe-reuse: refused",
				"probe-other-task: refused",
			} {
				if !strings.Contains(logText, want+"\n") {
					t.Errorf("worker log lacks %q:\n%s", want, logText)
				}
			}
			// The dangerous step.
			rm := run.Steps[1]
			_, statErr := os.Stat(filepath.Join(work, "build"))
			switch tc.mode {
			case "deny":
				if rm.Verdict != "deny" || rm.Rule != gate.RuleKanbanMode || rm.ExitCode != -1 || statErr != nil {
					t.Errorf("rm under deny: %+v (build: %v)", rm, statErr)
				}
				if run.Status != store.TaskRunBlocked || tk.LastError == "" || len(card.Comments) != 1 ||
					!strings.HasPrefix(card.Comments[0].Body, "blocked: ") || !strings.Contains(card.Comments[0].Body, "rm -rf build") {
					t.Errorf("blocked task: %+v, run %+v, comments %+v", tk, run, card.Comments)
				}
			case "approve":
				if rm.Verdict != "allow" || rm.Rule != gate.RuleKanbanMode || rm.ExitCode != 0 || !errors.Is(statErr, os.ErrNotExist) {
					t.Errorf("rm under approve: %+v (build: %v)", rm, statErr)
				}
				if run.Status != store.TaskRunSucceeded {
					t.Errorf("run %+v", run)
				}
			}
			// Every decision was made as the run's owner.
			decidedAs(t, h, 2, tk.ID, run.ID)
		})
	}
	// Nothing above changed the test process's own environment.
	for _, name := range polluted {
		if _, set := os.LookupEnv(name); set {
			t.Errorf("%s is set in the host process", name)
		}
	}
}

// TestDeadWorker: a worker killed with SIGKILL is noticed; its task goes
// back to ready with a retry count, is claimed again, and is blocked
// with the last error after the failure limit. The command the host was
// running for it is cancelled with it.
func TestDeadWorker(t *testing.T) {
	h := startHost(t, hostSetup{failureLimit: 2})
	tk := h.add(t, board.NewTask{Title: "slow", Script: []string{"sleep 30"}})
	seen := map[string]bool{}
	for attempt := 1; attempt <= 2; attempt++ {
		// Wait for a new run whose worker is mid-command.
		var run store.TaskRun
		deadline := time.Now().Add(60 * time.Second)
		for {
			runs, err := h.db.RunningRuns(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) == 1 && !seen[runs[0].ID] && runs[0].PID > 0 && strings.Contains(readLog(t, runs[0].Log), "$ sleep 30") {
				run = runs[0]
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("attempt %d: no worker running", attempt)
			}
			time.Sleep(10 * time.Millisecond)
		}
		seen[run.ID] = true
		for len(children(t, "sleep 30")) != 1 {
			if time.Now().After(deadline) {
				t.Fatalf("the host's command for the worker: %v, want one", children(t, "sleep 30"))
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err := syscall.Kill(run.PID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		want := store.TaskReady
		if attempt == 2 {
			want = store.TaskBlocked
		}
		got := h.waitTask(t, tk.ID, "retried", func(tk store.Task) bool { return tk.Retries == attempt })
		if attempt == 2 && got.Status != want {
			t.Errorf("after %d deaths: %s, want %s", attempt, got.Status, want)
		}
		if !strings.Contains(got.LastError, "killed") {
			t.Errorf("last error %q, want the worker's death", got.LastError)
		}
		// The host's command for the dead worker was cancelled with its
		// connection, not left running for 30 s.
		deadline = time.Now().Add(10 * time.Second)
		for len(children(t, "sleep 30")) > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("the host still runs the dead worker's command: %v", children(t, "sleep 30"))
			}
			time.Sleep(10 * time.Millisecond)
		}
		r, err := h.db.GetRun(t.Context(), run.ID)
		if err != nil || r.Status != store.TaskRunFailed {
			t.Errorf("run of the dead worker: %+v, %v", r, err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if got, _ := h.db.GetTask(t.Context(), tk.ID); got.Status != store.TaskBlocked || got.Retries != 2 {
		t.Errorf("finally: %+v, want blocked after 2", got)
	}
}

// children lists the pids of this process's descendants (the commands
// run in sandboxes, under their helpers) whose command line starts with
// prefix.
func children(t testing.TB, prefix string) []int {
	t.Helper()
	fs := ancestry.FS{}
	return processes(t, prefix, func(pid int) bool {
		in, err := fs.Within(pid, os.Getpid())
		return err == nil && in && pid != os.Getpid()
	})
}

// processes lists the pids of the processes on this machine that keep
// accepts (nil: all) and whose command line starts with prefix.
func processes(t testing.TB, prefix string, keep func(pid int) bool) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || (keep != nil && !keep(pid)) {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.HasPrefix(strings.ReplaceAll(string(cmdline), "\x00", " "), prefix) {
			out = append(out, pid)
		}
	}
	return out
}

// TestInvariant11_WorkersAreAgents: the admin boundary (the check the
// admin socket makes of its peer) refuses a running worker and the
// command the host runs for it, and admits the host itself and
// processes that do not descend from it. The worker's process group is
// known to the boundary while it may hold processes, and forgotten once
// the dispatcher killed it.
func TestInvariant11_WorkersAreAgents(t *testing.T) {
	groups := &ancestry.Groups{}
	h := startHost(t, hostSetup{groups: groups, failureLimit: 1})
	boundary := ancestry.Boundary{Host: os.Getpid(), Groups: groups}
	tk := h.add(t, board.NewTask{Title: "long", Script: []string{"sleep 30"}})
	var run store.TaskRun
	var tool []int
	deadline := time.Now().Add(60 * time.Second)
	for {
		runs, _ := h.db.RunningRuns(t.Context())
		if len(runs) == 1 && runs[0].PID > 0 {
			if tool = children(t, "sleep 30"); len(tool) == 1 {
				run = runs[0]
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no worker mid-command")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for what, pid := range map[string]int{"the worker": run.PID, "the tool run": tool[0]} {
		if err := boundary.Check(pid); !errors.Is(err, ancestry.ErrAgentProcess) {
			t.Errorf("%s (pid %d): %v, want ErrAgentProcess", what, pid, err)
		}
	}
	if !groups.Has(run.PID) {
		t.Errorf("the worker's group %d is not registered", run.PID)
	}
	for what, pid := range map[string]int{"the host": os.Getpid(), "init": 1} {
		if err := boundary.Check(pid); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	if err := syscall.Kill(run.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h.waitTask(t, tk.ID, "blocked", status(store.TaskBlocked))
	for deadline := time.Now().Add(10 * time.Second); groups.Has(run.PID); {
		if time.Now().After(deadline) {
			t.Fatal("the dead worker's group is still registered")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFailingStep: a step that exits non-zero fails the run once (the
// worker reports it; its exit does not count again), then blocks at the
// limit with the reason.
func TestFailingStep(t *testing.T) {
	h := startHost(t, hostSetup{failureLimit: 2})
	tk := h.add(t, board.NewTask{Title: "fails", Script: []string{"true", "exit 3"}})
	got := h.waitTask(t, tk.ID, "blocked", status(store.TaskBlocked))
	if got.Retries != 2 || got.LastError != "step 2 (exit 3) exited with status 3" {
		t.Errorf("blocked task: %+v", got)
	}
	runs, err := h.db.TaskRuns(t.Context(), tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Errorf("%d runs, want 2", len(runs))
	}
	for _, r := range runs {
		if r.Status != store.TaskRunFailed || len(r.Steps) != 2 || r.Steps[1].ExitCode != 3 {
			t.Errorf("run %+v", r)
		}
	}
}

func TestDependenciesAndConcurrency(t *testing.T) {
	h := startHost(t, hostSetup{concurrency: 2})
	first := h.add(t, board.NewTask{Title: "first", Script: []string{"sleep 0.2"}})
	var ids []string
	for range 5 {
		ids = append(ids, h.add(t, board.NewTask{Title: "after", Script: []string{"sleep 0.2"}, After: []string{first.ID}}).ID)
	}
	last := h.add(t, board.NewTask{Title: "last", Script: []string{"true"}, After: ids})
	maxRunning := 0
	deadline := time.Now().Add(60 * time.Second)
	for {
		runs, err := h.db.RunningRuns(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		maxRunning = max(maxRunning, len(runs))
		tk, err := h.db.GetTask(t.Context(), last.ID)
		if err != nil {
			t.Fatal(err)
		}
		if tk.Status == store.TaskDone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("last task is %s", tk.Status)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if maxRunning > 2 {
		t.Errorf("%d runs at once, want at most 2", maxRunning)
	}
	// Each task started only after its parents were done.
	finished := map[string]time.Time{}
	started := map[string]time.Time{}
	for _, id := range append([]string{first.ID, last.ID}, ids...) {
		runs, err := h.db.TaskRuns(t.Context(), id)
		if err != nil || len(runs) != 1 || runs[0].Status != store.TaskRunSucceeded {
			t.Fatalf("runs of %s: %+v, %v", id, runs, err)
		}
		started[id], finished[id] = runs[0].Started, runs[0].Finished
	}
	for _, id := range ids {
		if started[id].Before(finished[first.ID]) {
			t.Errorf("%s started before its parent finished", id)
		}
		if started[last.ID].Before(finished[id]) {
			t.Errorf("last started before %s finished", id)
		}
	}
}

// TestShutdownKillsWorkers: cancelling the dispatcher kills every
// worker's process group and records the runs as failed.
func TestShutdownKillsWorkers(t *testing.T) {
	h := startHost(t, hostSetup{})
	tk := h.add(t, board.NewTask{Title: "long", Script: []string{"sleep 30"}})
	var run store.TaskRun
	deadline := time.Now().Add(60 * time.Second)
	for {
		runs, _ := h.db.RunningRuns(t.Context())
		if len(runs) == 1 && runs[0].PID > 0 && strings.Contains(readLog(t, runs[0].Log), "$ sleep 30") {
			run = runs[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no worker")
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	h.cancel()
	if err := <-h.done; err != nil {
		t.Fatal(err)
	}
	h.done <- nil // for the cleanup's stop
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("shutdown took %v", d)
	}
	if err := syscall.Kill(run.PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("worker %d after shutdown: %v, want gone", run.PID, err)
	}
	got, err := h.db.GetTask(t.Context(), tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.TaskReady || got.Retries != 1 || !strings.Contains(got.LastError, "shut down") {
		t.Errorf("task after shutdown: %+v", got)
	}
}

// TestRecoverOpenRuns: a run left open by a host that died is failed at
// start and its task runs again.
func TestRecoverOpenRuns(t *testing.T) {
	var stale string
	h := startHost(t, hostSetup{before: func(db *sqlite.DB) {
		ctx := context.Background()
		if _, err := db.AddTask(ctx, store.Task{ID: "t1", Title: "t1", Workspace: store.WorkspaceScratch, Script: []string{"true"}}); err != nil {
			t.Fatal(err)
		}
		_, r, err := db.ClaimTask(ctx, store.TaskClaim{Run: "stale-run"})
		if err != nil {
			t.Fatal(err)
		}
		stale = r.ID
	}})
	got := h.waitTask(t, "t1", "done", status(store.TaskDone))
	if got.Retries != 1 || !strings.Contains(got.LastError, "host restarted") {
		t.Errorf("recovered task: %+v", got)
	}
	r, err := h.db.GetRun(t.Context(), stale)
	if err != nil || r.Status != store.TaskRunFailed {
		t.Errorf("stale run: %+v, %v", r, err)
	}
}

func TestNewRefuses(t *testing.T) {
	state, scratch := t.TempDir(), t.TempDir()
	ok := Options{Board: &sqlite.DB{}, Runner: &runner.Runner{}, Sandbox: &sandbox.Sandbox{}, Executable: "/bin/true", StateDir: state, ScratchDir: scratch}
	if _, err := New(ok); err != nil {
		t.Fatalf("valid options: %v", err)
	}
	for name, edit := range map[string]func(*Options){
		"no store":            func(o *Options) { o.Board = nil },
		"no runner":           func(o *Options) { o.Runner = nil },
		"no sandbox":          func(o *Options) { o.Sandbox = nil },
		"relative exe":        func(o *Options) { o.Executable = "warden" },
		"no executable":       func(o *Options) { o.Executable = "" },
		"relative state":      func(o *Options) { o.StateDir = "state" },
		"no state":            func(o *Options) { o.StateDir = "" },
		"no scratch":          func(o *Options) { o.ScratchDir = "" },
		"relative scratch":    func(o *Options) { o.ScratchDir = "scratch" },
		"scratch in state":    func(o *Options) { o.ScratchDir = filepath.Join(state, "scratch") },
		"scratch is state":    func(o *Options) { o.ScratchDir = state + "/" },
		"state in scratch":    func(o *Options) { o.StateDir = filepath.Join(scratch, "x", "..", "state") },
		"scratch holds state": func(o *Options) { o.ScratchDir = filepath.Dir(state) },
	} {
		o := ok
		edit(&o)
		if _, err := New(o); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
	o := ok
	o.ScratchDir = state + "-scratch" // a sibling that shares a prefix is fine
	if _, err := New(o); err != nil {
		t.Errorf("sibling scratch directory: %v", err)
	}
}
