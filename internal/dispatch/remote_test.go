package dispatch

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
	"github.com/wardenhq/warden/internal/workerapi"
)

// remoteWorker is a worker process on "another machine": this test
// binary as `warden worker --connect`, with its own sandbox and state.
type remoteWorker struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr bytes.Buffer
}

// startRemote starts a remote worker for task with the token in a file,
// running its steps in workspace.
func startRemote(t *testing.T, h *testHost, task, token, pin, workspace string) *remoteWorker {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	w := &remoteWorker{cmd: exec.Command(exe, "remote-worker", "--task", task, "--connect", h.addr, "--pin", pin,
		"--token-file", tokenFile, "--workspace", workspace, "--state", state)}
	w.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8", "SECRET_TOKEN=worker-own"}
	w.cmd.Stdout, w.cmd.Stderr = &w.stdout, &w.stderr
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = w.cmd.Process.Kill()
		_ = w.cmd.Wait()
	})
	return w
}

// wait waits for the worker to exit and returns its error.
func (w *remoteWorker) wait(t *testing.T) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- w.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(60 * time.Second):
		t.Fatalf("the remote worker did not end; stdout:\n%s\nstderr:\n%s", w.stdout.String(), w.stderr.String())
		return nil
	}
}

// TestRemoteWorker: a worker on "another machine" connects over TLS
// with a pinned certificate and a token an operator issued for one
// task, runs the task's steps in its own sandbox, and asks the host to
// decide each one as the run's owner. A denied step never runs (the
// directory is still on disk); an allowed one does; the steps get the
// host's passthrough environment, not the worker's own secrets.
func TestRemoteWorker(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want store.TaskStatus
	}{{"deny", store.TaskBlocked}, {"approve", store.TaskDone}} {
		t.Run("kanban_mode "+tc.mode, func(t *testing.T) {
			work := t.TempDir()
			if err := os.Mkdir(filepath.Join(work, "build"), 0o700); err != nil {
				t.Fatal(err)
			}
			tk := store.Task{ID: "remote-1", Title: "remote", Workspace: "dir:" + work,
				Script: []string{"env > env.txt; echo made > made.txt", "rm -rf build"}}
			var ticket Ticket
			h := startHost(t, hostSetup{kanbanMode: tc.mode, remote: true, concurrency: 1, beforeRun: func(d *Dispatcher, db *sqlite.DB) {
				ticket = issue(t, d, db, tk)
			}})
			w := startRemote(t, h, tk.ID, ticket.Token, h.pin, work)
			if err := w.wait(t); err != nil {
				t.Fatalf("remote worker: %v\nstdout:\n%s\nstderr:\n%s", err, w.stdout.String(), w.stderr.String())
			}
			got := h.waitTask(t, tk.ID, string(tc.want), status(store.TaskDone, store.TaskBlocked))
			if got.Status != tc.want {
				t.Fatalf("task %s, want %s; worker:\n%s", got.Status, tc.want, w.stdout.String())
			}
			if b, err := os.ReadFile(filepath.Join(work, "made.txt")); err != nil || string(b) != "made\n" {
				t.Errorf("the allowed step's file: %q, %v", b, err)
			}
			env, _ := os.ReadFile(filepath.Join(work, "env.txt"))
			if bytes.Contains(env, []byte("SECRET_TOKEN")) || !bytes.Contains(env, []byte("PATH=")) {
				t.Errorf("the step's environment:\n%s", env)
			}
			_, statErr := os.Stat(filepath.Join(work, "build"))
			if ran := errors.Is(statErr, os.ErrNotExist); ran != (tc.mode == "approve") {
				t.Errorf("rm -rf build ran: %v under kanban_mode %s (%v)", ran, tc.mode, statErr)
			}
			run, err := h.db.GetRun(t.Context(), ticket.Run)
			if err != nil {
				t.Fatal(err)
			}
			if len(run.Steps) != 2 || run.Steps[1].Rule != gate.RuleKanbanMode || (run.Steps[1].Verdict == "allow") != (tc.mode == "approve") {
				t.Errorf("steps: %+v", run.Steps)
			}
			// Every decision was the dispatched run's, from the host's
			// record.
			decidedAs(t, h, 2, tk.ID, ticket.Run)
		})
	}
}

// TestRemoteTokens: a wrong pin never reaches hello; an expired, reused,
// other task's, local or never-issued token is refused alike on the TLS
// listener; a remote token is refused on the local socket.
func TestRemoteTokens(t *testing.T) {
	tickets := map[string]Ticket{}
	h := startHost(t, hostSetup{remote: true, concurrency: 1, beforeRun: func(d *Dispatcher, db *sqlite.DB) {
		for _, id := range []string{"a", "b", "e"} {
			tickets[id] = issue(t, d, db, store.Task{ID: id, Title: id, Workspace: store.WorkspaceScratch, Script: []string{"true"}})
		}
		tk := store.Task{ID: "d", Title: "d", Workspace: store.WorkspaceScratch, Script: []string{"true"}}
		if _, err := db.AddTask(t.Context(), tk); err != nil {
			t.Fatal(err)
		}
		td, err := d.Remote(t.Context(), "d", time.Nanosecond)
		if err != nil {
			t.Fatal(err)
		}
		tickets["d"] = td
	}})
	ctx := t.Context()
	pin, _ := workerapi.ParsePin(h.pin)
	dial := func() *workerapi.Client {
		c, err := workerapi.DialTLS(ctx, h.addr, pin)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	ws := t.TempDir()

	wrong := bytes.Clone(pin)
	wrong[0] ^= 1
	if c, err := workerapi.DialTLS(ctx, h.addr, wrong); !errors.Is(err, workerapi.ErrPin) {
		if c != nil {
			c.Close()
		}
		t.Errorf("a host whose certificate is not the pinned one: %v, want ErrPin", err)
	}

	ta, tb := tickets["a"], tickets["b"]
	var refusals []error
	refuse := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, workerapi.ErrRefused) {
			t.Errorf("%s: %v, want refused", what, err)
		}
		refusals = append(refusals, err)
	}
	_, err := dial().HelloIn(ctx, "not-a-token", "a", ws)
	refuse("unknown token", err)
	// A's token shown for B: refused and burnt.
	_, err = dial().HelloIn(ctx, ta.Token, "b", ws)
	refuse("another task's token", err)
	_, err = dial().HelloIn(ctx, ta.Token, "a", ws)
	refuse("a token burnt by a wrong task", err)
	// B's token over the local socket: no worker process of this host.
	lc, err := workerapi.Dial(ctx, h.d.Socket())
	if err != nil {
		t.Fatal(err)
	}
	_, err = lc.Hello(ctx, tb.Token, "b")
	lc.Close()
	refuse("a remote token on the local socket", err)
	// A local worker's token on the TLS listener.
	// (the local dispatcher's own run, with a second token minted for it)
	if _, err := h.db.AddTask(ctx, store.Task{ID: "c", Title: "c", Workspace: store.WorkspaceScratch, Script: []string{"sleep 30"}}); err != nil {
		t.Fatal(err)
	}
	h.d.Poke()
	var local store.TaskRun
	for deadline := time.Now().Add(60 * time.Second); local.ID == ""; {
		runs, _ := h.db.RunningRuns(ctx)
		for _, r := range runs {
			if r.Task == "c" && r.PID > 0 {
				local = r
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no local worker for c")
		}
		time.Sleep(10 * time.Millisecond)
	}
	secret, _ := workerapi.NewToken()
	now := time.Now()
	if err := h.db.MintToken(ctx, store.WorkerToken{Hash: workerapi.TokenHash(secret), Task: "c", Run: local.ID, Created: now, Expires: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	_, err = dial().HelloIn(ctx, secret, "c", ws)
	refuse("a local token on the TLS listener", err)
	// An expired token.
	_, err = dial().HelloIn(ctx, tickets["d"].Token, "d", ws)
	refuse("an expired token", err)
	// A good one works once.
	te := tickets["e"]
	c := dial()
	hello, err := c.HelloIn(ctx, te.Token, "e", ws)
	if err != nil || hello.Run != te.Run || hello.Dir != ws || hello.LeaseMillis <= 0 || hello.Env != nil {
		t.Fatalf("hello: %+v, %v", hello, err)
	}
	_, err = dial().HelloIn(ctx, te.Token, "e", ws)
	refuse("a reused token", err)
	for _, e := range refusals[1:] {
		if e.Error() != refusals[0].Error() {
			t.Errorf("refusals differ: %v / %v", refusals[0], e)
		}
	}
	// A script task's run has no model to call.
	if _, err := c.Model(ctx, nil); !errors.Is(err, workerapi.ErrRefused) {
		t.Errorf("model verb for a script task: %v", err)
	}
	if _, err := c.Complete(ctx); err != nil {
		t.Fatal(err)
	}
	// A task that is not ready is not issued.
	if _, err := h.d.Remote(ctx, "e", time.Minute); !errors.Is(err, ErrNotIssuable) {
		t.Errorf("a done task: %v", err)
	}
}

// TestRemoteWorkerKilledMidStep: a remote worker killed mid-step takes
// its step with it (the step's sandbox dies with its worker); the run's
// lease lapses, the run is failed and the task is claimed again and run
// once more (here by a local worker), never while the first step lives.
func TestRemoteWorkerKilledMidStep(t *testing.T) {
	work := t.TempDir()
	// A sleep no other test runs: found anywhere in /proc, re-parented
	// or not.
	step := `if [ -e first ]; then echo rerun >> log; else touch first; echo start >> log; sleep 30.4142; echo late >> log; fi`
	tk := store.Task{ID: "killed", Title: "killed", Workspace: "dir:" + work, Script: []string{step}}
	var ticket Ticket
	h := startHost(t, hostSetup{kanbanMode: "deny", remote: true, concurrency: 1, failureLimit: 3, beforeRun: func(d *Dispatcher, db *sqlite.DB) {
		ticket = issue(t, d, db, tk)
	}})
	ctx := t.Context()
	w := startRemote(t, h, tk.ID, ticket.Token, h.pin, work)
	deadline := time.Now().Add(60 * time.Second)
	for len(anywhere(t, "sleep 30.4142")) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the remote step never started; worker:\n%s\n%s", w.stdout.String(), w.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := w.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = w.wait(t)
	// The step died with its worker, before the lease could lapse.
	deadline = time.Now().Add(10 * time.Second)
	for len(anywhere(t, "sleep 30.4142")) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the killed worker's step still runs")
		}
		time.Sleep(10 * time.Millisecond)
	}
	gone := time.Now()
	got := h.waitTask(t, tk.ID, "done after a retry", status(store.TaskDone, store.TaskBlocked))
	if got.Status != store.TaskDone || got.Retries != 1 || !strings.Contains(got.LastError, "lease lapsed") {
		t.Errorf("task: %+v", got)
	}
	first, err := h.db.GetRun(ctx, ticket.Run)
	if err != nil || first.Status != store.TaskRunFailed || first.Finished.Before(gone.Add(-time.Second)) {
		t.Errorf("the remote run: %+v, %v", first, err)
	}
	runs, err := h.db.TaskRuns(ctx, tk.ID)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs: %+v, %v", runs, err)
	}
	if runs[0].Started.Before(first.Finished) {
		t.Errorf("the retry started %v, before the lapsed run ended %v", runs[0].Started, first.Finished)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "log")); string(b) != "start\nrerun\n" {
		t.Errorf("log:\n%s", b)
	}
}

// TestRemoteLeaseOutlivesALongDecision: heartbeats keep a remote run's
// lease while the host takes longer than the lease to decide (a human's
// answer may take that long).
func TestRemoteLeaseOutlivesALongDecision(t *testing.T) {
	var ticket Ticket
	h := startHost(t, hostSetup{remote: true, concurrency: 1, remoteLease: 4 * time.Second, beforeRun: func(d *Dispatcher, db *sqlite.DB) {
		ticket = issue(t, d, db, store.Task{ID: "slow", Title: "slow", Workspace: store.WorkspaceScratch, Script: []string{"true"}})
	}})
	ctx := t.Context()
	pin, _ := workerapi.ParsePin(h.pin)
	c, err := workerapi.DialTLS(ctx, h.addr, pin)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	hello, err := c.HelloIn(ctx, ticket.Token, "slow", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	lctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.KeepLease(lctx, time.Duration(hello.LeaseMillis)*time.Millisecond, start, cancel)
	}()
	// Two leases and more pass with no request: only heartbeats.
	time.Sleep(9 * time.Second)
	if lctx.Err() != nil {
		t.Fatalf("the lease was lost: %v", context.Cause(lctx))
	}
	if _, err := c.Decide(ctx, "true"); err != nil {
		t.Fatalf("decide after three leases: %v", err)
	}
	cancel(nil)
	<-done
	// Silence: the host fails the run a lease later.
	got := h.waitTask(t, "slow", "retried", func(tk store.Task) bool { return tk.Retries == 1 })
	if !strings.Contains(got.LastError, "lease lapsed") {
		t.Errorf("task after silence: %+v", got)
	}
	if _, err := c.Decide(ctx, "true"); err == nil {
		t.Error("a call after the lease lapsed was answered")
	}
}

// anywhere lists the pids of the processes on this machine whose
// command line starts with prefix (a step's sandbox is re-parented away
// from the test when its worker dies).
func anywhere(t testing.TB, prefix string) []int {
	t.Helper()
	return processes(t, prefix, nil)
}

// issue adds tk and issues it to a remote worker for a minute.
func issue(t *testing.T, d *Dispatcher, db *sqlite.DB, tk store.Task) Ticket {
	t.Helper()
	if _, err := db.AddTask(t.Context(), tk); err != nil {
		t.Fatal(err)
	}
	ticket, err := d.Remote(t.Context(), tk.ID, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return ticket
}
