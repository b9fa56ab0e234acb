package workerapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wardenhq/warden/internal/agent"
	"github.com/wardenhq/warden/internal/llm"
	"github.com/wardenhq/warden/internal/store"
)

// chat is the conversation the host holds for a prompt task's run: the
// worker adds only results of the calls the model made, and the model
// is called with what the host holds, never with a conversation the
// worker wrote.
type chat struct {
	msgs  []llm.Message
	size  int // bytes of text held
	turns int
	// open are the calls of the model's last reply, awaiting results.
	open map[string]bool
	// over: the model ended its turn in words, or a call failed; no
	// more model calls for this run.
	over bool
}

func (c *chat) add(m llm.Message) {
	c.msgs = append(c.msgs, m)
	c.size += len(m.Content) + len(m.ToolCallID)
	for _, tc := range m.ToolCalls {
		c.size += len(tc.ID) + len(tc.Name) + len(tc.Arguments)
	}
}

// answer adds the results of the outstanding calls: each answered once,
// none left out, none invented.
func (c *chat) answer(results []ToolResult) error {
	if len(results) != len(c.open) {
		return fmt.Errorf("%d results for %d tool calls", len(results), len(c.open))
	}
	seen := map[string]bool{}
	for _, r := range results {
		switch {
		case !c.open[r.CallID]:
			return fmt.Errorf("a result for %q, which is no outstanding tool call", r.CallID)
		case seen[r.CallID]:
			return fmt.Errorf("two results for tool call %q", r.CallID)
		case len(r.Content) > MaxToolResult:
			return fmt.Errorf("the result of tool call %q is %d bytes, over %d", r.CallID, len(r.Content), MaxToolResult)
		}
		seen[r.CallID] = true
	}
	for _, r := range results {
		c.add(llm.Message{Role: llm.Tool, ToolCallID: r.CallID, Content: r.Content})
	}
	c.open = nil
	return nil
}

// model answers a prompt task's model call with the host's model, as
// the run (see the package doc): the first call starts the conversation
// from the host's record of the task; each later one carries the
// results of the calls the model's last reply made.
func (cn *conn) model(ctx context.Context, req Request) Response {
	if cn.s.o.Model == nil {
		return refused(llm.ErrNotConfigured.Error())
	}
	if strings.TrimSpace(cn.task.Prompt) == "" {
		return refused("task " + cn.task.ID + " has no prompt: it runs its steps")
	}
	if r := cn.flush(ctx); r.Code != "" {
		return r
	}
	c := cn.chat
	switch {
	case c == nil:
		if len(req.Results) > 0 {
			return badRequest("no tool call is outstanding")
		}
		c = &chat{}
		c.add(llm.Message{Role: llm.System, Content: cn.s.o.System})
		c.add(llm.Message{Role: llm.User, Content: agent.TaskInput(cn.task.Prompt, cn.task.Title, cn.task.Body)})
		cn.chat = c
	case c.over:
		return refused("the model has ended its turn for this run: complete, block or fail it")
	default:
		if err := c.answer(req.Results); err != nil {
			return badRequest(err.Error())
		}
	}
	if c.turns >= cn.s.o.MaxTurns {
		c.over = true
		return refused(fmt.Sprintf("the run has had its %d model calls (llm.max_turns)", cn.s.o.MaxTurns))
	}
	if c.size > MaxConversation {
		c.over = true
		return refused(fmt.Sprintf("the run's conversation is over %d bytes", MaxConversation))
	}
	c.turns++
	// One call at a time: the connection handles one request at a
	// time, and a run has one connection.
	resp, err := cn.s.o.Model.Complete(ctx, llm.Request{Messages: c.msgs, Tools: agent.TaskTools()})
	if err != nil {
		c.over = true
		if ctx.Err() != nil {
			return internal(context.Cause(ctx))
		}
		// The provider's error may name its address: the worker hears
		// only which kind of failure it was; the host's log has it all.
		cn.s.log.WarnContext(ctx, "model call failed", "owner", cn.owner.String(), "turn", c.turns, "err", err)
		return Response{Code: CodeInternal, Error: modelFailure(err)}
	}
	// The run may have been ended while the model thought: its reply
	// then goes nowhere.
	if r, err := cn.s.o.Board.Run(ctx, cn.run); err != nil {
		return internal(err)
	} else if r.Status != store.TaskRunRunning {
		cn.ended = true
		return ended()
	}
	m := llm.Message{Role: llm.Assistant, Content: resp.Message.Content, ToolCalls: resp.Message.ToolCalls}
	reply := &ModelReply{Message: m, FinishReason: resp.FinishReason}
	if b, err := json.Marshal(Response{ID: req.ID, OK: true, Model: reply}); err != nil || len(b) >= MaxMessage {
		c.over = true
		return internal(errors.New("the model's reply is too large to pass on"))
	}
	c.add(m)
	if len(m.ToolCalls) == 0 {
		c.over = true
	} else {
		c.open = map[string]bool{}
		for _, tc := range m.ToolCalls {
			c.open[tc.ID] = true
		}
	}
	return Response{Model: reply}
}

// modelFailure says what kind of failure a model call had, without the
// provider's details.
func modelFailure(err error) string {
	switch {
	case errors.Is(err, llm.ErrUnavailable):
		return "the model is unavailable (the host's log has the details)"
	case errors.Is(err, llm.ErrRefused):
		return "the model refused the request (the host's log has the details)"
	}
	return "the model call failed (the host's log has the details)"
}
