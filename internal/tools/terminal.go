// Package tools runs what the gate allowed: shell commands for now. The
// runner decides and audits first; tools only execute.
package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/sandbox"
	"github.com/wardenhq/warden/internal/store"
)

// Terminal runs shell command lines.
type Terminal struct {
	// Shell is the interpreter, "/bin/sh" if empty.
	Shell string
	// Env is the complete child environment (from execenv.Build). It is
	// never nil in a started command: an empty Env means an empty
	// environment, not an inherited one.
	Env []string
	// Timeout bounds one command; zero means none beyond ctx.
	Timeout time.Duration
	// MaxOutput caps the bytes passed on from stdout and stderr together
	// (zero: no cap); the rest is drained and dropped with one marker.
	MaxOutput int
	// Sandbox starts every command (internal/sandbox); nil refuses to
	// run anything.
	Sandbox *sandbox.Sandbox
}

// ErrNoSandbox: a Terminal without a Sandbox runs nothing.
var ErrNoSandbox = errors.New("no sandbox: warden runs nothing unconfined by omission")

// Run runs command in dir and returns its exit code. Everything the
// command started is killed when it ends, when ctx ends or when the
// timeout passes.
func (t Terminal) Run(ctx context.Context, command, dir string, stdout, stderr io.Writer) (int, error) {
	return t.RunFiles(ctx, command, dir, nil, stdout, stderr)
}

// RunFiles is Run with extra files for the command (fds 3, 4, …).
func (t Terminal) RunFiles(ctx context.Context, command, dir string, extra []*os.File, stdout, stderr io.Writer) (int, error) {
	r, err := t.Exec(ctx, command, dir, extra, stdout, stderr)
	return r.Code, err
}

// Result is how a command ended.
type Result struct {
	// Code is the exit status as a shell reports it (128 plus the
	// signal for a killed command), -1 when it did not run to an end.
	Code int
	// Signaled reports a command killed by a signal.
	Signaled bool
}

// Exec is RunFiles reporting whether the command was killed.
func (t Terminal) Exec(ctx context.Context, command, dir string, extra []*os.File, stdout, stderr io.Writer) (Result, error) {
	sh := t.Shell
	if sh == "" {
		sh = "/bin/sh"
	}
	c, err := t.Command(ctx, sh, []string{"-c", command}, dir, extra, stdout, stderr)
	if err != nil {
		return Result{Code: -1}, err
	}
	return t.wait(ctx, c)
}

// Command prepares program in the sandbox with the terminal's
// environment and output cap, labelled with the owner in ctx; the
// workspace is sandbox.WorkspaceFrom(ctx), else dir.
func (t Terminal) Command(ctx context.Context, program string, args []string, dir string, extra []*os.File, stdout, stderr io.Writer) (*sandbox.Cmd, error) {
	if t.Sandbox == nil {
		return nil, fmt.Errorf("run command: %w", ErrNoSandbox)
	}
	if t.MaxOutput > 0 {
		c := &outputCap{left: t.MaxOutput}
		stdout, stderr = c.wrap(stdout), c.wrap(stderr)
	}
	o, _ := owner.From(ctx)
	c, err := t.Sandbox.Command(sandbox.Spec{
		Path: program, Args: args, Dir: dir, Workspace: sandbox.WorkspaceFrom(ctx),
		Env:    append([]string{}, t.Env...), // non-nil: never inherit
		Stdout: stdout, Stderr: stderr, ExtraFiles: extra,
		Owner: ownerText(o), Run: RunKey(o),
	})
	if err != nil {
		return nil, fmt.Errorf("run command: %w", err)
	}
	return c, nil
}

// ownerText is o's notation, "" without an owner.
func ownerText(o owner.Owner) string {
	if !o.Valid() {
		return ""
	}
	return o.String()
}

// RunKey is the run an owner's processes are fenced by: "cron:RUN" for
// a cron run, "kanban:RUN" for a kanban run, "" otherwise.
func RunKey(o owner.Owner) string {
	if !o.Valid() || o.Run() == "" {
		return ""
	}
	// The store looks runs up by these keys (a run with processes on
	// record is not retried before they are fenced).
	switch o.Kind() {
	case owner.KindCron:
		return store.CronRunKey(o.Run())
	case owner.KindKanban:
		return store.KanbanRunKey(o.Run())
	}
	return ""
}

// run starts c and waits for it under the terminal's timeout, and
// returns the exit code as a shell reports it.
func (t Terminal) run(ctx context.Context, c *sandbox.Cmd) (int, error) {
	r, err := t.wait(ctx, c)
	return r.Code, err
}

func (t Terminal) wait(ctx context.Context, c *sandbox.Cmd) (Result, error) {
	if t.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.Timeout)
		defer cancel()
	}
	err := c.Run(ctx)
	var exit *sandbox.ExitError
	switch {
	case err == nil:
		return Result{}, nil
	case ctx.Err() != nil:
		return Result{Code: -1}, fmt.Errorf("run command: %w", context.Cause(ctx))
	case errors.As(err, &exit):
		return Result{Code: exit.ShellCode(), Signaled: exit.Signal != 0}, nil
	}
	return Result{Code: -1}, fmt.Errorf("run command: %w", err)
}

// TruncatedMarker ends capped output.
const TruncatedMarker = "\n[warden: output truncated]\n"

// outputCap counts what stdout and stderr pass on together.
type outputCap struct {
	mu     sync.Mutex
	left   int
	marked bool
}

type capWriter struct {
	c *outputCap
	w io.Writer
}

func (c *outputCap) wrap(w io.Writer) io.Writer {
	if w == nil {
		return nil
	}
	return capWriter{c, w}
}

func (cw capWriter) Write(p []byte) (int, error) {
	cw.c.mu.Lock()
	defer cw.c.mu.Unlock()
	n := len(p)
	if cw.c.left <= 0 {
		if !cw.c.marked {
			cw.c.marked = true
			cw.w.Write([]byte(TruncatedMarker))
		}
		return n, nil // drained: the child must not block on a full pipe
	}
	if len(p) > cw.c.left {
		p = p[:cw.c.left]
	}
	cw.c.left -= len(p)
	if _, err := cw.w.Write(p); err != nil {
		return 0, err
	}
	return n, nil
}
