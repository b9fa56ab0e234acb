// Package agent is the model loop: a turn sends the conversation and the
// tool schemas to the model; each tool call the model makes becomes an
// action that the gate decides as the owner bound to the context (the
// runner does that); what happened goes back to the model as the tool
// result, a denial included, and the loop goes on until the model
// answers in words or the turn cap is reached.
//
// The agent holds no identity of its own. Who it acts for is the owner
// in ctx, set by whoever started the run (the console for a web
// session, the scheduler for a cron job, the dispatcher for a kanban
// task): the same Agent value serves every owner at once.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/llm"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/tools"
)

// Defaults.
const (
	// DefaultMaxTurns caps the model calls of one run.
	DefaultMaxTurns = 20
	// DefaultHistory is how many stored messages a run sends back.
	DefaultHistory = 200
	// maxResult bounds a tool result sent to the model, in bytes; the
	// tail is kept, where errors and summaries usually are.
	maxResult = 16 << 10
)

// ErrNoOwner: Run was called without an owner in the context.
var ErrNoOwner = errors.New("agent: no owner in context")

// Executor authorises and runs actions as the owner in ctx; the host's
// *runner.Runner is one.
type Executor interface {
	Authorize(ctx context.Context, act action.Action) (runner.Outcome, error)
	Shell(ctx context.Context, command, dir string, stdout, stderr io.Writer) (runner.Outcome, int, error)
	Code(ctx context.Context, language, source, dir string, stdout, stderr io.Writer) (runner.Outcome, int, error)
	WriteFile(ctx context.Context, files tools.Files, path string, data []byte) (runner.Outcome, error)
}

// MCPTool is a tool of an MCP server.
type MCPTool struct {
	Server, Name, Description string
	InputSchema               map[string]any
}

// MCPResult is what an MCP tool call returned.
type MCPResult struct {
	Text    string
	IsError bool
}

// MCP reaches the configured MCP servers for an owner. Gating is the
// agent's job; MCP only carries calls.
type MCP interface {
	Tools(ctx context.Context, o owner.Owner) ([]MCPTool, error)
	Call(ctx context.Context, o owner.Owner, server, tool string, args map[string]any) (MCPResult, error)
	// Release ends o's sessions with the servers (a one-shot run is over).
	Release(ctx context.Context, o owner.Owner)
}

// Board is a kanban worker's own task: the kanban_* tools.
type Board interface {
	Comment(ctx context.Context, body string) error
	Complete(ctx context.Context, summary string) error
	Block(ctx context.Context, reason string) error
}

// Options configure an Agent.
type Options struct {
	// Model is the chat model; nil means none is configured and Run
	// returns llm.ErrNotConfigured.
	Model llm.Client
	// Exec decides and runs every action.
	Exec Executor
	// MCP, if set, offers the MCP servers' tools.
	MCP MCP
	// Conversations, if set, keeps conversations across runs.
	Conversations store.Conversations
	// MaxTurns caps model calls per run (DefaultMaxTurns if 0).
	MaxTurns int
	// System is the system prompt; a default explains the gate.
	System string
	Logger *slog.Logger
}

// Agent runs model loops. It is safe for concurrent use by many owners.
type Agent struct {
	o   Options
	log *slog.Logger
}

// New returns an Agent.
func New(o Options) *Agent {
	if o.MaxTurns <= 0 {
		o.MaxTurns = DefaultMaxTurns
	}
	if o.System == "" {
		o.System = DefaultSystem
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Agent{o: o, log: o.Logger.With("component", "agent")}
}

// Configured reports whether a model is configured.
func (a *Agent) Configured() bool { return a != nil && a.o.Model != nil }

// DefaultSystem tells the model how warden treats its tool calls.
const DefaultSystem = `You are an agent running inside warden. Every tool call you make is checked by warden's gate before it runs: safe actions run at once, dangerous ones wait for the user's approval, and some are always blocked. When a tool result says an action was blocked or denied, do not retry it or variations of it; explain to the user what you needed and why. Prefer the smallest action that does the job.`

// EventKind names what an Event reports.
type EventKind string

// Event kinds.
const (
	// Text is assistant text (Delta is true for a streamed piece).
	Text EventKind = "text"
	// ToolCall: the model asked for Tool with Args.
	ToolCall EventKind = "tool_call"
	// Pending: the call waits for a human on request Request.
	Pending EventKind = "pending"
	// Blocked: the gate or a human refused the call; Text says why.
	Blocked EventKind = "blocked"
	// ToolResult: the call ran; Text is its result as the model sees it.
	ToolResult EventKind = "tool_result"
	// Notice is something the user must know (the reviewer fell back to
	// manual, the turn cap was reached).
	Notice EventKind = "notice"
)

// Event is one step of a run, for the surface that shows it.
type Event struct {
	Kind    EventKind `json:"kind"`
	Text    string    `json:"text,omitempty"`
	Delta   bool      `json:"delta,omitempty"`
	Tool    string    `json:"tool,omitempty"`
	Args    string    `json:"args,omitempty"`
	Request string    `json:"request,omitempty"`
}

// Run is one agent run: the owner in ctx, the conversation it continues
// ("" keeps nothing), the work directory, and the kanban task if it is
// a worker's.
type Run struct {
	Conversation string
	Dir          string
	Board        Board
	// Emit, if set, hears every event. It must not block for long.
	Emit func(Event)
	// Stream asks for streamed text (Text events with Delta).
	Stream bool
}

// Result is how a run ended.
type Result struct {
	// Reply is the model's last words.
	Reply string
	// Turns is how many model calls were made; Calls how many tool calls
	// the model asked for, Blocked how many of those were refused.
	Turns, Calls, Blocked int
	// Capped is true when the run stopped at the turn cap.
	Capped bool
}

// Run sends input to the model as the owner in ctx and loops until the
// model answers without tool calls or MaxTurns is reached.
func (a *Agent) Run(ctx context.Context, r Run, input string) (Result, error) {
	var res Result
	o, ok := owner.From(ctx)
	if !ok {
		return res, ErrNoOwner
	}
	if a.o.Model == nil {
		return res, llm.ErrNotConfigured
	}
	if r.Emit == nil {
		r.Emit = func(Event) {}
	}
	msgs := []llm.Message{{Role: llm.System, Content: a.o.System}}
	if r.Conversation != "" && a.o.Conversations != nil {
		past, err := a.load(ctx, r.Conversation)
		if err != nil {
			return res, fmt.Errorf("agent: load conversation: %w", err)
		}
		msgs = append(msgs, trimHistory(past)...)
	}
	user := llm.Message{Role: llm.User, Content: input}
	msgs = append(msgs, user)
	if err := a.save(ctx, r, user); err != nil {
		return res, err
	}
	ts := a.toolset(ctx, o, r)
	for res.Turns < a.o.MaxTurns {
		res.Turns++
		req := llm.Request{Messages: msgs, Tools: ts.specs}
		if r.Stream {
			req.OnDelta = func(s string) { r.Emit(Event{Kind: Text, Text: s, Delta: true}) }
		}
		resp, err := a.o.Model.Complete(ctx, req)
		if err != nil {
			return res, fmt.Errorf("agent: model call %d: %w", res.Turns, err)
		}
		reply := resp.Message
		reply.Role = llm.Assistant
		msgs = append(msgs, reply)
		if err := a.save(ctx, r, reply); err != nil {
			return res, err
		}
		if len(reply.ToolCalls) == 0 {
			res.Reply = reply.Content
			if !r.Stream && reply.Content != "" {
				r.Emit(Event{Kind: Text, Text: reply.Content})
			}
			return res, nil
		}
		if reply.Content != "" && !r.Stream {
			r.Emit(Event{Kind: Text, Text: reply.Content})
		}
		for _, call := range reply.ToolCalls {
			res.Calls++
			out, blocked := a.call(ctx, ts, r, call)
			if blocked {
				res.Blocked++
			}
			m := llm.Message{Role: llm.Tool, ToolCallID: call.ID, Content: out}
			msgs = append(msgs, m)
			if err := a.save(ctx, r, m); err != nil {
				return res, err
			}
		}
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("agent: %w", context.Cause(ctx))
		}
	}
	res.Capped = true
	note := fmt.Sprintf("Stopped after %d model calls (llm.max_turns) without a final answer.", a.o.MaxTurns)
	r.Emit(Event{Kind: Notice, Text: note})
	res.Reply = note
	return res, nil
}

// save appends m to the run's conversation.
func (a *Agent) save(ctx context.Context, r Run, m llm.Message) error {
	if r.Conversation == "" || a.o.Conversations == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("agent: save conversation: %w", err)
	}
	if err := a.o.Conversations.AppendMessages(context.WithoutCancel(ctx), r.Conversation, b); err != nil {
		return fmt.Errorf("agent: save conversation: %w", err)
	}
	return nil
}

// load reads the last DefaultHistory messages of conversation.
func (a *Agent) load(ctx context.Context, conversation string) ([]llm.Message, error) {
	rows, err := a.o.Conversations.Messages(ctx, conversation, DefaultHistory)
	if err != nil {
		return nil, err
	}
	out := make([]llm.Message, len(rows))
	for i, row := range rows {
		if err := json.Unmarshal(row, &out[i]); err != nil {
			return nil, fmt.Errorf("message %d: %w", i+1, err)
		}
	}
	return out, nil
}

// trimHistory drops leading messages until a user message, so a window
// cut never starts with tool results whose calls it lost (providers
// reject that), and drops stored system messages.
func trimHistory(past []llm.Message) []llm.Message {
	for i, m := range past {
		if m.Role == llm.User {
			past = past[i:]
			break
		}
		if i == len(past)-1 {
			return nil
		}
	}
	out := past[:0:0]
	for _, m := range past {
		if m.Role != llm.System {
			out = append(out, m)
		}
	}
	return out
}

// clip keeps the tail of s within maxResult bytes.
func clip(s string) string {
	if len(s) <= maxResult {
		return s
	}
	cut := len(s) - maxResult
	for cut < len(s) && !isRuneStart(s[cut]) {
		cut++
	}
	return fmt.Sprintf("[%d bytes of output cut; the last %d follow]\n", cut, len(s)-cut) + s[cut:]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// args decodes a tool call's arguments object.
func args(call llm.ToolCall) (map[string]any, error) {
	s := strings.TrimSpace(call.Arguments)
	if s == "" {
		return map[string]any{}, nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
		return nil, fmt.Errorf("the arguments of %s are not a JSON object", call.Name)
	}
	return m, nil
}
