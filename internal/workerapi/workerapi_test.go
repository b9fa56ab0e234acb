package workerapi

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wardenhq/warden/internal/board"
	"github.com/wardenhq/warden/internal/execenv"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner/runnertest"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
	"github.com/wardenhq/warden/internal/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// env is a worker socket served by a real store, gate and runner.
type env struct {
	db     *sqlite.DB
	socket string
	state  string
	cron   *fakeCron
	nrun   int
}

// fakeCron records what cron_run asked for.
type fakeCron struct {
	mu      sync.Mutex
	parents []owner.Owner
	ctxOwn  []owner.Owner
}

func (f *fakeCron) RunNow(ctx context.Context, name string, parent owner.Owner) (string, error) {
	if name == "missing" {
		return "", errors.New("no such job")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	o, _ := owner.From(ctx)
	f.parents = append(f.parents, parent)
	f.ctxOwn = append(f.ctxOwn, o)
	return "cron-run-1", nil
}

func (f *fakeCron) Wait(context.Context, string) (string, error) { return "succeeded", nil }

// serve serves a worker API with options o on socket until the test
// ends.
func serve(t *testing.T, socket string, o Options) {
	t.Helper()
	ln, err := Listen(socket)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(o).Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
}

func newEnv(t *testing.T, kanbanMode string, tweak func(*Options)) *env {
	t.Helper()
	rf := runnertest.New(t, runnertest.Options{Policy: "approvals:\n  kanban_mode: " + kanbanMode + "\n", Paths: gate.Paths{Home: t.TempDir()},
		Terminal: tools.Terminal{Env: execenv.Build([]string{"PATH=/usr/bin:/bin"}, nil, nil)}})
	state, db, r := rf.Dir, rf.DB, rf.Runner
	e := &env{db: db, socket: filepath.Join(state, "run", SocketName), state: state, cron: &fakeCron{}}
	o := Options{Board: board.New(board.Options{Store: db}), Runner: r, Cron: e.cron, ScratchDir: filepath.Join(state, "scratch"), FailureLimit: 2}
	if tweak != nil {
		tweak(&o)
	}
	serve(t, e.socket, o)
	return e
}

// claimed adds a task and claims it as a worker of pid would be, with a
// token; it returns the task, run and token secret.
func (e *env) claimed(t *testing.T, pid int, script ...string) (store.Task, store.TaskRun, string) {
	t.Helper()
	return e.claimedTask(t, pid, store.Task{Script: script})
}

// claimedTask is claimed for any task (its id, title and workspace are
// set here).
func (e *env) claimedTask(t *testing.T, pid int, task store.Task) (store.Task, store.TaskRun, string) {
	t.Helper()
	ctx := t.Context()
	e.nrun++
	id := "t" + string(rune('a'+e.nrun))
	task.ID, task.Title, task.Workspace = id, id, store.WorkspaceScratch
	if _, err := e.db.AddTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	tk, r, err := e.db.ClaimTask(ctx, store.TaskClaim{Run: "run-" + id})
	if err != nil {
		t.Fatal(err)
	}
	if tk.ID != id {
		t.Fatalf("claimed %s, want %s", tk.ID, id)
	}
	if err := e.db.SetRunPID(ctx, r.ID, pid); err != nil {
		t.Fatal(err)
	}
	secret, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := e.db.MintToken(ctx, store.WorkerToken{Hash: TokenHash(secret), Task: id, Run: r.ID, Created: now, Expires: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	return tk, r, secret
}

// worker claims a task of script as this process would and says hello
// with its token: the connection, the task, its run and the hello.
func (e *env) worker(t *testing.T, script ...string) (*Client, store.Task, store.TaskRun, Hello) {
	t.Helper()
	tk, r, secret := e.claimed(t, os.Getpid(), script...)
	c := e.dial(t)
	h, err := c.Hello(t.Context(), secret, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	return c, tk, r, h
}

func (e *env) dial(t *testing.T) *Client {
	t.Helper()
	c, err := Dial(t.Context(), e.socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestSocketIsPrivate(t *testing.T) {
	e := newEnv(t, "deny", nil)
	for path, want := range map[string]os.FileMode{e.socket: 0o600, filepath.Dir(e.socket): 0o700} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", path, got, want)
		}
	}
	if _, err := Listen(e.socket); !errors.Is(err, ErrInUse) {
		t.Errorf("second Listen: %v, want ErrInUse", err)
	}
}

func TestNothingWithoutHello(t *testing.T) {
	e := newEnv(t, "approve", nil)
	ctx := t.Context()
	_, r, _ := e.claimed(t, os.Getpid(), "true")
	c := e.dial(t)
	if _, err := c.Decide(ctx, "echo hi"); !errors.Is(err, ErrRefused) {
		t.Errorf("decide without hello: %v, want refused", err)
	}
	if _, err := c.Step(ctx, "echo hi", 0, "hi\n"); !errors.Is(err, ErrRefused) {
		t.Errorf("step without hello: %v, want refused", err)
	}
	if err := c.Comment(ctx, "hi"); !errors.Is(err, ErrRefused) {
		t.Errorf("comment without hello: %v", err)
	}
	if _, err := c.Complete(ctx); !errors.Is(err, ErrRefused) {
		t.Errorf("complete without hello: %v", err)
	}
	if _, err := c.CronRun(ctx, "job", false); !errors.Is(err, ErrRefused) {
		t.Errorf("cron_run without hello: %v", err)
	}
	run, err := e.db.GetRun(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != store.TaskRunRunning || len(run.Steps) != 0 {
		t.Errorf("refused verbs touched the run: %+v", run)
	}
	decisions, err := e.db.Decisions(ctx, store.AuditFilter{})
	if err != nil || len(decisions) != 0 {
		t.Errorf("refused verbs reached the gate: %d decisions, %v", len(decisions), err)
	}
}

func TestTokens(t *testing.T) {
	e := newEnv(t, "deny", nil)
	ctx := t.Context()
	ta, ra, secretA := e.claimed(t, os.Getpid(), "true")
	tb, _, secretB := e.claimed(t, os.Getpid(), "true")

	if _, err := e.dial(t).Hello(ctx, "not-a-token", ta.ID); !errors.Is(err, ErrRefused) {
		t.Errorf("unknown token: %v", err)
	}
	// A's token presented for B: refused, and burnt.
	if _, err := e.dial(t).Hello(ctx, secretA, tb.ID); !errors.Is(err, ErrRefused) {
		t.Errorf("token of another task: %v", err)
	}
	if _, err := e.dial(t).Hello(ctx, secretA, ta.ID); !errors.Is(err, ErrRefused) {
		t.Errorf("token after it was shown for another task: %v", err)
	}
	// B's token works once.
	c := e.dial(t)
	h, err := c.Hello(ctx, secretB, tb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if h.Task.ID != tb.ID || h.Run == ra.ID || !strings.HasPrefix(h.Owner, "kanban:"+tb.ID) || !strings.Contains(h.Owner, "run="+h.Run) {
		t.Errorf("hello: %+v", h)
	}
	if h.Dir != filepath.Join(e.state, "scratch", tb.ID) {
		t.Errorf("dir %q", h.Dir)
	}
	if fi, err := os.Stat(h.Dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("scratch workspace: %v, %v", fi, err)
	}
	if _, err := c.Hello(ctx, secretB, tb.ID); !errors.Is(err, ErrRefused) {
		t.Errorf("second hello on one connection: %v", err)
	}
	if _, err := e.dial(t).Hello(ctx, secretB, tb.ID); !errors.Is(err, ErrRefused) {
		t.Errorf("reused token: %v", err)
	}
	// The refusals all read the same.
	_, err1 := e.dial(t).Hello(ctx, "x", ta.ID)
	_, err2 := e.dial(t).Hello(ctx, secretB, tb.ID)
	if err1 == nil || err2 == nil || err1.Error() != err2.Error() {
		t.Errorf("refusals differ: %v / %v", err1, err2)
	}
}

func TestHelloChecksThePeer(t *testing.T) {
	e := newEnv(t, "deny", nil)
	// The run's worker is another process: this test process holding
	// the token is neither it nor its descendant.
	other := exec.Command("sleep", "30")
	other.Env = []string{}
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		other.Process.Kill()
		other.Wait()
	}()
	tk, _, secret := e.claimed(t, other.Process.Pid, "true")
	if _, err := e.dial(t).Hello(t.Context(), secret, tk.ID); !errors.Is(err, ErrRefused) {
		t.Errorf("token shown by a process that is not the run's worker: %v", err)
	}
}

// TestDecideIsTheHosts: the host's gate decides each command as the
// run's owner and records the step under its own decision; the worker
// says only how an allowed command ended, and only for the command that
// was decided.
func TestDecideIsTheHosts(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		allowed bool
	}{{"deny", false}, {"approve", true}} {
		t.Run(tc.mode, func(t *testing.T) {
			e := newEnv(t, tc.mode, func(o *Options) { o.StepEnv = []string{"PATH=/usr/bin:/bin", "LANG=C"} })
			ctx := t.Context()
			c, tk, r, h := e.worker(t, "true")
			if strings.Join(h.Env, " ") != "PATH=/usr/bin:/bin LANG=C" || h.LeaseMillis != 0 {
				t.Errorf("hello: env %q, lease %d", h.Env, h.LeaseMillis)
			}
			d, err := c.Decide(ctx, "echo hello")
			if err != nil || !d.Allowed || d.Verdict != "allow" {
				t.Fatalf("echo: %+v, %v", d, err)
			}
			// Only the decided command may be reported, once.
			if _, err := c.Step(ctx, "echo hello; rm -rf ~", 0, ""); err == nil {
				t.Error("a step other than the decided one was recorded")
			}
			if n, err := c.Step(ctx, "echo hello", 0, "hello\n"); err != nil || n != 0 {
				t.Errorf("step: %d, %v", n, err)
			}
			if _, err := c.Step(ctx, "echo hello", 0, "hello\n"); err == nil {
				t.Error("a step was reported twice")
			}
			d, err = c.Decide(ctx, "rm -rf build/")
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed != tc.allowed || d.Rule != gate.RuleKanbanMode {
				t.Errorf("rm -rf under kanban_mode %s: %+v", tc.mode, d)
			}
			if !tc.allowed && (d.Message == "" || d.N != 1) {
				t.Errorf("denied: %+v", d)
			}
			if tc.allowed {
				// The worker asks again without reporting: the host
				// records the allowed step as unreported.
				if _, err := c.Decide(ctx, "true"); err != nil {
					t.Fatal(err)
				}
			}
			run, err := e.db.GetRun(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(run.Steps) != 2 || run.Steps[0].Output != "hello\n" || run.Steps[0].Verdict != "allow" ||
				run.Steps[1].Command != "rm -rf build/" || run.Steps[1].Rule != gate.RuleKanbanMode ||
				run.Steps[1].ExitCode != -1 || (run.Steps[1].Verdict == "allow") != tc.allowed {
				t.Errorf("history: %+v", run.Steps)
			}
			// The audit log names the connection's owner: identity came
			// from the token, not from anything the worker sent.
			ds, err := e.db.Decisions(ctx, store.AuditFilter{})
			if err != nil {
				t.Fatal(err)
			}
			want := 2
			if tc.allowed {
				want = 3
			}
			if len(ds) != want {
				t.Fatalf("%d decisions, want %d", len(ds), want)
			}
			for _, d := range ds {
				if !strings.HasPrefix(d.OwnerText, "kanban:"+tk.ID) || !strings.Contains(d.OwnerText, "run="+r.ID) || d.Session != "kanban:"+tk.ID {
					t.Errorf("audit owner %q session %q", d.OwnerText, d.Session)
				}
			}
		})
	}
}

func TestRunEnds(t *testing.T) {
	e := newEnv(t, "deny", nil)
	ctx := t.Context()
	hello := func(script ...string) (*Client, store.Task, store.TaskRun) {
		t.Helper()
		c, tk, r, _ := e.worker(t, script...)
		return c, tk, r
	}

	c, tk, _ := hello("true")
	if err := c.Comment(ctx, "starting"); err != nil {
		t.Fatal(err)
	}
	if st, err := c.Complete(ctx); err != nil || st != store.TaskDone {
		t.Errorf("complete: %s, %v", st, err)
	}
	if _, err := c.Decide(ctx, "true"); !errors.Is(err, ErrEnded) {
		t.Errorf("decide after complete: %v, want ErrEnded", err)
	}
	cs, _ := e.db.Comments(ctx, tk.ID)
	if len(cs) != 1 || !strings.HasPrefix(cs[0].Author, "kanban:"+tk.ID) {
		t.Errorf("comments: %+v", cs)
	}

	c, tk, _ = hello("true")
	if st, err := c.Block(ctx, "needs a human"); err != nil || st != store.TaskBlocked {
		t.Errorf("block: %s, %v", st, err)
	}
	got, _ := e.db.GetTask(ctx, tk.ID)
	cs, _ = e.db.Comments(ctx, tk.ID)
	if got.LastError != "needs a human" || len(cs) != 1 || cs[0].Body != "blocked: needs a human" {
		t.Errorf("blocked task %+v, comments %+v", got, cs)
	}

	// An operator stops the run: the worker hears "ended" next time.
	c, tk, _ = hello("true")
	if _, err := e.db.SetTaskStatus(ctx, tk.ID, store.TaskBlocked, "stop", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Decide(ctx, "true"); !errors.Is(err, ErrEnded) {
		t.Errorf("decide after the operator blocked the task: %v", err)
	}

	// Last: a failed task is ready again and would be claimed next.
	c, _, _ = hello("false")
	if st, err := c.Fail(ctx, "step 1 exited 1"); err != nil || st != store.TaskReady {
		t.Errorf("fail: %s, %v", st, err)
	}
	if err := c.Comment(ctx, "late"); !errors.Is(err, ErrEnded) {
		t.Errorf("comment after fail: %v", err)
	}
}

func TestReviewOption(t *testing.T) {
	e := newEnv(t, "deny", func(o *Options) { o.Review = true })
	c, _, _, _ := e.worker(t, "true")
	if st, err := c.Complete(t.Context()); err != nil || st != store.TaskReview {
		t.Errorf("complete with review: %s, %v", st, err)
	}
}

func TestCronRunHasTheRunAsParent(t *testing.T) {
	e := newEnv(t, "deny", nil)
	ctx := t.Context()
	c, tk, r, h := e.worker(t, "true")
	res, err := c.CronRun(ctx, "backup", true)
	if err != nil || res.RunID != "cron-run-1" || res.Status != "succeeded" {
		t.Fatalf("cron_run: %+v, %v", res, err)
	}
	if _, err := c.CronRun(ctx, "missing", false); !errors.Is(err, ErrInternal) || !strings.Contains(err.Error(), "no such job") {
		t.Errorf("cron_run of a missing job: %v", err)
	}
	e.cron.mu.Lock()
	defer e.cron.mu.Unlock()
	if len(e.cron.parents) != 1 {
		t.Fatalf("RunNow calls: %d", len(e.cron.parents))
	}
	p := e.cron.parents[0]
	if p.Kind() != owner.KindKanban || p.Task() != tk.ID || p.Run() != r.ID || p.String() != h.Owner {
		t.Errorf("parent %s, want the run's owner %s", p, h.Owner)
	}
	if !e.cron.ctxOwn[0].Equal(p) {
		t.Errorf("ctx owner %s, want %s", e.cron.ctxOwn[0], p)
	}
}

func TestCronRunWithoutCron(t *testing.T) {
	e := newEnv(t, "deny", func(o *Options) { o.Cron = nil })
	c, _, _, _ := e.worker(t, "true")
	if _, err := c.CronRun(t.Context(), "backup", false); !errors.Is(err, ErrRefused) {
		t.Errorf("cron_run without a scheduler: %v", err)
	}
}

func TestHelloTimeout(t *testing.T) {
	e := newEnv(t, "deny", func(o *Options) { o.HelloTimeout = 100 * time.Millisecond })
	c, err := net.Dial("unix", e.socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("a silent connection was kept: %v", err)
	}
}
