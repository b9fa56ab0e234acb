package dispatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/agent"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/llm"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/tools"
	"github.com/wardenhq/warden/internal/workerapi"
)

// runAgent runs a prompt task's agent loop in this worker: the model's
// calls go to the host (which holds the conversation and the model's
// credentials), every command, program and file write the model asks
// for is decided by the host and then run here exactly as decided, and
// the kanban tools are the run's own verbs. When the model ends its
// turn the run ends: blocked if it called kanban_block, done otherwise
// (its last words a comment unless it called kanban_complete), failed if
// the agent could not run.
func runAgent(ctx context.Context, c *workerapi.Client, h workerapi.Hello, run stepExec, env []string, out io.Writer) error {
	fmt.Fprintln(out, "warden worker: prompt task; the agent runs here, the host answers its model calls and decides its actions")
	// The agent's loop wants an owner in its context; it is the host's
	// notation of the run, for this process's own use only: the host
	// decides as the run it bound at hello, whatever is here.
	o, err := owner.Parse(h.Owner)
	if err != nil {
		o = owner.Internal()
	}
	b := &workerBoard{c: c}
	a := agent.New(agent.Options{
		Model:    &hostModel{c: c},
		Exec:     &workerExec{c: c, run: run, env: env, dir: h.Dir},
		MaxTurns: h.MaxTurns,
	})
	tr, aerr := a.Prompt(owner.With(ctx, o), "", h.Dir, agent.TaskInput(h.Task.Prompt, h.Task.Title, h.Task.Body), b)
	fmt.Fprint(out, tr.Text)
	if ctx.Err() != nil {
		fmt.Fprintf(out, "warden worker: stopping: %v\n", context.Cause(ctx))
		return fmt.Errorf("worker: agent: %w", context.Cause(ctx))
	}
	var st any
	switch {
	case errors.Is(aerr, workerapi.ErrEnded):
		err = aerr
	case aerr != nil:
		// A refusal (no model configured) fails the run so the task is
		// retried and then blocked with the reason.
		fmt.Fprintf(out, "warden worker: the agent failed: %v\n", aerr)
		if _, ferr := c.Fail(ctx, "agent: "+aerr.Error()); ferr != nil && !errors.Is(ferr, workerapi.ErrEnded) {
			return fmt.Errorf("worker: fail: %w", ferr)
		}
		return fmt.Errorf("worker: agent: %w", aerr)
	case b.block != "":
		st, err = c.Block(ctx, b.block)
	default:
		if r := strings.TrimSpace(tr.Reply); r != "" && !b.completed {
			if err = c.Comment(ctx, r); err != nil {
				break
			}
		}
		st, err = c.Complete(ctx)
	}
	if errors.Is(err, workerapi.ErrEnded) {
		fmt.Fprintln(out, "warden worker: the run was ended by the host; stopping")
		return nil
	}
	if err != nil {
		return fmt.Errorf("worker: end the run: %w", err)
	}
	fmt.Fprintf(out, "warden worker: agent made %d tool calls (%d refused); task is %s\n", tr.Calls, tr.Blocked, st)
	return nil
}

// hostModel is the model as a worker sees it: each call asks the host
// (verb model), which holds the conversation. The worker sends only the
// results of the calls the model's last reply made: its own system and
// user messages are never sent, and the host starts the conversation
// from its own record of the task.
type hostModel struct {
	c *workerapi.Client
	// held is how many messages of the agent's conversation the host
	// holds: the two it started with and every reply and result since.
	held int
}

// Complete implements llm.Client.
func (m *hostModel) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	var results []workerapi.ToolResult
	if m.held > 0 {
		if len(req.Messages) < m.held {
			return llm.Response{}, errors.New("the conversation went back")
		}
		for _, msg := range req.Messages[m.held:] {
			if msg.Role != llm.Tool {
				return llm.Response{}, fmt.Errorf("a %s message: only tool results go to the host", msg.Role)
			}
			results = append(results, workerapi.ToolResult{CallID: msg.ToolCallID, Content: msg.Content})
		}
	}
	r, err := m.c.Model(ctx, results)
	if err != nil {
		return llm.Response{}, err
	}
	m.held = len(req.Messages) + 1 // and the reply the agent appends
	return llm.Response{Message: r.Message, FinishReason: r.FinishReason}, nil
}

// workerExec is the agent's Executor in a worker: the host decides
// each action as the run; an allowed one runs here, exactly as decided,
// and its outcome is reported.
type workerExec struct {
	c   *workerapi.Client
	run stepExec
	env []string
	// dir is the run's workspace, where the host decides and the worker
	// runs everything.
	dir string
}

// Authorize implements agent.Executor. Only MCP tools reach it, and a
// worker's agent is offered none.
func (e *workerExec) Authorize(context.Context, action.Action) (runner.Outcome, error) {
	return runner.Outcome{Message: "warden: a kanban worker's agent has no MCP tools"}, nil
}

// decide asks the host about a and checks an allowed decision is for a.
func (e *workerExec) decide(ctx context.Context, a workerapi.Act) (workerapi.Act, runner.Outcome, error) {
	d, err := e.c.DecideAction(ctx, a)
	if err != nil {
		return workerapi.Act{}, runner.Outcome{}, err
	}
	out := runner.Outcome{Allowed: d.Allowed, Message: d.Message, Decision: gate.Decision{Verdict: gate.Verdict(d.Verdict), Rule: d.Rule}}
	if !d.Allowed {
		return workerapi.Act{}, out, nil
	}
	decided := a
	if a.Kind == action.Write && d.Action != nil {
		decided.Path = d.Action.Path
	}
	if d.Action == nil || *d.Action != decided {
		return workerapi.Act{}, runner.Outcome{}, errors.New("the host decided another action than the one asked")
	}
	return decided, out, nil
}

// report runs an allowed action with run and reports how it ended.
// The output is kept as the run's history keeps it (its head and its
// tail), which is also what the model is given: a command that prints
// without end does not fill the worker's memory.
func (e *workerExec) report(ctx context.Context, a workerapi.Act, w io.Writer, run func(io.Writer) (int, error)) (int, error) {
	var kept workerapi.Output
	code, rerr := run(&kept)
	if ctx.Err() != nil {
		return -1, context.Cause(ctx)
	}
	output := kept.String()
	if rerr != nil {
		code, output = -1, output+"\nwarden: "+rerr.Error()
	}
	_, _ = io.WriteString(w, output)
	if _, err := e.c.StepAction(ctx, a, code, output); err != nil {
		return code, err
	}
	return code, nil
}

// Shell implements agent.Executor.
func (e *workerExec) Shell(ctx context.Context, command, _ string, stdout, _ io.Writer) (runner.Outcome, int, error) {
	a, out, err := e.decide(ctx, workerapi.ShellAct(command))
	if err != nil || !out.Allowed {
		return out, -1, err
	}
	code, err := e.report(ctx, a, stdout, func(w io.Writer) (int, error) {
		return e.run.shell(ctx, a.Command, e.dir, e.env, w)
	})
	return out, code, err
}

// Code implements agent.Executor.
func (e *workerExec) Code(ctx context.Context, language, source, _ string, stdout, _ io.Writer) (runner.Outcome, int, error) {
	a, out, err := e.decide(ctx, workerapi.CodeAct(language, source))
	if err != nil || !out.Allowed {
		return out, -1, err
	}
	code, err := e.report(ctx, a, stdout, func(w io.Writer) (int, error) {
		return e.run.code(ctx, a.Language, a.Source, e.dir, e.env, w)
	})
	return out, code, err
}

// WriteFile implements agent.Executor: the file is written at the path
// the host decided, through os.Root on the workspace.
func (e *workerExec) WriteFile(ctx context.Context, _ tools.Files, path string, data []byte) (runner.Outcome, error) {
	a, out, err := e.decide(ctx, workerapi.WriteAct(path, int64(len(data))))
	if err != nil || !out.Allowed {
		return out, err
	}
	var werr error
	_, err = e.report(ctx, a, io.Discard, func(io.Writer) (int, error) {
		if werr = (tools.Files{Root: e.dir}).WriteFile(a.Path, data); werr != nil {
			return -1, werr
		}
		return 0, nil
	})
	if werr != nil {
		return out, werr
	}
	return out, err
}

// workerBoard gives the agent the kanban tools of the worker's own run;
// completing or blocking takes effect when the agent's turn ends.
type workerBoard struct {
	c         *workerapi.Client
	completed bool
	block     string
}

// Comment implements agent.Board.
func (b *workerBoard) Comment(ctx context.Context, body string) error {
	if strings.TrimSpace(body) == "" {
		return errors.New("empty comment")
	}
	return b.c.Comment(ctx, body)
}

// Complete implements agent.Board.
func (b *workerBoard) Complete(ctx context.Context, summary string) error {
	if b.completed || b.block != "" {
		return errors.New("the task is already marked; finish your turn")
	}
	if strings.TrimSpace(summary) != "" {
		if err := b.c.Comment(ctx, summary); err != nil {
			return err
		}
	}
	b.completed = true
	return nil
}

// Block implements agent.Board.
func (b *workerBoard) Block(_ context.Context, reason string) error {
	if b.completed || b.block != "" {
		return errors.New("the task is already marked; finish your turn")
	}
	if b.block = strings.TrimSpace(reason); b.block == "" {
		b.block = "blocked by the agent"
	}
	return nil
}
