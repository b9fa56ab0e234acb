package workerapi

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/agent"
	"github.com/wardenhq/warden/internal/ancestry"
	"github.com/wardenhq/warden/internal/board"
	"github.com/wardenhq/warden/internal/connlimit"
	"github.com/wardenhq/warden/internal/jsonbody"
	"github.com/wardenhq/warden/internal/llm"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/store"
)

// Runner decides an action as the owner bound to ctx, asking a human
// when the gate says so, and audits the decision before it returns;
// *runner.Runner is one (its one path: the runner is the only writer of
// the audit log).
type Runner interface {
	Authorize(ctx context.Context, act action.Action) (runner.Outcome, error)
}

// CronRunner starts cron runs on a worker's behalf; the host's cron
// scheduler satisfies it. The run's owner must be the cron job's with
// parent as its parent, so the most restrictive mode along the lineage
// governs it (invariant 5).
type CronRunner interface {
	// RunNow starts a run of job name now and returns its run id.
	RunNow(ctx context.Context, name string, parent owner.Owner) (string, error)
	// Wait blocks until the run ends and returns its status
	// ("succeeded", "failed", …).
	Wait(ctx context.Context, runID string) (status string, err error)
}

// Options configure a Server.
type Options struct {
	// Board is the host's one board service: the run's record, its
	// token, its steps and comments.
	Board  *board.Service
	Runner Runner
	// Cron runs cron jobs for workers; nil refuses cron_run.
	Cron CronRunner
	// Model answers prompt tasks' model calls with the host's
	// credentials; nil refuses the model verb (no model configured).
	Model llm.Client
	// MaxTurns caps the model calls of one run; zero means
	// agent.DefaultMaxTurns.
	MaxTurns int
	// System is the system prompt of prompt tasks' conversations; ""
	// means agent.DefaultSystem.
	System string
	// BoardID names the board in owners; "" for a single-board host.
	BoardID string
	// Attend, if set, is asked for each request which answer channel
	// the run's owner carries for it: the host's web console while
	// approvals.kanban_mode is ask, nil otherwise (and always nil on a
	// host that serves no console). The channel comes from the host,
	// never from the worker: nothing a worker sends can attach, choose
	// or see it. Nil means kanban owners stay unattended.
	Attend func() owner.AnswerChannel
	// ScratchDir holds scratch workspaces, one directory per task
	// (created 0700 on hello).
	ScratchDir string
	// FailureLimit blocks a task after this many failed runs (fail
	// verb); zero or less never blocks.
	FailureLimit int
	// Review sends completed tasks to review instead of done.
	Review bool
	// StepEnv is the complete environment of a local worker's steps
	// (execenv.Build of the host's environment): told to the worker at
	// hello.
	StepEnv []string
	// Passthrough are the operator's extra variable names, told to
	// remote workers, which build their steps' environment with
	// execenv on their own machine.
	Passthrough []string
	// Network is the host's sandbox.network, told to remote workers.
	Network bool
	// Lease is the lease of a remote worker's run; zero means
	// DefaultLease.
	Lease time.Duration
	// Lapsed, if set, hears the run id of a remote run whose lease
	// lapsed after its failure was recorded (the dispatcher looks at the
	// board again).
	Lapsed func(run string)
	// HelloTimeout bounds how long a connection may stay without
	// saying hello; zero means 10 s.
	HelloTimeout time.Duration
	// WriteTimeout bounds one write to a worker that stopped reading;
	// zero means 30 s.
	WriteTimeout time.Duration
	Logger       *slog.Logger
	Now          func() time.Time
}

// Server serves the worker socket. It is safe for concurrent use.
type Server struct {
	o   Options
	log *slog.Logger
	uid int
	fs  ancestry.FS

	mu     sync.Mutex
	leases map[string]*lease // remote runs by id
}

// New returns a Server.
func New(o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.HelloTimeout <= 0 {
		o.HelloTimeout = 10 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 30 * time.Second
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.MaxTurns <= 0 {
		o.MaxTurns = agent.DefaultMaxTurns
	}
	if o.System == "" {
		o.System = agent.DefaultSystem
	}
	return &Server{o: o, log: o.Logger.With("component", "workerapi"), uid: os.Getuid(), leases: map[string]*lease{}}
}

// ErrDisconnected is the cause of a connection's context when the
// worker went away.
var ErrDisconnected = errors.New("worker disconnected")

// Serve accepts connections on ln until ctx ends, then closes ln and
// every connection (cancelling what runs for them) and returns nil once
// their handlers have finished. If accepting fails it does the same and
// returns the error.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	return s.serve(ctx, ln, false)
}

// ServeRemote is Serve for the TLS listener of remote workers (see
// ListenTLS): hello admits only runs issued to a remote worker (Issue),
// and their leases are kept: a run whose lease lapsed is failed.
func (s *Server) ServeRemote(ctx context.Context, ln net.Listener) error {
	return s.serve(ctx, ln, true)
}

func (s *Server) serve(ctx context.Context, ln net.Listener, remote bool) error {
	// Whatever owner an enclosing scope carries, a connection starts
	// with none.
	ctx, cancel := context.WithCancel(owner.With(ctx, owner.Owner{}))
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	var wg sync.WaitGroup
	defer func() {
		stop()
		cancel()
		ln.Close()
		wg.Wait()
	}()
	if remote {
		wg.Go(func() { s.keepLeases(ctx) })
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("worker socket: accept: %w", err)
		}
		wg.Go(func() { s.serveConn(ctx, c, remote) })
	}
}

// conn is one worker connection.
type conn struct {
	s      *Server
	c      net.Conn
	ctx    context.Context
	cancel context.CancelCauseFunc
	remote bool

	wmu sync.Mutex // serialises writes

	// lease is a remote run's lease once hello bound it; the reader
	// renews it.
	lease atomic.Pointer[lease]

	// Set by hello; read and written by the connection's one handler
	// goroutine only.
	owner owner.Owner
	task  store.Task
	run   string
	dir   string
	ended bool
	// pending is the allowed action the worker was told it may run,
	// until it reports the step.
	pending *pendingStep
	// chat is a prompt task's conversation with the model, held by the
	// host (model verb).
	chat *chat
}

// pendingStep is an allowed action not yet reported.
type pendingStep struct {
	act     Act
	rule    string
	started time.Time
}

func (s *Server) serveConn(ctx context.Context, c net.Conn, remote bool) {
	ctx, cancel := context.WithCancelCause(ctx)
	// Cancelling closes the connection, which ends the reader.
	context.AfterFunc(ctx, func() { c.Close() })
	var rwg sync.WaitGroup
	defer func() {
		cancel(nil)
		rwg.Wait()
	}()
	cn := &conn{s: s, c: c, ctx: ctx, cancel: cancel, remote: remote}

	reqs := make(chan []byte, 8)
	rwg.Go(func() {
		defer close(reqs)
		sc := bufio.NewScanner(c)
		sc.Buffer(make([]byte, 0, 64<<10), MaxMessage)
		for sc.Scan() {
			line := append([]byte(nil), sc.Bytes()...)
			// Any message renews a remote run's lease; a heartbeat is
			// answered at once, also while a request waits.
			if l := cn.lease.Load(); l != nil {
				if !s.renew(l) {
					return // lapsed: the connection is being closed
				}
				if isHeartbeat(line) {
					if cn.write(Event{Event: EventLease, Data: strconv.FormatInt(s.o.Lease.Milliseconds(), 10)}) != nil {
						return
					}
					continue
				}
			}
			select {
			case reqs <- line:
			case <-ctx.Done():
				return
			}
		}
		// The worker went away (or sent an oversized line): whatever
		// runs for it is cancelled; the connection was its lease.
		err := sc.Err()
		if err == nil {
			err = io.EOF
		}
		cancel(fmt.Errorf("%w: %w", ErrDisconnected, err))
	})

	hello := time.AfterFunc(s.o.HelloTimeout, func() {
		cancel(errors.New("no hello in time"))
	})
	defer hello.Stop()
	for line := range reqs {
		if ctx.Err() != nil {
			return
		}
		var req Request
		if err := jsonbody.Unmarshal(line, &req); err != nil {
			cn.reply(Response{Code: CodeBadRequest, Error: "malformed request: " + err.Error()})
			return
		}
		resp := cn.handle(req)
		resp.ID = req.ID
		resp.OK = resp.Code == ""
		if err := cn.reply(resp); err != nil {
			return
		}
		if cn.run != "" {
			hello.Stop()
		}
	}
}

// write sends one message line.
func (cn *conn) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	cn.wmu.Lock()
	defer cn.wmu.Unlock()
	if err := cn.c.SetWriteDeadline(time.Now().Add(cn.s.o.WriteTimeout)); err != nil {
		return err
	}
	_, err = cn.c.Write(b)
	return err
}

func (cn *conn) reply(r Response) error { return cn.write(r) }

func refused(msg string) Response    { return Response{Code: CodeRefused, Error: msg} }
func ended() Response                { return Response{Code: CodeEnded, Error: "the run has ended"} }
func badRequest(msg string) Response { return Response{Code: CodeBadRequest, Error: msg} }
func internal(err error) Response    { return Response{Code: CodeInternal, Error: err.Error()} }

// handle runs one request.
func (cn *conn) handle(req Request) Response {
	if req.Verb == VerbHello {
		return cn.hello(req)
	}
	if cn.run == "" {
		return refused("say hello with a worker token first")
	}
	if cn.ended {
		return ended()
	}
	// The run may have been ended by someone else (an operator, the
	// dispatcher); then nothing more happens for it.
	r, err := cn.s.o.Board.Run(cn.ctx, cn.run)
	if err != nil {
		return internal(err)
	}
	if r.Status != store.TaskRunRunning {
		cn.ended = true
		return ended()
	}
	ctx := owner.With(cn.ctx, cn.acting())
	switch req.Verb {
	case VerbDecide:
		return cn.decide(ctx, req)
	case VerbStep:
		return cn.step(ctx, req)
	case VerbComment:
		if strings.TrimSpace(req.Body) == "" {
			return badRequest("empty comment")
		}
		c, err := cn.s.o.Board.Comment(ctx, cn.task.ID, cn.owner.String(), req.Body)
		if err != nil {
			return internal(err)
		}
		return Response{Comment: c.ID}
	case VerbComplete:
		return cn.end(ctx, func() (store.Task, error) {
			return cn.s.o.Board.Finish(ctx, cn.run, store.RunFinish{Status: store.TaskRunSucceeded, Review: cn.s.o.Review})
		})
	case VerbBlock:
		reason := strings.TrimSpace(req.Reason)
		if reason == "" {
			reason = "blocked by the worker"
		}
		if _, err := cn.s.o.Board.Comment(ctx, cn.task.ID, cn.owner.String(), "blocked: "+reason); err != nil {
			return internal(err)
		}
		return cn.end(ctx, func() (store.Task, error) {
			return cn.s.o.Board.Finish(ctx, cn.run, store.RunFinish{Status: store.TaskRunBlocked, Reason: reason})
		})
	case VerbFail:
		reason := strings.TrimSpace(req.Reason)
		if reason == "" {
			reason = "the worker failed"
		}
		return cn.end(ctx, func() (store.Task, error) {
			return cn.s.o.Board.Fail(ctx, cn.run, reason, cn.s.o.FailureLimit)
		})
	case VerbCronRun:
		return cn.cronRun(ctx, req)
	case VerbModel:
		return cn.model(ctx, req)
	}
	return badRequest(fmt.Sprintf("unknown verb %q", req.Verb))
}

// end runs a run-ending store call; the connection can do nothing
// after it.
func (cn *conn) end(ctx context.Context, f func() (store.Task, error)) Response {
	if r := cn.flush(ctx); r.Code != "" {
		return r
	}
	t, err := f()
	if errors.Is(err, store.ErrTaskRunEnded) {
		cn.ended = true
		return ended()
	}
	if err != nil {
		return internal(err)
	}
	cn.ended = true
	cn.release()
	cn.s.log.InfoContext(ctx, "run ended", "owner", cn.owner.String(), "task_status", t.Status)
	return Response{Status: t.Status}
}

// acting is the owner a request acts as: the run's, with the host's
// answer channel attached when Attend gives one (kanban_mode ask). It is
// decided per request, so a reload of kanban_mode holds for the next
// step of a run already going.
func (cn *conn) acting() owner.Owner {
	if cn.s.o.Attend == nil {
		return cn.owner
	}
	ch := cn.s.o.Attend()
	if ch == nil {
		return cn.owner
	}
	o, err := cn.owner.WithChannel(ch)
	if err != nil {
		// Cannot happen for a kanban owner; unattended is the safe side.
		cn.s.log.ErrorContext(cn.ctx, "attach the answer channel", "owner", cn.owner.String(), "err", err)
		return cn.owner
	}
	return o
}

// hello binds the connection to the run its token names.
func (cn *conn) hello(req Request) Response {
	if cn.run != "" {
		return refused("this connection already said hello")
	}
	if req.Token == "" || req.Task == "" {
		return refused("hello needs a token and a task")
	}
	log := cn.s.log.With("task", req.Task)
	tok, err := cn.s.o.Board.Redeem(cn.ctx, TokenHash(req.Token), req.Task)
	if err != nil {
		// The worker learns nothing about why; the host's log does.
		log.WarnContext(cn.ctx, "worker token refused", "err", err)
		return refused("worker token refused")
	}
	run, err := cn.s.o.Board.Run(cn.ctx, tok.Run)
	if err != nil {
		return internal(err)
	}
	task, err := cn.s.o.Board.Get(cn.ctx, tok.Task)
	if err != nil {
		return internal(err)
	}
	var dir string
	if cn.remote {
		// A remote worker runs where it says, on its machine: that is
		// part of the action it asks about, like the command; who it
		// acts as is not.
		if dir, err = remoteWorkspace(req.Workspace); err != nil {
			log.WarnContext(cn.ctx, "remote worker refused", "run", run.ID, "err", err)
			return refused("worker token refused")
		}
		l, err := cn.s.attach(run, cn.cancel)
		if err != nil {
			log.WarnContext(cn.ctx, "remote worker refused", "run", run.ID, "err", err)
			return refused("worker token refused")
		}
		cn.lease.Store(l)
	} else {
		if err := cn.checkPeer(run); err != nil {
			log.WarnContext(cn.ctx, "worker peer refused", "run", run.ID, "err", err)
			return refused("worker token refused")
		}
		if dir, err = board.WorkspaceDir(task.Workspace, cn.s.o.ScratchDir, task.ID); err != nil {
			return internal(err)
		}
		if task.Workspace == store.WorkspaceScratch {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return internal(fmt.Errorf("scratch workspace: %w", err))
			}
		}
	}
	o, err := owner.Kanban(cn.s.o.BoardID, task.ID, run.ID)
	if err == nil {
		o, err = o.WithSession("kanban:" + task.ID)
	}
	if err != nil {
		return internal(err)
	}
	cn.owner, cn.task, cn.run, cn.dir = o, task, run.ID, dir
	cn.s.log.InfoContext(owner.With(cn.ctx, o), "worker connected", "owner", o.String(), "pid", run.PID, "remote", cn.remote)
	h := &Hello{
		Task: TaskInfo{ID: task.ID, Title: task.Title, Body: task.Body, Workspace: task.Workspace, Script: task.Script, Prompt: task.Prompt},
		Run:  run.ID, Owner: o.String(), Dir: dir,
	}
	if strings.TrimSpace(task.Prompt) != "" {
		h.MaxTurns = cn.s.o.MaxTurns
	}
	if cn.remote {
		h.Passthrough, h.Network, h.LeaseMillis = cn.s.o.Passthrough, cn.s.o.Network, cn.s.o.Lease.Milliseconds()
	} else {
		h.Env = append([]string{}, cn.s.o.StepEnv...)
	}
	return Response{Hello: h}
}

// remoteWorkspace checks the workspace a remote worker named.
func remoteWorkspace(dir string) (string, error) {
	switch {
	case dir == "":
		return "", errors.New("no workspace named")
	case !filepath.IsAbs(dir) || filepath.Clean(dir) != dir:
		return "", fmt.Errorf("workspace %q: want a clean absolute path", dir)
	case dir == "/":
		return "", errors.New("workspace /: that is the whole file system")
	}
	return dir, nil
}

// checkPeer admits only the worker process the dispatcher spawned for
// run (or its descendants), running as this user.
func (cn *conn) checkPeer(run store.TaskRun) error {
	uc, ok := connlimit.Unwrap(cn.c).(*net.UnixConn)
	if !ok {
		return errors.New("not a unix socket connection")
	}
	cred, err := ancestry.PeerCred(uc)
	if err != nil {
		return err
	}
	if cred.UID != cn.s.uid {
		return fmt.Errorf("peer uid %d is not the host's uid %d", cred.UID, cn.s.uid)
	}
	if run.PID <= 0 {
		return errors.New("the run has no worker process recorded")
	}
	in, err := cn.s.fs.Within(cred.PID, run.PID)
	if err != nil {
		return err
	}
	if !in {
		return fmt.Errorf("peer pid %d is not worker %d or its descendant", cred.PID, run.PID)
	}
	return nil
}

// decide has the host's gate decide an action (a command, a code run,
// a file write) as the connection's owner, in the run's workspace,
// through the runner's one path (audited before the answer; a human
// asked when the gate says so, for as long as that takes). A denied
// action is recorded as the run's step at once; an allowed one waits
// for the worker's report (step).
func (cn *conn) decide(ctx context.Context, req Request) Response {
	a, act, err := cn.action(req)
	if err != nil {
		return badRequest(err.Error())
	}
	if r := cn.flush(ctx); r.Code != "" {
		return r
	}
	started := cn.s.o.Now()
	out, err := cn.s.o.Runner.Authorize(ctx, act)
	if err != nil {
		cn.s.log.WarnContext(ctx, "decision failed closed", "err", err)
	}
	if ctx.Err() != nil {
		// The worker went away (or the lease lapsed) while a human was
		// asked: nobody is left to hear the answer.
		return internal(context.Cause(ctx))
	}
	d := Decision{Allowed: out.Allowed, Verdict: "deny", Rule: out.Decision.Rule, Message: out.Message, Action: &a}
	if out.Allowed {
		d.Verdict = "allow"
		cn.pending = &pendingStep{act: a, rule: d.Rule, started: started}
		return Response{Decision: &d}
	}
	step, serr := cn.s.o.Board.Step(context.WithoutCancel(ctx), cn.run, store.TaskStep{
		Command: a.Text(), Verdict: d.Verdict, Rule: d.Rule, ExitCode: -1,
		Output: d.Message, Started: started, Finished: cn.s.o.Now(),
	})
	if r := cn.stepErr(serr); r.Code != "" {
		return r
	}
	d.N = step.N
	return Response{Decision: &d}
}

// step records how the allowed action ended, under the host's
// decision: the worker says only the exit code and the output.
func (cn *conn) step(ctx context.Context, req Request) Response {
	p := cn.pending
	if p == nil {
		return badRequest("no allowed action to report: ask decide first")
	}
	if a, _, err := cn.action(req); err != nil || a != p.act {
		return badRequest("the step reported is not the action that was decided")
	}
	cn.pending = nil
	step, err := cn.s.o.Board.Step(context.WithoutCancel(ctx), cn.run, store.TaskStep{
		Command: p.act.Text(), Verdict: "allow", Rule: p.rule, ExitCode: req.ExitCode,
		Output: req.Output, Started: p.started, Finished: cn.s.o.Now(),
	})
	if r := cn.stepErr(err); r.Code != "" {
		return r
	}
	return Response{Step: step.N}
}

// flush records an allowed command the worker never reported (it asked
// for another decision, or ended the run, instead).
func (cn *conn) flush(ctx context.Context) Response {
	p := cn.pending
	if p == nil {
		return Response{}
	}
	cn.pending = nil
	_, err := cn.s.o.Board.Step(context.WithoutCancel(ctx), cn.run, store.TaskStep{
		Command: p.act.Text(), Verdict: "allow", Rule: p.rule, ExitCode: -1,
		Output: "warden: the worker did not report how this step ended", Started: p.started, Finished: cn.s.o.Now(),
	})
	return cn.stepErr(err)
}

func (cn *conn) stepErr(err error) Response {
	switch {
	case errors.Is(err, store.ErrTaskRunEnded):
		cn.ended = true
		cn.release()
		return ended()
	case err != nil:
		return internal(err)
	}
	return Response{}
}

// cronRun asks the host's scheduler to run a job now, as a child of the
// connection's owner.
func (cn *conn) cronRun(ctx context.Context, req Request) Response {
	if cn.s.o.Cron == nil {
		return refused("cron is not available on this host")
	}
	if req.Name == "" {
		return badRequest("cron_run needs a job name")
	}
	id, err := cn.s.o.Cron.RunNow(ctx, req.Name, cn.owner)
	if err != nil {
		return internal(fmt.Errorf("run cron job %s: %w", req.Name, err))
	}
	res := CronResult{RunID: id}
	if req.Wait {
		if res.Status, err = cn.s.o.Cron.Wait(ctx, id); err != nil {
			return internal(fmt.Errorf("wait for cron run %s: %w", id, err))
		}
	}
	return Response{Cron: &res}
}

// NewToken returns a new worker token secret: 32 random bytes,
// base64url.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("new worker token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// TokenHash is what the store keeps of a token: its hex SHA-256.
func TokenHash(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}
