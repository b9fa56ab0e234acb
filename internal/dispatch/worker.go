package dispatch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/wardenhq/warden/internal/execenv"
	"github.com/wardenhq/warden/internal/sandbox"
	"github.com/wardenhq/warden/internal/tools"
	"github.com/wardenhq/warden/internal/workerapi"
)

// maxToken bounds what a worker reads from its token descriptor.
const maxToken = 4096

// ErrStepFailed: a script step exited non-zero; the run was recorded as
// failed.
var ErrStepFailed = errors.New("script step failed")

// Worker is `warden worker --task ID`: it reads its one-time token from
// file descriptor tokenFD (TokenFD when spawned by the Dispatcher),
// connects to the worker socket, says hello, and runs the task's script
// (or its agent loop) itself, asking the host to decide each action,
// writing a transcript to
// the process's standard output (the run's log file). See RunWorker.
func Worker(ctx context.Context, taskID string, tokenFD int, socket string) error {
	f := os.NewFile(uintptr(tokenFD), "warden-worker-token")
	if f == nil {
		return fmt.Errorf("worker: no token descriptor %d", tokenFD)
	}
	// RunWorker closes f once the token is read: nothing the worker
	// does later can find it.
	return RunWorker(ctx, WorkerParams{Task: taskID, Token: f, Socket: socket, Out: os.Stdout})
}

// WorkerParams are a worker's inputs.
type WorkerParams struct {
	// Task is the task id the worker was started for; the host checks
	// the token is bound to it.
	Task string
	// Token yields the one-time token; it is read to its end (or the
	// first line) once, then closed if it is an io.Closer.
	Token io.Reader
	// Socket is the worker socket's path (a local worker).
	Socket string
	// Remote, when set, makes this a remote worker: it dials the host
	// over TLS instead of Socket and runs every step in its own sandbox.
	Remote *RemoteParams
	// Out receives the transcript: each step and its output.
	Out io.Writer
	// Trace, if set, receives every line the host sends (debugging,
	// and tests that check what a worker is told).
	Trace io.Writer
}

// RemoteParams are what a worker on another machine adds.
type RemoteParams struct {
	// Addr is the host's worker listener (HOST:PORT) and Pin the
	// SHA-256 fingerprint of its certificate (workerapi.ParsePin).
	Addr string
	Pin  []byte
	// Workspace is the absolute directory the steps run in, on this
	// machine: the one writable root of their sandbox.
	Workspace string
	// Environ is this process's environment (read at the edge): the
	// steps get execenv.Build of it with the host's passthrough names.
	Environ []string
	// Sandbox returns the sandbox the steps run in, given the host's
	// network setting; the edge builds it (internal/sandbox on this
	// machine).
	Sandbox func(ctx context.Context, network bool) (*sandbox.Sandbox, error)
}

// RunWorker runs one task run: hello with the token, then, for each
// script step in order, it asks the host to decide the step (as the run
// the token is bound to; the host may ask a human, for as long as that
// takes), runs exactly the decided text with bash in the workspace,
// with the environment the host gave, and reports how it ended:
//   - a step that was not allowed blocks the task, with the gate's reason
//     as a comment, and RunWorker returns nil;
//   - a step that exits non-zero (or cannot run) fails the run, and
//     RunWorker returns an error wrapping ErrStepFailed;
//   - after the last step the run completes.
//
// A prompt task runs its agent loop here instead (see runAgent): the
// model's calls go to the host, and each command, program and file
// write the model asks for is decided by the host, run here and
// reported like a step.
//
// If the host says the run has ended (an operator stopped it), RunWorker
// returns nil at once. A remote worker that loses its lease kills its
// running step and returns an error wrapping workerapi.ErrLeaseLapsed.
func RunWorker(ctx context.Context, p WorkerParams) error {
	out := p.Out
	if out == nil {
		out = io.Discard
	}
	// Nothing the worker runs (same user, same sandbox) may trace it or
	// read its memory and descriptors: its connection is the run.
	_ = sandbox.HideSelf()
	token, err := readToken(p.Token)
	if err != nil {
		return err
	}
	var c *workerapi.Client
	workspace := ""
	if p.Remote != nil {
		workspace = p.Remote.Workspace
		c, err = workerapi.DialTLS(ctx, p.Remote.Addr, p.Remote.Pin)
	} else {
		c, err = workerapi.Dial(ctx, p.Socket)
	}
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	defer c.Close()
	if p.Trace != nil {
		c.Trace(p.Trace)
	}
	ctx, lost := context.WithCancelCause(ctx)
	defer lost(nil)
	start := time.Now()
	h, err := c.HelloIn(ctx, token, p.Task, workspace)
	if err != nil {
		return fmt.Errorf("worker: hello for task %s: %w", p.Task, err)
	}
	if h.LeaseMillis > 0 {
		var wg sync.WaitGroup
		lctx, stop := context.WithCancel(ctx)
		wg.Go(func() { c.KeepLease(lctx, time.Duration(h.LeaseMillis)*time.Millisecond, start, lost) })
		defer wg.Wait()
		defer stop()
	}
	fmt.Fprintf(out, "warden worker: task %s (%s), run %s, as %s, in %s\n", h.Task.ID, h.Task.Title, h.Run, h.Owner, h.Dir)
	run, env, err := stepRunner(ctx, p, h)
	if err == nil && h.Task.Prompt != "" {
		return runAgent(ctx, c, h, run, env, out)
	}
	if err != nil {
		if _, ferr := c.Fail(ctx, err.Error()); ferr != nil && !errors.Is(ferr, workerapi.ErrEnded) {
			return fmt.Errorf("worker: fail: %w", ferr)
		}
		return fmt.Errorf("worker: %w", err)
	}
	for i, step := range h.Task.Script {
		fmt.Fprintf(out, "$ %s\n", step)
		d, err := c.Decide(ctx, step)
		if errors.Is(err, workerapi.ErrEnded) {
			fmt.Fprintln(out, "warden worker: the run was ended by the host; stopping")
			return nil
		}
		if err != nil {
			return fmt.Errorf("worker: step %d: %w", i+1, err)
		}
		if !d.Allowed {
			fmt.Fprintf(out, "warden worker: step %d was not allowed (%s): %s\n", i+1, d.Rule, d.Message)
			if _, err := c.Block(ctx, d.Message); err != nil && !errors.Is(err, workerapi.ErrEnded) {
				return fmt.Errorf("worker: block: %w", err)
			}
			return nil
		}
		var kept workerapi.Output
		code, rerr := run.shell(ctx, step, h.Dir, env, io.MultiWriter(out, &kept))
		if ctx.Err() != nil {
			// The lease lapsed (or the worker is stopping): the step was
			// killed with ctx, and nothing more is reported for the run.
			fmt.Fprintf(out, "warden worker: stopping: %v\n", context.Cause(ctx))
			return fmt.Errorf("worker: step %d: %w", i+1, context.Cause(ctx))
		}
		output := kept.String()
		if rerr != nil {
			code, output = -1, output+"\nwarden: "+rerr.Error()
		}
		if _, err := c.Step(ctx, step, code, output); errors.Is(err, workerapi.ErrEnded) {
			fmt.Fprintln(out, "warden worker: the run was ended by the host; stopping")
			return nil
		} else if err != nil {
			return fmt.Errorf("worker: step %d: report: %w", i+1, err)
		}
		if code != 0 {
			reason := fmt.Sprintf("step %d (%s) exited with status %d", i+1, oneLine(step), code)
			fmt.Fprintf(out, "warden worker: %s\n", reason)
			if _, err := c.Fail(ctx, reason); err != nil && !errors.Is(err, workerapi.ErrEnded) {
				return fmt.Errorf("worker: fail: %w", err)
			}
			return fmt.Errorf("worker: %s: %w", reason, ErrStepFailed)
		}
	}
	st, err := c.Complete(ctx)
	if errors.Is(err, workerapi.ErrEnded) {
		fmt.Fprintln(out, "warden worker: the run was ended by the host")
		return nil
	}
	if err != nil {
		return fmt.Errorf("worker: complete: %w", err)
	}
	fmt.Fprintf(out, "warden worker: done; task is %s\n", st)
	return nil
}

// runStep runs one decided command and returns its exit status as a
// shell reports it.
type runStep func(ctx context.Context, command, dir string, env []string, w io.Writer) (int, error)

// runCode runs one decided program (execute_code) and returns its exit
// status as a shell reports it.
type runCode func(ctx context.Context, language, source, dir string, env []string, w io.Writer) (int, error)

// stepExec is how this worker runs what the host allowed.
type stepExec struct {
	shell runStep
	code  runCode
}

// stepRunner is how this worker runs its steps (and its agent's
// commands and programs), and their environment. A local worker is
// inside the sandbox the dispatcher started it in: its steps are its
// children there, in its process group (so the run's fence kills them
// with it), and what a step detaches is re-parented to the worker and
// killed when the step ends. A remote worker runs each step in a
// sandbox of its own machine.
func stepRunner(ctx context.Context, p WorkerParams, h workerapi.Hello) (stepExec, []string, error) {
	if p.Remote == nil {
		if h.Env == nil {
			return stepExec{}, nil, errors.New("the host gave no environment for the steps")
		}
		n, err := sandbox.NewNested()
		if err != nil {
			return stepExec{}, nil, err
		}
		return stepExec{shell: runLocal(n), code: runLocalCode(n)}, h.Env, nil
	}
	env := execenv.Build(p.Remote.Environ, h.Passthrough, nil)
	sb, err := p.Remote.Sandbox(ctx, h.Network)
	if err != nil {
		return stepExec{}, nil, fmt.Errorf("sandbox: %w", err)
	}
	if err := sb.Err(); err != nil {
		return stepExec{}, nil, fmt.Errorf("sandbox: %w", err)
	}
	term := func(env []string) tools.Terminal { return tools.Terminal{Shell: "bash", Env: env, Sandbox: sb} }
	return stepExec{
		shell: func(ctx context.Context, command, dir string, env []string, w io.Writer) (int, error) {
			r, err := term(env).Exec(sandbox.WithWorkspace(ctx, dir), command, dir, nil, w, w)
			return r.Code, err
		},
		code: func(ctx context.Context, language, source, dir string, env []string, w io.Writer) (int, error) {
			return tools.Code{Terminal: term(env)}.Run(sandbox.WithWorkspace(ctx, dir), language, source, dir, w, w)
		},
	}, env, nil
}

// runLocal returns how a local worker runs a step: bash -c with
// exactly the decided text, as a nested call of the worker's own
// sandbox; what the step leaves running dies with it.
func runLocal(n *sandbox.Nested) runStep {
	return func(ctx context.Context, command, dir string, env []string, w io.Writer) (int, error) {
		bash, err := lookPath("bash", env)
		if err != nil {
			return -1, err
		}
		return nestedExit(n.Run(ctx, bash, []string{"-c", command}, dir, env, w))
	}
}

// runLocalCode returns how a local worker runs a program: its source in
// a private temporary file, run by the language's interpreter as a
// nested call of the worker's own sandbox.
func runLocalCode(n *sandbox.Nested) runCode {
	return func(ctx context.Context, language, source, dir string, env []string, w io.Writer) (int, error) {
		prog, ext, ok := tools.Interpreter(language)
		if !ok {
			return -1, fmt.Errorf("execute code: unsupported language %q", language)
		}
		path := prog
		if !filepath.IsAbs(prog) {
			var err error
			if path, err = lookPath(prog, env); err != nil {
				return -1, err
			}
		}
		tmp, err := os.MkdirTemp("", "warden-code-")
		if err != nil {
			return -1, fmt.Errorf("execute code: %w", err)
		}
		defer os.RemoveAll(tmp)
		file := filepath.Join(tmp, "main"+ext)
		if err := os.WriteFile(file, []byte(source), 0o600); err != nil {
			return -1, fmt.Errorf("execute code: %w", err)
		}
		return nestedExit(n.Run(ctx, path, []string{file}, dir, env, w))
	}
}

// nestedExit is a nested call's exit status as a shell reports it, or
// why it did not run to an exit.
func nestedExit(err error) (int, error) {
	var exit *sandbox.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &exit):
		return exit.ShellCode(), nil
	}
	return -1, err
}

// lookPath finds program on the steps' PATH.
func lookPath(program string, env []string) (string, error) {
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, program)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not on the steps' PATH", program)
}

// readToken reads the token: the first line of r, at most maxToken
// bytes.
func readToken(r io.Reader) (string, error) {
	if r == nil {
		return "", errors.New("worker: no token")
	}
	if c, ok := r.(io.Closer); ok {
		defer c.Close()
	}
	line, err := bufio.NewReader(io.LimitReader(r, maxToken)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("worker: read token: %w", err)
	}
	tok := strings.TrimSpace(line)
	if tok == "" {
		return "", errors.New("worker: empty token")
	}
	return tok, nil
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	return s
}
