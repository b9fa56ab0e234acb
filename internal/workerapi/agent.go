package workerapi

import (
	"context"
	"errors"
	"strings"

	"github.com/wardenhq/warden/internal/store"
)

// agent runs the task's prompt through the host's agent as the
// connection's owner, records the run as one step, and then ends the
// run: blocked if the agent called kanban_block, done otherwise (its
// last words become a comment), or a failure if the agent could not run.
func (cn *conn) agent(ctx context.Context) Response {
	if cn.s.o.Agent == nil {
		return refused("no model configured: set llm.base_url and llm.model in the config file")
	}
	t, err := cn.s.o.Board.Get(ctx, cn.task.ID)
	if err != nil {
		return internal(err)
	}
	if strings.TrimSpace(t.Prompt) == "" {
		return badRequest("task " + t.ID + " has no prompt; run its script")
	}
	msg := t.Prompt + "\n\nYour kanban task: " + t.Title
	if t.Body != "" {
		msg += "\n\n" + t.Body
	}
	started := cn.s.o.Now()
	b := &taskBoard{cn: cn}
	tr, aerr := cn.s.o.Agent.Prompt(ctx, "kanban:"+t.ID+":"+cn.run, cn.dir, msg, b)
	out, code := tr.Text, 0
	if aerr != nil {
		out, code = out+"\nwarden: "+aerr.Error(), -1
	}
	step := store.TaskStep{Command: t.Prompt, Verdict: "agent", Rule: "agent", ExitCode: code,
		Output: out, Started: started, Finished: cn.s.o.Now()}
	if _, err := cn.s.o.Board.Step(context.WithoutCancel(ctx), cn.run, step); errors.Is(err, store.ErrTaskRunEnded) {
		cn.ended = true
		return ended()
	} else if err != nil {
		return internal(err)
	}
	var end Response
	switch {
	case aerr != nil:
		end = cn.end(ctx, func() (store.Task, error) {
			return cn.s.o.Board.Fail(ctx, cn.run, "agent: "+aerr.Error(), cn.s.o.FailureLimit)
		})
	case b.block != "":
		end = cn.end(ctx, func() (store.Task, error) {
			return cn.s.o.Board.Finish(ctx, cn.run, store.RunFinish{Status: store.TaskRunBlocked, Reason: b.block})
		})
	default:
		if r := strings.TrimSpace(tr.Reply); r != "" && !b.completed {
			_ = b.Comment(ctx, r)
		}
		end = cn.end(ctx, func() (store.Task, error) {
			return cn.s.o.Board.Finish(ctx, cn.run, store.RunFinish{Status: store.TaskRunSucceeded, Review: cn.s.o.Review})
		})
	}
	if end.Code != "" {
		return end
	}
	return Response{Agent: &AgentResult{Transcript: out, Reply: tr.Reply, Calls: tr.Calls, Blocked: tr.Blocked, Status: end.Status}}
}

// taskBoard gives the agent the kanban tools of the connection's own
// run; the agent never names a task. Completing or blocking takes
// effect when the agent's turn ends, after its step is recorded.
type taskBoard struct {
	cn        *conn
	completed bool
	block     string
}

func (b *taskBoard) Comment(ctx context.Context, body string) error {
	if strings.TrimSpace(body) == "" {
		return errors.New("empty comment")
	}
	_, err := b.cn.s.o.Board.Comment(ctx, b.cn.task.ID, b.cn.owner.String(), body)
	return err
}

func (b *taskBoard) Complete(ctx context.Context, summary string) error {
	if b.completed || b.block != "" {
		return errors.New("the task is already marked; finish your turn")
	}
	if strings.TrimSpace(summary) != "" {
		if err := b.Comment(ctx, summary); err != nil {
			return err
		}
	}
	b.completed = true
	return nil
}

func (b *taskBoard) Block(ctx context.Context, reason string) error {
	if b.completed || b.block != "" {
		return errors.New("the task is already marked; finish your turn")
	}
	reason = strings.TrimSpace(reason)
	if reason == "" {
		reason = "blocked by the agent"
	}
	if err := b.Comment(ctx, "blocked: "+reason); err != nil {
		return err
	}
	b.block = reason
	return nil
}
