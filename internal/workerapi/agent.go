package workerapi

import (
	"context"
	"errors"
	"strings"

	"github.com/wardenhq/warden/internal/store"
)

// agent runs the task's prompt through the host's agent as the
// connection's owner, records the run as one step, and ends the run if
// the agent did not.
func (cn *conn) agent(ctx context.Context) Response {
	if cn.s.o.Agent == nil {
		return refused("no model configured: set llm.base_url and llm.model in the config file")
	}
	t, err := cn.s.o.Board.GetTask(ctx, cn.task.ID)
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
	out := tr.Text
	if aerr != nil {
		out += "\nwarden: " + aerr.Error()
	}
	code := 0
	if aerr != nil {
		code = -1
	}
	step := store.TaskStep{Command: t.Prompt, Verdict: "agent", Rule: "agent", ExitCode: code,
		Output: out, Started: started, Finished: cn.s.o.Now()}
	if _, err := cn.s.o.Board.AppendRunStep(context.WithoutCancel(ctx), cn.run, step); err != nil && !errors.Is(err, store.ErrTaskRunEnded) {
		return internal(err)
	}
	res := AgentResult{Transcript: out, Reply: tr.Reply, Calls: tr.Calls, Blocked: tr.Blocked}
	if !cn.ended {
		var end Response
		if aerr != nil {
			end = cn.end(ctx, func() (store.Task, error) {
				return cn.s.o.Board.RecordFailure(ctx, cn.run, "agent: "+aerr.Error(), cn.s.o.FailureLimit, cn.s.o.Now())
			})
		} else {
			if r := strings.TrimSpace(tr.Reply); r != "" {
				_ = b.Comment(ctx, r)
			}
			end = cn.end(ctx, func() (store.Task, error) {
				return cn.s.o.Board.FinishRun(ctx, cn.run, store.RunFinish{Status: store.TaskRunSucceeded, Review: cn.s.o.Review, At: cn.s.o.Now()})
			})
		}
		if end.Code != "" && end.Code != CodeEnded {
			return end
		}
		b.status = end.Status
	}
	res.Status = b.status
	if res.Status == "" {
		if t, err := cn.s.o.Board.GetTask(context.WithoutCancel(ctx), cn.task.ID); err == nil {
			res.Status = t.Status
		}
	}
	return Response{Agent: &res}
}

// taskBoard gives the agent the kanban tools of the connection's own
// run; the agent never names a task.
type taskBoard struct {
	cn     *conn
	status store.TaskStatus
}

func (b *taskBoard) Comment(ctx context.Context, body string) error {
	if strings.TrimSpace(body) == "" {
		return errors.New("empty comment")
	}
	_, err := b.cn.s.o.Board.AddComment(ctx, store.TaskComment{Task: b.cn.task.ID, Author: b.cn.owner.String(), Body: body, Time: b.cn.s.o.Now()})
	return err
}

func (b *taskBoard) Complete(ctx context.Context, summary string) error {
	if b.cn.ended {
		return errors.New("the run has already ended")
	}
	if strings.TrimSpace(summary) != "" {
		if err := b.Comment(ctx, summary); err != nil {
			return err
		}
	}
	r := b.cn.end(ctx, func() (store.Task, error) {
		return b.cn.s.o.Board.FinishRun(ctx, b.cn.run, store.RunFinish{Status: store.TaskRunSucceeded, Review: b.cn.s.o.Review, At: b.cn.s.o.Now()})
	})
	return b.result(r)
}

func (b *taskBoard) Block(ctx context.Context, reason string) error {
	if b.cn.ended {
		return errors.New("the run has already ended")
	}
	reason = strings.TrimSpace(reason)
	if reason == "" {
		reason = "blocked by the agent"
	}
	if err := b.Comment(ctx, "blocked: "+reason); err != nil {
		return err
	}
	r := b.cn.end(ctx, func() (store.Task, error) {
		return b.cn.s.o.Board.FinishRun(ctx, b.cn.run, store.RunFinish{Status: store.TaskRunBlocked, Reason: reason, At: b.cn.s.o.Now()})
	})
	return b.result(r)
}

func (b *taskBoard) result(r Response) error {
	if r.Error != "" {
		return errors.New(r.Error)
	}
	b.status = r.Status
	return nil
}
