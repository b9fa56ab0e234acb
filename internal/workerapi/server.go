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
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/wardenhq/warden/internal/agent"
	"github.com/wardenhq/warden/internal/ancestry"
	"github.com/wardenhq/warden/internal/board"
	"github.com/wardenhq/warden/internal/connlimit"
	"github.com/wardenhq/warden/internal/jsonbody"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/store"
)

// Runner decides, audits and runs a shell command as the owner bound to
// ctx; *runner.Runner is one.
type Runner interface {
	Shell(ctx context.Context, command, dir string, stdout, stderr io.Writer) (runner.Outcome, int, error)
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

// Agent runs a prompt task's agent as the owner in ctx; *agent.Agent is
// one.
type Agent interface {
	Prompt(ctx context.Context, conversation, dir, prompt string, board agent.Board) (agent.Transcript, error)
}

// Options configure a Server.
type Options struct {
	Board  store.BoardStore
	Runner Runner
	// Cron runs cron jobs for workers; nil refuses cron_run.
	Cron CronRunner
	// Agent runs prompt tasks; nil refuses the agent verb (no model).
	Agent Agent
	// BoardID names the board in owners; "" for a single-board host.
	BoardID string
	// ScratchDir holds scratch workspaces, one directory per task
	// (created 0700 on hello).
	ScratchDir string
	// FailureLimit blocks a task after this many failed runs (fail
	// verb); zero or less never blocks.
	FailureLimit int
	// Review sends completed tasks to review instead of done.
	Review bool
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
	return &Server{o: o, log: o.Logger.With("component", "workerapi"), uid: os.Getuid()}
}

// ErrDisconnected is the cause of a connection's context when the
// worker went away.
var ErrDisconnected = errors.New("worker disconnected")

// Serve accepts connections on ln until ctx ends, then closes ln and
// every connection (cancelling what runs for them) and returns nil once
// their handlers have finished. If accepting fails it does the same and
// returns the error.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
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
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("worker socket: accept: %w", err)
		}
		wg.Go(func() { s.serveConn(ctx, c) })
	}
}

// conn is one worker connection.
type conn struct {
	s   *Server
	c   net.Conn
	ctx context.Context

	wmu sync.Mutex // serialises writes

	// Set by hello; read and written by the connection's one handler
	// goroutine only.
	owner owner.Owner
	task  store.Task
	run   string
	dir   string
	ended bool
}

func (s *Server) serveConn(ctx context.Context, c net.Conn) {
	ctx, cancel := context.WithCancelCause(ctx)
	// Cancelling closes the connection, which ends the reader.
	context.AfterFunc(ctx, func() { c.Close() })
	var rwg sync.WaitGroup
	defer func() {
		cancel(nil)
		rwg.Wait()
	}()
	cn := &conn{s: s, c: c, ctx: ctx}

	reqs := make(chan []byte, 8)
	rwg.Go(func() {
		defer close(reqs)
		sc := bufio.NewScanner(c)
		sc.Buffer(make([]byte, 0, 64<<10), MaxMessage)
		for sc.Scan() {
			line := append([]byte(nil), sc.Bytes()...)
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
	r, err := cn.s.o.Board.GetRun(cn.ctx, cn.run)
	if err != nil {
		return internal(err)
	}
	if r.Status != store.TaskRunRunning {
		cn.ended = true
		return ended()
	}
	ctx := owner.With(cn.ctx, cn.owner)
	switch req.Verb {
	case VerbShell:
		return cn.shell(ctx, req)
	case VerbComment:
		if strings.TrimSpace(req.Body) == "" {
			return badRequest("empty comment")
		}
		c, err := cn.s.o.Board.AddComment(ctx, store.TaskComment{Task: cn.task.ID, Author: cn.owner.String(), Body: req.Body, Time: cn.s.o.Now()})
		if err != nil {
			return internal(err)
		}
		return Response{Comment: c.ID}
	case VerbComplete:
		return cn.end(ctx, func() (store.Task, error) {
			return cn.s.o.Board.FinishRun(ctx, cn.run, store.RunFinish{Status: store.TaskRunSucceeded, Review: cn.s.o.Review, At: cn.s.o.Now()})
		})
	case VerbBlock:
		reason := strings.TrimSpace(req.Reason)
		if reason == "" {
			reason = "blocked by the worker"
		}
		if _, err := cn.s.o.Board.AddComment(ctx, store.TaskComment{Task: cn.task.ID, Author: cn.owner.String(), Body: "blocked: " + reason, Time: cn.s.o.Now()}); err != nil {
			return internal(err)
		}
		return cn.end(ctx, func() (store.Task, error) {
			return cn.s.o.Board.FinishRun(ctx, cn.run, store.RunFinish{Status: store.TaskRunBlocked, Reason: reason, At: cn.s.o.Now()})
		})
	case VerbFail:
		reason := strings.TrimSpace(req.Reason)
		if reason == "" {
			reason = "the worker failed"
		}
		return cn.end(ctx, func() (store.Task, error) {
			return cn.s.o.Board.RecordFailure(ctx, cn.run, reason, cn.s.o.FailureLimit, cn.s.o.Now())
		})
	case VerbCronRun:
		return cn.cronRun(ctx, req)
	case VerbAgent:
		return cn.agent(ctx)
	}
	return badRequest(fmt.Sprintf("unknown verb %q", req.Verb))
}

// end runs a run-ending store call; the connection can do nothing
// after it.
func (cn *conn) end(ctx context.Context, f func() (store.Task, error)) Response {
	t, err := f()
	if errors.Is(err, store.ErrTaskRunEnded) {
		cn.ended = true
		return ended()
	}
	if err != nil {
		return internal(err)
	}
	cn.ended = true
	cn.s.log.InfoContext(ctx, "run ended", "owner", cn.owner.String(), "task_status", t.Status)
	return Response{Status: t.Status}
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
	tok, err := cn.s.o.Board.ConsumeToken(cn.ctx, TokenHash(req.Token), req.Task, cn.s.o.Now())
	if err != nil {
		// The worker learns nothing about why; the host's log does.
		log.WarnContext(cn.ctx, "worker token refused", "err", err)
		return refused("worker token refused")
	}
	run, err := cn.s.o.Board.GetRun(cn.ctx, tok.Run)
	if err != nil {
		return internal(err)
	}
	if err := cn.checkPeer(run); err != nil {
		log.WarnContext(cn.ctx, "worker peer refused", "run", run.ID, "err", err)
		return refused("worker token refused")
	}
	task, err := cn.s.o.Board.GetTask(cn.ctx, tok.Task)
	if err != nil {
		return internal(err)
	}
	dir, err := board.WorkspaceDir(task.Workspace, cn.s.o.ScratchDir, task.ID)
	if err != nil {
		return internal(err)
	}
	if task.Workspace == store.WorkspaceScratch {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return internal(fmt.Errorf("scratch workspace: %w", err))
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
	cn.s.log.InfoContext(owner.With(cn.ctx, o), "worker connected", "owner", o.String(), "pid", run.PID)
	return Response{Hello: &Hello{
		Task: TaskInfo{ID: task.ID, Title: task.Title, Body: task.Body, Workspace: task.Workspace, Script: task.Script, Prompt: task.Prompt},
		Run:  run.ID, Owner: o.String(), Dir: dir,
	}}
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

// shell has the host decide, audit and run one command as the
// connection's owner, in the task's workspace, streaming the output.
func (cn *conn) shell(ctx context.Context, req Request) Response {
	if strings.TrimSpace(req.Command) == "" {
		return badRequest("empty command")
	}
	out := &capture{cn: cn, id: req.ID}
	started := cn.s.o.Now()
	outcome, code, err := cn.s.o.Runner.Shell(ctx, req.Command, cn.dir, out, out)
	res := ShellResult{Allowed: outcome.Allowed, Verdict: "deny", Rule: outcome.Decision.Rule, Message: outcome.Message, ExitCode: code}
	if outcome.Allowed {
		res.Verdict = "allow"
	}
	switch {
	case !outcome.Allowed:
		res.Output = outcome.Message
	case err != nil:
		// It was allowed but did not run to an exit (no workspace,
		// cancelled): say so after whatever it printed.
		res.ExitCode = -1
		res.Output = out.text() + "\nwarden: " + err.Error()
	default:
		res.Output = out.text()
	}
	step, serr := cn.s.o.Board.AppendRunStep(context.WithoutCancel(ctx), cn.run, store.TaskStep{
		Command: req.Command, Verdict: res.Verdict, Rule: res.Rule, ExitCode: res.ExitCode,
		Output: res.Output, Started: started, Finished: cn.s.o.Now(),
	})
	if errors.Is(serr, store.ErrTaskRunEnded) {
		cn.ended = true
		return ended()
	}
	if serr != nil {
		return internal(serr)
	}
	res.N, res.Output = step.N, step.Output
	return Response{Shell: &res}
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

// capture streams a command's output to the worker as events and keeps
// what the run history will keep: the first and last store.CronOutputCap
// bytes.
type capture struct {
	cn    *conn
	id    uint64
	mu    sync.Mutex
	head  []byte
	tail  []byte // ring of the last bytes once head is full
	total int64
	// streamErr stops streaming after a failed write; the command runs
	// on, its output kept.
	streamErr error
}

func (w *capture) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.total += int64(len(p))
	rest := p
	if room := store.CronOutputCap - len(w.head); room > 0 {
		n := min(room, len(rest))
		w.head = append(w.head, rest[:n]...)
		rest = rest[n:]
	}
	if len(rest) > 0 {
		w.tail = append(w.tail, rest...)
		if over := len(w.tail) - store.CronOutputCap; over > 0 {
			w.tail = append(w.tail[:0], w.tail[over:]...)
		}
	}
	if w.streamErr == nil {
		w.streamErr = w.cn.write(Event{ID: w.id, Event: "output", Data: strings.ToValidUTF8(string(p), "\uFFFD")})
	}
	return len(p), nil
}

// text is the output as the history keeps it: all of it if it fits
// store.CronOutputCap, else a head and a tail around
// store.TruncationMarker, as store.CapOutput makes it.
func (w *capture) text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.total <= int64(len(w.head)+len(w.tail)) {
		s, _ := store.CapOutput(string(w.head) + string(w.tail))
		return s
	}
	room := store.CronOutputCap - len(store.TruncationMarker(w.total))
	h := runeCut(w.head, room/2)
	t := w.tail[len(w.tail)-min(len(w.tail), room-h):]
	for len(t) > 0 && !utf8.RuneStart(t[0]) {
		t = t[1:]
	}
	return string(w.head[:h]) + store.TruncationMarker(w.total-int64(h)-int64(len(t))) + string(t)
}

// runeCut moves n back to a rune start in b.
func runeCut(b []byte, n int) int {
	n = min(n, len(b))
	for n > 0 && n < len(b) && !utf8.RuneStart(b[n]) {
		n--
	}
	return n
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
