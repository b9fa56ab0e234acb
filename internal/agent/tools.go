package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/llm"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/tools"
)

// Built-in tool names.
const (
	ToolTerminal       = "terminal"
	ToolExecuteCode    = "execute_code"
	ToolReadFile       = "read_file"
	ToolWriteFile      = "write_file"
	ToolKanbanComment  = "kanban_comment"
	ToolKanbanComplete = "kanban_complete"
	ToolKanbanBlock    = "kanban_block"
)

// MCPSeparator joins an MCP server's name and its tool's: "files__read".
const MCPSeparator = "__"

func obj(required []string, props map[string]any) map[string]any {
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }

var builtins = []llm.ToolSpec{
	{Name: ToolTerminal, Description: "Run a shell command (bash) in the work directory and return its output and exit status. Dangerous commands wait for the user's approval; some are always blocked.",
		Parameters: obj([]string{"command"}, map[string]any{"command": str("the command line")})},
	{Name: ToolExecuteCode, Description: "Run a program in an interpreter (python, node, bash, sh) and return its output and exit status.",
		Parameters: obj([]string{"language", "source"}, map[string]any{
			"language": map[string]any{"type": "string", "enum": []string{"python", "node", "bash", "sh"}},
			"source":   str("the program text")})},
	{Name: ToolReadFile, Description: "Read a text file inside the work directory.",
		Parameters: obj([]string{"path"}, map[string]any{"path": str("path relative to the work directory")})},
	{Name: ToolWriteFile, Description: "Write a file inside the work directory, replacing it.",
		Parameters: obj([]string{"path", "content"}, map[string]any{"path": str("path relative to the work directory"), "content": str("the whole new content")})},
}

var boardTools = []llm.ToolSpec{
	{Name: ToolKanbanComment, Description: "Add a comment to your kanban task.", Parameters: obj([]string{"body"}, map[string]any{"body": str("the comment")})},
	{Name: ToolKanbanComplete, Description: "Mark your kanban task done. Call it once, when the work is finished.", Parameters: obj([]string{"summary"}, map[string]any{"summary": str("what was done")})},
	{Name: ToolKanbanBlock, Description: "Mark your kanban task blocked because it needs a human.", Parameters: obj([]string{"reason"}, map[string]any{"reason": str("what is needed")})},
}

// toolset is what one run offers the model.
type toolset struct {
	specs []llm.ToolSpec
	mcp   map[string]MCPTool // by qualified name
}

func (a *Agent) toolset(ctx context.Context, o owner.Owner, r Run) toolset {
	ts := toolset{specs: append([]llm.ToolSpec(nil), builtins...), mcp: map[string]MCPTool{}}
	if r.Board != nil {
		ts.specs = append(ts.specs, boardTools...)
	}
	if a.o.MCP != nil {
		mts, err := a.o.MCP.Tools(ctx, o)
		if err != nil {
			// The servers that answered still offer their tools.
			a.log.WarnContext(ctx, "mcp tools", "owner", o.String(), "err", err)
			r.Emit(Event{Kind: Notice, Text: "Some MCP servers are unavailable: " + err.Error()})
		}
		for _, t := range mts {
			q := t.Server + MCPSeparator + t.Name
			schema := t.InputSchema
			if schema == nil {
				schema = map[string]any{"type": "object"}
			}
			ts.mcp[q] = t
			ts.specs = append(ts.specs, llm.ToolSpec{Name: q, Description: t.Description, Parameters: schema})
		}
	}
	return ts
}

// call carries out one tool call and returns the result for the model
// and whether the call was refused.
func (a *Agent) call(ctx context.Context, ts toolset, r Run, call llm.ToolCall) (string, bool) {
	r.Emit(Event{Kind: ToolCall, Tool: call.Name, Args: call.Arguments})
	in, err := args(call)
	if err != nil {
		return a.result(r, call, "error: "+err.Error()+"; call the tool again with a JSON object")
	}
	// The run hears of each question its call asks; the MCP call itself
	// (below) keeps the plain owner.
	asking := broker.WithNotify(ctx, func(req store.Request) {
		if req.Notice != "" {
			r.Emit(Event{Kind: Notice, Text: req.Notice})
		}
		r.Emit(Event{Kind: Pending, Tool: call.Name, Request: req.ID, Text: "waiting for approval"})
	})
	text := func(k string) string { s, _ := in[k].(string); return s }
	var (
		out runner.Outcome
		buf bytes.Buffer
	)
	switch name := call.Name; {
	case name == ToolTerminal:
		if strings.TrimSpace(text("command")) == "" {
			return a.result(r, call, "error: command is empty")
		}
		var code int
		out, code, err = a.o.Exec.Shell(asking, text("command"), r.Dir, &buf, &buf)
		if err == nil && out.Allowed {
			return a.result(r, call, ran(buf.String(), code))
		}
	case name == ToolExecuteCode:
		var code int
		out, code, err = a.o.Exec.Code(asking, text("language"), text("source"), r.Dir, &buf, &buf)
		if err == nil && out.Allowed {
			return a.result(r, call, ran(buf.String(), code))
		}
	case name == ToolReadFile:
		// Reading is confined to the work directory by os.Root and is not
		// an action the gate decides (DESIGN has no read kind).
		b, rerr := tools.Files{Root: r.Dir}.ReadFile(text("path"))
		if rerr != nil {
			return a.result(r, call, "error: "+rerr.Error())
		}
		return a.result(r, call, clip(string(b)))
	case name == ToolWriteFile:
		out, err = a.o.Exec.WriteFile(asking, tools.Files{Root: r.Dir}, text("path"), []byte(text("content")))
		if err == nil && out.Allowed {
			return a.result(r, call, fmt.Sprintf("wrote %d bytes to %s", len(text("content")), filepath.Clean(text("path"))))
		}
	case r.Board != nil && (name == ToolKanbanComment || name == ToolKanbanComplete || name == ToolKanbanBlock):
		return a.result(r, call, a.board(ctx, r.Board, name, in))
	default:
		t, ok := ts.mcp[name]
		if !ok {
			return a.result(r, call, "error: there is no tool named "+name)
		}
		raw, _ := json.Marshal(in)
		out, err = a.o.Exec.Authorize(asking, action.NewMCP(t.Server, t.Name, raw, false).In(r.Dir))
		if err == nil && out.Allowed {
			o, _ := owner.From(ctx)
			res, cerr := a.o.MCP.Call(ctx, o, t.Server, t.Name, in)
			if cerr != nil {
				return a.result(r, call, "error: "+cerr.Error())
			}
			if res.IsError {
				return a.result(r, call, "tool error: "+clip(res.Text))
			}
			return a.result(r, call, clip(res.Text))
		}
	}
	// Not allowed, or authorisation failed (which fails closed).
	msg := out.Message
	if msg == "" && err != nil {
		msg = "warden blocked this action: it could not be authorised (" + err.Error() + "). Do not retry it or variations of it; tell the user."
	}
	if msg == "" {
		msg = "warden blocked this action. Do not retry it or variations of it."
	}
	if n := out.Decision.Notice; n != "" {
		r.Emit(Event{Kind: Notice, Text: n})
	}
	r.Emit(Event{Kind: Blocked, Tool: call.Name, Text: msg})
	return "BLOCKED: " + msg, true
}

// ran is a command's result for the model: its output, then its exit
// status on a line of its own.
func ran(output string, code int) string {
	output = strings.TrimRight(clip(output), "\n")
	if output == "" {
		return fmt.Sprintf("[exit status %d]", code)
	}
	return fmt.Sprintf("%s\n[exit status %d]", output, code)
}

// result reports a finished call to the surface and returns it.
func (a *Agent) result(r Run, call llm.ToolCall, text string) (string, bool) {
	r.Emit(Event{Kind: ToolResult, Tool: call.Name, Text: text})
	return text, false
}

// board carries out a kanban tool on the worker's own task.
func (a *Agent) board(ctx context.Context, b Board, name string, in map[string]any) string {
	s := func(k string) string { v, _ := in[k].(string); return v }
	var err error
	switch name {
	case ToolKanbanComment:
		err = b.Comment(ctx, s("body"))
	case ToolKanbanComplete:
		err = b.Complete(ctx, s("summary"))
	case ToolKanbanBlock:
		err = b.Block(ctx, s("reason"))
	}
	if err != nil {
		return "error: " + err.Error()
	}
	return "ok"
}

// TaskTools are the tools a kanban task's agent is offered: the
// built-ins and the kanban tools of its own task. MCP servers' tools are
// not among them: the servers and their credentials live on the host,
// and a task's agent runs in its worker (docs/workers.md).
func TaskTools() []llm.ToolSpec {
	return append(append([]llm.ToolSpec(nil), builtins...), boardTools...)
}

// TaskInput is the message a kanban task's agent starts from: the
// task's prompt, its title and its body.
func TaskInput(prompt, title, body string) string {
	msg := prompt + "\n\nYour kanban task: " + title
	if body != "" {
		msg += "\n\n" + body
	}
	return msg
}
