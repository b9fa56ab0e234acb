package dispatch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

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
// through the host, writing a transcript to the process's standard
// output (the run's log file). See RunWorker.
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
	// Socket is the worker socket's path.
	Socket string
	// Out receives the transcript: each step and its output.
	Out io.Writer
}

// RunWorker runs one task run: hello with the token, then each script
// step through the host's shell verb, in order. The host's gate decides
// every step; the worker only reports:
//   - a step that was not allowed blocks the task, with the gate's reason
//     as a comment, and RunWorker returns nil;
//   - a step that exits non-zero (or cannot run) fails the run, and
//     RunWorker returns an error wrapping ErrStepFailed;
//   - after the last step the run completes.
//
// If the host says the run has ended (an operator stopped it), RunWorker
// returns nil at once.
func RunWorker(ctx context.Context, p WorkerParams) error {
	out := p.Out
	if out == nil {
		out = io.Discard
	}
	token, err := readToken(p.Token)
	if err != nil {
		return err
	}
	c, err := workerapi.Dial(ctx, p.Socket)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	defer c.Close()
	h, err := c.Hello(ctx, token, p.Task)
	if err != nil {
		return fmt.Errorf("worker: hello for task %s: %w", p.Task, err)
	}
	fmt.Fprintf(out, "warden worker: task %s (%s), run %s, as %s, in %s\n", h.Task.ID, h.Task.Title, h.Run, h.Owner, h.Dir)
	if h.Task.Prompt != "" {
		return runAgent(ctx, c, out)
	}
	for i, step := range h.Task.Script {
		fmt.Fprintf(out, "$ %s\n", step)
		res, err := c.Shell(ctx, step, out)
		if errors.Is(err, workerapi.ErrEnded) {
			fmt.Fprintln(out, "warden worker: the run was ended by the host; stopping")
			return nil
		}
		if err != nil {
			return fmt.Errorf("worker: step %d: %w", i+1, err)
		}
		if !res.Allowed {
			fmt.Fprintf(out, "warden worker: step %d was not allowed (%s): %s\n", i+1, res.Rule, res.Message)
			if _, err := c.Block(ctx, res.Message); err != nil && !errors.Is(err, workerapi.ErrEnded) {
				return fmt.Errorf("worker: block: %w", err)
			}
			return nil
		}
		if res.ExitCode != 0 {
			reason := fmt.Sprintf("step %d (%s) exited with status %d", i+1, oneLine(step), res.ExitCode)
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

// runAgent has the host run the task's agent; the host ends the run.
func runAgent(ctx context.Context, c *workerapi.Client, out io.Writer) error {
	fmt.Fprintln(out, "warden worker: prompt task; the host runs the agent as this run")
	res, err := c.Agent(ctx)
	if errors.Is(err, workerapi.ErrEnded) {
		fmt.Fprintln(out, "warden worker: the run was ended by the host; stopping")
		return nil
	}
	if err != nil {
		// A refusal (no model configured) fails the run so the task is
		// retried and then blocked with the reason.
		if _, ferr := c.Fail(ctx, err.Error()); ferr != nil && !errors.Is(ferr, workerapi.ErrEnded) {
			return fmt.Errorf("worker: fail: %w", ferr)
		}
		return fmt.Errorf("worker: agent: %w", err)
	}
	fmt.Fprint(out, res.Transcript)
	fmt.Fprintf(out, "warden worker: agent made %d tool calls (%d refused); task is %s\n", res.Calls, res.Blocked, res.Status)
	return nil
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
