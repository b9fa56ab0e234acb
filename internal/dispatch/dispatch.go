// Package dispatch runs kanban tasks in worker processes.
//
// The Dispatcher lives in the host. It promotes tasks whose parents are
// done, claims ready tasks atomically, and for each claimed run spawns
// `EXECUTABLE worker --task ID`:
//
//   - in its own process group (Setpgid), so the whole group can be
//     killed, and so the admin boundary can tell its processes apart;
//   - in the task's workspace: its dir: path, or ScratchDir/TASK, which
//     is never inside the state directory;
//   - with stdin from /dev/null and stdout and stderr appended to a
//     per-run log file (LogDir/RUN.log, mode 0600);
//   - with an environment built by execenv from the parent environment
//     the edge handed in, plus only SocketEnv (the worker socket's path)
//     — never a copy of the host's environment (invariant 3);
//   - with a one-time token bound to this task run on an inherited file
//     descriptor, TokenFD (3): a pipe the child reads once, then closes.
//     The token is never in the environment or the arguments, where
//     /proc/PID/environ, /proc/PID/cmdline and every descendant could
//     read it; the host keeps only its hash.
//
// The worker says hello on the worker socket with the token; from then
// on it runs its task's steps itself, inside its sandbox, and the host's
// gate decides every one as the run's owner before it runs
// (internal/workerapi; docs/workers.md).
//
// An operator may instead issue a task to a remote worker (Remote): the
// task is claimed for a run with no local process, and a one-time token
// bound to it is handed to the operator; a worker on another machine
// presents it on the TLS listener (kanban.remote), runs the steps in its
// own sandbox and asks the host for every decision. Its run has a lease:
// when the worker falls silent, the run is failed and the task claimed
// again. When a worker exits, the dispatcher fences the
// run — every step still running for it is killed, and nothing more
// starts for it (sandbox.KillRun) — and only then, if the run is still
// open (the worker died, or exited without ending it), records a
// failure: the task goes back to ready with its retry count raised, or
// is blocked with the last error once FailureLimit is reached. A retry
// never overlaps the attempt it replaces. At most Concurrency workers
// run at once. When ctx ends, every worker's process group is killed and
// their runs recorded as failed ("host shut down"); runs left open by a
// host that crashed are failed the same way when the next one starts,
// after the host has fenced what the dead host left running
// (sandbox.Fence).
package dispatch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wardenhq/warden/internal/ancestry"
	"github.com/wardenhq/warden/internal/board"
	"github.com/wardenhq/warden/internal/execenv"
	"github.com/wardenhq/warden/internal/llm"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/sandbox"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/workerapi"
)

// fenceTimeout bounds the wait for a dead worker's steps to be gone.
const fenceTimeout = 30 * time.Second

// TokenFD is the file descriptor on which a worker finds its token: the
// first of exec.Cmd.ExtraFiles.
const TokenFD = 3

// SocketEnv names the one variable the dispatcher adds to a worker's
// environment: the worker socket's path. `warden worker` reads it at
// its edge.
const SocketEnv = "WARDEN_WORKER_SOCKET"

// Defaults.
const (
	DefaultFailureLimit = 3
	DefaultConcurrency  = 4
	DefaultTokenTTL     = time.Minute
	DefaultPoll         = 2 * time.Second
)

// Options configure a Dispatcher.
type Options struct {
	Board store.BoardStore
	// Boards is the host's one board service over Board: the dispatcher
	// promotes through it and takes its run ids from it. nil makes New
	// build one.
	Boards *board.Service
	// Runner decides the workers' commands (the host's runner.Runner).
	Runner workerapi.Runner
	// Sandbox starts the workers and fences runs; required.
	Sandbox *sandbox.Sandbox
	// Cron runs cron jobs for workers; nil refuses cron_run.
	Cron workerapi.CronRunner
	// Model answers the model calls of prompt tasks' agents, which run
	// in their workers (workerapi's model verb); nil means no model.
	Model llm.Client
	// MaxTurns caps the model calls of one run (llm.max_turns); zero
	// means agent.DefaultMaxTurns.
	MaxTurns int
	// Withhold are variable names no worker gets, whatever Passthrough
	// says: the model's API key variable (llm.api_key_env). The model
	// is the host's; its key stays with the host.
	Withhold []string
	// Executable is the warden binary; a worker is
	// `Executable worker --task ID`.
	Executable string
	// StateDir holds the worker socket (workerapi.SocketName) and, by
	// default, the logs.
	StateDir string
	// ScratchDir holds the scratch workspaces, one directory per task
	// (ScratchDir/TASK, mode 0700). It must be an absolute path outside
	// StateDir: an agent's workspace inside the state directory would
	// put warden's store, admin token and sockets a relative path away
	// from its commands (invariant 11).
	ScratchDir string
	// LogDir holds the per-run logs; "" means StateDir/logs.
	LogDir string
	// Environ is the parent environment as NAME=VALUE, given by the edge;
	// workers get execenv.Build of it.
	Environ []string
	// Passthrough are the operator's extra variable names
	// (tools.env_passthrough).
	Passthrough []string
	// FailureLimit blocks a task after this many failed runs; zero means
	// DefaultFailureLimit, negative never blocks.
	FailureLimit int
	// Concurrency is how many workers may run at once; zero means
	// DefaultConcurrency.
	Concurrency int
	// Review sends completed tasks to review instead of done.
	Review bool
	// BoardID names the board in owners; "" for a single-board host.
	BoardID string
	// Attend gives a run's owner the host's answer channel for a request
	// (workerapi.Options.Attend): the web console under kanban_mode ask.
	Attend func() owner.AnswerChannel
	// TokenTTL is how long a worker has to say hello; zero means
	// DefaultTokenTTL.
	TokenTTL time.Duration
	// Poll is how often the board is looked at without a Poke; zero
	// means DefaultPoll.
	Poll time.Duration
	// Groups, if set, learns each worker's process group while it may
	// hold processes, for the admin boundary (ancestry.Boundary).
	Groups *ancestry.Groups
	// Ended, if set, hears the session key ("kanban:TASK") of a task
	// whose run left it done or in review: its session is over (the
	// host drops the task's shell state). A task that will run again
	// keeps its session.
	Ended func(ctx context.Context, session string)
	// RemoteListener, if set, serves remote workers
	// (workerapi.ListenTLS); Remote issues tasks to them. Run closes it.
	RemoteListener net.Listener
	// RemoteLease is a remote run's lease; zero means
	// workerapi.DefaultLease.
	RemoteLease time.Duration
	// Network is the host's sandbox.network, told to remote workers.
	Network bool
	// RemoteOnly spawns no local worker: ready tasks wait for an
	// operator to issue them to remote workers (kanban.remote.only).
	RemoteOnly bool
	Logger     *slog.Logger
	Now        func() time.Time

	// Holder names this dispatcher's claims (the host's id). Lease, when
	// positive, gives each claim a lease of that length, renewed every
	// third of it while the worker runs: a host that dies loses its
	// tasks to another host's reclaim (cluster), and a dispatcher that
	// finds its claim gone kills the worker.
	Holder string
	Lease  time.Duration
	// Alive, if set, tells the holders of open runs that are still
	// alive (other hosts sharing the store): recovery at start leaves
	// their runs alone. Nil fails every open run at start.
	Alive func(holder string) bool
}

// Dispatcher claims ready tasks and runs each in a worker process.
type Dispatcher struct {
	o      Options
	log    *slog.Logger
	srv    *workerapi.Server
	socket string
	wake   chan struct{}
}

// New returns a Dispatcher; Run starts it.
func New(o Options) (*Dispatcher, error) {
	switch {
	case o.Board == nil:
		return nil, errors.New("new dispatcher: no board store")
	case o.Runner == nil:
		return nil, errors.New("new dispatcher: no runner")
	case o.Sandbox == nil:
		return nil, errors.New("new dispatcher: no sandbox")
	case o.Executable == "" || !filepath.IsAbs(o.Executable):
		return nil, fmt.Errorf("new dispatcher: executable %q: want an absolute path", o.Executable)
	case o.StateDir == "" || !filepath.IsAbs(o.StateDir):
		return nil, fmt.Errorf("new dispatcher: state directory %q: want an absolute path", o.StateDir)
	case o.ScratchDir == "" || !filepath.IsAbs(o.ScratchDir):
		return nil, fmt.Errorf("new dispatcher: scratch directory %q: want an absolute path", o.ScratchDir)
	case within(o.ScratchDir, o.StateDir) || within(o.StateDir, o.ScratchDir):
		return nil, fmt.Errorf("new dispatcher: scratch directory %s and state directory %s must not contain each other: workspaces would reach warden's own files", o.ScratchDir, o.StateDir)
	}
	if o.LogDir == "" {
		o.LogDir = filepath.Join(o.StateDir, "logs")
	}
	if o.FailureLimit == 0 {
		o.FailureLimit = DefaultFailureLimit
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.TokenTTL <= 0 {
		o.TokenTTL = DefaultTokenTTL
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Boards == nil {
		o.Boards = board.New(board.Options{Store: o.Board, Now: o.Now})
	}
	o.Passthrough = slices.DeleteFunc(slices.Clone(o.Passthrough), func(n string) bool { return slices.Contains(o.Withhold, n) })
	d := &Dispatcher{
		o: o, log: o.Logger.With("component", "dispatch"),
		socket: filepath.Join(o.StateDir, workerapi.SocketName),
		wake:   make(chan struct{}, 1),
	}
	if o.RemoteLease <= 0 {
		o.RemoteLease = workerapi.DefaultLease
	}
	d.o.RemoteLease = o.RemoteLease
	d.srv = workerapi.New(workerapi.Options{
		Board: o.Boards, Runner: o.Runner, Cron: o.Cron, Model: o.Model, MaxTurns: o.MaxTurns, BoardID: o.BoardID, Attend: o.Attend,
		ScratchDir: d.scratch(), FailureLimit: o.FailureLimit, Review: o.Review,
		StepEnv: d.env(nil), Passthrough: d.o.Passthrough, Network: o.Network,
		Lease: o.RemoteLease, Lapsed: func(string) { d.Poke() },
		Logger: o.Logger, Now: o.Now,
	})
	return d, nil
}

// env is a worker's (or its steps') environment: execenv.Build of the
// host's with the operator's passthrough names, never a withheld
// variable.
func (d *Dispatcher) env(extra map[string]string) []string {
	return slices.DeleteFunc(execenv.Build(d.o.Environ, d.o.Passthrough, extra), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(d.o.Withhold, name)
	})
}

// Socket is the worker socket's path.
func (d *Dispatcher) Socket() string { return d.socket }

func (d *Dispatcher) scratch() string { return d.o.ScratchDir }

// within reports whether p is dir or inside it (lexically, both
// absolute).
func within(p, dir string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(p))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// Poke makes the dispatcher look at the board now (a task was added or
// unblocked) instead of at its next poll.
func (d *Dispatcher) Poke() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run serves the worker socket and dispatches until ctx ends; then it
// kills every worker's process group, waits for them and returns nil.
func (d *Dispatcher) Run(ctx context.Context) error {
	if err := os.MkdirAll(d.o.LogDir, 0o700); err != nil {
		return fmt.Errorf("dispatch: log directory: %w", err)
	}
	ln, err := workerapi.Listen(d.socket)
	if err != nil {
		if d.o.RemoteListener != nil {
			d.o.RemoteListener.Close()
		}
		return fmt.Errorf("dispatch: %w", err)
	}
	late, err := d.recover(ctx)
	if err != nil {
		ln.Close()
		if d.o.RemoteListener != nil {
			d.o.RemoteListener.Close()
		}
		return fmt.Errorf("dispatch: %w", err)
	}
	// Workers live as long as this context: a failed socket ends them
	// as shutdown does.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var wg sync.WaitGroup
	srvErr := make(chan error, 2)
	wg.Go(func() { srvErr <- d.srv.Serve(ctx, ln) })
	if d.o.RemoteListener != nil {
		wg.Go(func() { srvErr <- d.srv.ServeRemote(ctx, d.o.RemoteListener) })
	}
	if len(late) > 0 {
		wg.Go(func() { d.failLate(ctx, late) })
	}

	done := make(chan struct{}, d.o.Concurrency)
	active := 0
	poll := time.NewTimer(0)
	defer poll.Stop()
loop:
	for {
		if _, err := d.o.Boards.Promote(ctx); err != nil && ctx.Err() == nil {
			d.log.ErrorContext(ctx, "promote", "err", err)
		}
		for !d.o.RemoteOnly && active < d.o.Concurrency && ctx.Err() == nil {
			run := d.o.Boards.NewID()
			t, r, err := d.o.Board.ClaimTask(ctx, store.TaskClaim{Run: run, Log: d.logPath(run), At: d.o.Now(), Holder: d.o.Holder, Lease: d.o.Lease})
			if errors.Is(err, store.ErrNothingReady) {
				break
			}
			if err != nil {
				if ctx.Err() == nil {
					d.log.ErrorContext(ctx, "claim", "err", err)
				}
				break
			}
			active++
			wg.Go(func() {
				defer func() { done <- struct{}{} }()
				d.work(ctx, t, r)
			})
		}
		poll.Reset(d.o.Poll)
		select {
		case <-ctx.Done():
			break loop
		case err := <-srvErr:
			// The socket failed: no worker can reach the host. Stop
			// the workers and report it.
			srvErr <- err
			stop(err)
			break loop
		case <-d.wake:
		case <-poll.C:
		case <-done:
			active--
		}
	}
	wg.Wait() // workers (killed by ctx) and the servers
	for {
		select {
		case err := <-srvErr:
			if err != nil {
				return fmt.Errorf("dispatch: %w", err)
			}
		default:
			return nil
		}
	}
}

// recover fails the runs a previous host left open: their workers lost
// the host they talked to. A run issued to a remote worker (RemoteLog)
// may still run its step until the worker finds its lease
// unacknowledged, so it is returned to be failed only a lease from now
// (failLate).
func (d *Dispatcher) recover(ctx context.Context) (late []store.TaskRun, err error) {
	runs, err := d.o.Board.RunningRuns(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		if d.srv.Issued(r.ID) {
			continue // issued to a remote worker by this dispatcher
		}
		if r.Log == RemoteLog {
			late = append(late, r)
			continue
		}
		t, err := d.o.Board.RecordFailure(ctx, r.ID, "host restarted while the run was in progress", d.o.FailureLimit, d.o.Now())
		if err != nil && !errors.Is(err, store.ErrTaskRunEnded) {
			return nil, err
		}
		d.log.WarnContext(ctx, "recovered an open run", "task", r.Task, "run", r.ID, "task_status", t.Status)
	}
	return late, nil
}

// failLate fails runs a lease after start (see recover), unless ctx ends
// first (they are failed at the next start then).
func (d *Dispatcher) failLate(ctx context.Context, runs []store.TaskRun) {
	t := time.NewTimer(d.o.RemoteLease)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return
	case <-t.C:
	}
	for _, r := range runs {
		if d.o.Alive != nil && r.Holder != "" && r.Holder != d.o.Holder && d.o.Alive(r.Holder) {
			continue // another live host's run
		}
		t, err := d.o.Board.RecordFailure(ctx, r.ID, "host restarted while the run was in progress", d.o.FailureLimit, d.o.Now())
		if err != nil && !errors.Is(err, store.ErrTaskRunEnded) {
			d.log.ErrorContext(ctx, "fail an open run", "run", r.ID, "err", err)
			continue
		}
		d.log.WarnContext(ctx, "recovered an open run", "task", r.Task, "run", r.ID, "task_status", t.Status)
	}
	d.Poke()
}

// logPath is the log file of run.
func (d *Dispatcher) logPath(run string) string { return filepath.Join(d.o.LogDir, run+".log") }

// work runs one claimed run to its end.
func (d *Dispatcher) work(ctx context.Context, t store.Task, r store.TaskRun) {
	log := d.log.With("task", t.ID, "run", r.ID)
	wctx, lost := context.WithCancelCause(ctx)
	defer lost(nil)
	if d.o.Lease > 0 {
		stop := d.keepLease(wctx, log, r.ID, lost)
		defer stop()
	}
	reason, err := d.spawn(wctx, log, t, r)
	// Fence the run before its failure makes the task claimable again:
	// a step the host still runs for it (the worker died mid-step) is
	// killed and confirmed gone, and no new one can start.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fenceTimeout)
	if ferr := d.o.Sandbox.KillRun(fctx, RunKey(r.ID)); ferr != nil {
		log.ErrorContext(ctx, "fence the run", "err", ferr)
	}
	cancel()
	switch {
	case ctx.Err() != nil:
		reason = "host shut down while the worker ran"
	case wctx.Err() != nil:
		reason = context.Cause(wctx).Error()
	case err != nil:
		reason = "spawn worker: " + err.Error()
		log.ErrorContext(ctx, "spawn worker", "err", err)
	}
	// Record the failure even when ctx ended: the store is still open
	// (the host closes it after Run returns).
	after, ferr := d.o.Board.RecordFailure(context.WithoutCancel(ctx), r.ID, reason, d.o.FailureLimit, d.o.Now())
	switch {
	case errors.Is(ferr, store.ErrTaskRunEnded):
		// The worker (or an operator) ended the run itself.
	case ferr != nil:
		log.ErrorContext(ctx, "record failure", "err", ferr)
	default:
		log.WarnContext(ctx, "run failed", "reason", reason, "task_status", after.Status, "retries", after.Retries)
	}
	d.ended(context.WithoutCancel(ctx), t.ID)
}

// keepLease renews run's lease every third of it until stop is called;
// when the claim is gone (reclaimed by another host, ended by an
// operator) it cancels the worker with lost.
func (d *Dispatcher) keepLease(ctx context.Context, log *slog.Logger, run string, lost context.CancelCauseFunc) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(d.o.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			_, err := d.o.Board.RenewRun(ctx, run, d.o.Holder, d.o.Lease)
			switch {
			case err == nil:
			case errors.Is(err, store.ErrTaskRunEnded), errors.Is(err, store.ErrLeaseLost):
				log.WarnContext(ctx, "the run's claim is gone: stopping its worker", "err", err)
				lost(fmt.Errorf("the run's claim was lost: %w", err))
				return
			case ctx.Err() == nil:
				log.WarnContext(ctx, "renew the run's lease", "err", err)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// ended tells Ended about task id if its session is over.
func (d *Dispatcher) ended(ctx context.Context, id string) {
	if d.o.Ended == nil {
		return
	}
	t, err := d.o.Board.GetTask(ctx, id)
	if err != nil || (t.Status != store.TaskDone && t.Status != store.TaskReview) {
		return
	}
	d.o.Ended(ctx, "kanban:"+id)
}

// spawn starts the worker for run r of task t and waits for it. It
// returns why the worker ended, for the case its run is still open.
func (d *Dispatcher) spawn(ctx context.Context, log *slog.Logger, t store.Task, r store.TaskRun) (string, error) {
	logPath := d.logPath(r.ID)
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("log file: %w", err)
	}
	defer logf.Close()

	dir, err := board.WorkspaceDir(t.Workspace, d.scratch(), t.ID)
	if err != nil {
		return "", err
	}
	if t.Workspace == store.WorkspaceScratch {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", fmt.Errorf("scratch workspace: %w", err)
		}
	}

	secret, err := workerapi.NewToken()
	if err != nil {
		return "", err
	}
	now := d.o.Now()
	if err := d.o.Board.MintToken(ctx, store.WorkerToken{
		Hash: workerapi.TokenHash(secret), Task: t.ID, Run: r.ID, Created: now, Expires: now.Add(d.o.TokenTTL),
	}); err != nil {
		return "", err
	}
	tokR, tokW, err := os.Pipe()
	if err != nil {
		return "", fmt.Errorf("token pipe: %w", err)
	}
	defer tokR.Close()
	defer tokW.Close()

	o, _ := owner.Kanban(d.o.BoardID, t.ID, r.ID)
	cmd, err := d.o.Sandbox.Command(sandbox.Spec{
		Path: d.o.Executable, Args: []string{"worker", "--task", t.ID},
		Env: d.env(map[string]string{SocketEnv: d.socket}),
		Dir: dir, Workspace: dir, Stdout: logf, Stderr: logf,
		ExtraFiles: []*os.File{tokR}, // fd 3 = TokenFD
		Expose:     []string{d.socket},
		Owner:      o.String(), Run: RunKey(r.ID), WaitDelay: 5 * time.Second,
	})
	if err != nil {
		return "", err
	}
	if err := cmd.Start(ctx); err != nil {
		return "", err
	}
	pid := cmd.Pid()
	if d.o.Groups != nil {
		d.o.Groups.Add(pid)
	}
	defer func() {
		// The worker's sandbox (and anything in it) goes with it,
		// before its group is forgotten.
		cmd.Kill()
		_ = cmd.Wait()
		if d.o.Groups != nil {
			d.o.Groups.Remove(pid)
		}
	}()
	tokR.Close() // the child has its copy
	log.InfoContext(ctx, "worker started", "pid", pid, "log", logPath)

	// The pid is on record before the token is handed over, so the
	// worker socket can check who says hello with it.
	if err := d.o.Board.SetRunPID(ctx, r.ID, pid); err != nil {
		return "", err
	}
	if _, err := io.WriteString(tokW, secret+"\n"); err != nil {
		log.WarnContext(ctx, "hand the token over", "err", err)
	}
	tokW.Close()

	werr := cmd.Wait()
	var exit *sandbox.ExitError
	switch {
	case werr == nil:
		return "the worker exited without ending its run", nil
	case errors.As(werr, &exit):
		why := "the worker " + describeExit(exit)
		if tail := lastLine(logPath); tail != "" {
			why += ": " + tail
		}
		return why, nil
	}
	return "", fmt.Errorf("wait for worker: %w", werr)
}

// RunKey is what a kanban run's processes are fenced by: its steps
// (tools.RunKey of the run's owner) and its worker.
func RunKey(run string) string { return store.KanbanRunKey(run) }

func describeExit(e *sandbox.ExitError) string {
	if e.Signal != 0 {
		return "was killed by signal " + syscall.Signal(e.Signal).String()
	}
	return fmt.Sprintf("exited with status %d", e.Code)
}

// lastLine returns the last non-empty line of a log (at most 200
// bytes of it), for a failure's reason.
func lastLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const tail = 4096
	if fi, err := f.Stat(); err == nil && fi.Size() > tail {
		if _, err := f.Seek(-tail, io.SeekEnd); err != nil {
			return ""
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, tail))
	if err != nil {
		return ""
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	last := strings.TrimSpace(string(lines[len(lines)-1]))
	if len(last) > 200 {
		last = last[:200] + "…"
	}
	return strings.ToValidUTF8(last, "")
}
