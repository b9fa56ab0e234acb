// Package mcpserve is warden as an MCP server (warden mcp): another agent
// connects over stdio and gets three tools — shell, execute_code and
// write_file — whose calls run in the warden host only after its gate
// allowed them. Each call is decided as the attended owner
// external:CLIENT/SESSION (CLIENT the MCP client's name, SESSION one id
// per connection) through the host's admin API; a question goes to the
// host's console, where a human answers (from a phone, too), and no
// answer by approvals.timeout is a deny. The tool result carries the
// output and exit status, or the denial message, which tells the agent
// not to retry variations.
//
// The package holds no policy: the host decides, audits and runs. It
// only maps MCP tool calls to the host's /v1/external/run endpoint and
// its event stream back to tool results.
package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/localapi"
)

// MaxOutput caps the output a tool result carries; the rest is dropped
// with a marker, so one chatty command cannot flood the agent's context.
const MaxOutput = 256 << 10

// DefaultAgent names a client that sent no name.
const DefaultAgent = "mcp-client"

// Runner decides and runs an external agent's action in the host
// (*localapi.Client).
type Runner interface {
	Run(ctx context.Context, req localapi.ExternalRequest, on func(localapi.Event) error) error
}

var _ Runner = (*localapi.Client)(nil)

// Options configure a server.
type Options struct {
	// Runner reaches the host.
	Runner Runner
	// Session is this connection's session id: the owner's SESSION,
	// fresh for every warden mcp process, so two connections never share
	// session grants or a queue. It is used when the transport has no
	// session id of its own.
	Session string
	// Dir is the absolute working directory of shell and code calls
	// without a cwd, and the root write_file paths must stay inside.
	Dir string
	// Version is reported to clients.
	Version string
	Logger  *slog.Logger
}

// New returns the MCP server with warden's tools.
func New(o Options) (*mcp.Server, error) {
	switch {
	case o.Runner == nil:
		return nil, errors.New("mcp server: no runner")
	case o.Session == "":
		return nil, errors.New("mcp server: no session id")
	case !filepath.IsAbs(o.Dir):
		return nil, fmt.Errorf("mcp server: dir %q is not absolute", o.Dir)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Version == "" {
		o.Version = "(devel)"
	}
	h := &handler{o: o, log: o.Logger.With("component", "mcpserve")}
	s := mcp.NewServer(&mcp.Implementation{Name: "warden", Title: "warden execution host", Version: o.Version}, &mcp.ServerOptions{
		Instructions: "Every call runs on the user's machine only after warden's gate allows it; a dangerous call waits for the user's approval on the warden console. A denied call was not run: do not retry it or variations of it.",
		Logger:       o.Logger,
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "shell",
		Description: "Run one shell command line on the user's machine, through warden's gate. Returns its output (stdout and stderr) and exit status, or why it was not run.",
	}, h.shell)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "execute_code",
		Description: "Run a program in an interpreter (python, node, bash, sh, …) on the user's machine, through warden's gate. Returns its output and exit status, or why it was not run.",
	}, h.code)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "write_file",
		Description: "Write a file (created or replaced whole) inside the working directory warden mcp was started in, through warden's gate.",
	}, h.write)
	return s, nil
}

// ShellInput is the shell tool's input.
type ShellInput struct {
	Command string `json:"command" jsonschema:"the shell command line"`
	Cwd     string `json:"cwd,omitempty" jsonschema:"absolute working directory; default: where warden mcp runs"`
}

// CodeInput is the execute_code tool's input.
type CodeInput struct {
	Language string `json:"language" jsonschema:"the interpreter: python, node, bash, sh, …"`
	Source   string `json:"source" jsonschema:"the program text"`
}

// WriteInput is the write_file tool's input.
type WriteInput struct {
	Path    string `json:"path" jsonschema:"the file, relative to the working directory or absolute inside it"`
	Content string `json:"content" jsonschema:"the whole new content"`
}

// Result is every tool's structured output.
type Result struct {
	// Ran is true when the action ran (whatever its exit status).
	Ran bool `json:"ran"`
	// ExitCode is the exit status when it ran (0 for a write).
	ExitCode int `json:"exit_code"`
	// Output is stdout and stderr as they came, capped at MaxOutput.
	Output string `json:"output,omitempty"`
	// Message says why it did not run (denied, expired, an error).
	Message string `json:"message,omitempty"`
	// Rule is the gate's deciding rule when it was denied.
	Rule string `json:"rule,omitempty"`
	// Request is the console request a human answered, if one was asked.
	Request string `json:"request,omitempty"`
}

// handler serves the tool calls of one server.
type handler struct {
	o   Options
	log *slog.Logger

	mu    sync.Mutex
	agent string // the client's name, pinned at its first call
}

func (h *handler) shell(ctx context.Context, req *mcp.CallToolRequest, in ShellInput) (*mcp.CallToolResult, Result, error) {
	dir := in.Cwd
	if dir == "" {
		dir = h.o.Dir
	}
	if !filepath.IsAbs(dir) {
		return toolError(fmt.Sprintf("cwd %q is not absolute", in.Cwd))
	}
	return h.run(ctx, req, localapi.ExternalRequest{Action: action.NewShell(in.Command).In(dir)})
}

func (h *handler) code(ctx context.Context, req *mcp.CallToolRequest, in CodeInput) (*mcp.CallToolResult, Result, error) {
	return h.run(ctx, req, localapi.ExternalRequest{Action: action.NewCode(in.Language, in.Source).In(h.o.Dir)})
}

func (h *handler) write(ctx context.Context, req *mcp.CallToolRequest, in WriteInput) (*mcp.CallToolResult, Result, error) {
	path := in.Path
	if path != "" && !filepath.IsAbs(path) {
		path = filepath.Join(h.o.Dir, path)
	}
	// The host writes inside the root only; refuse now rather than ask a
	// human about a write that cannot happen.
	if rel, err := filepath.Rel(h.o.Dir, filepath.Clean(path)); path != "" && (err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../")) {
		return toolError(fmt.Sprintf("path %q is not inside %s, where warden mcp writes", in.Path, h.o.Dir))
	}
	return h.run(ctx, req, localapi.ExternalRequest{Action: action.NewWrite(path, int64(len(in.Content))).In(h.o.Dir), Content: in.Content})
}

// agentOf is the owner's AGENT: the client's name from its first call,
// kept for the connection, so a client cannot step into a fresh session
// (and out of its denials' history) by renaming itself mid-way.
func (h *handler) agentOf(req *mcp.CallToolRequest) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.agent == "" {
		h.agent = DefaultAgent
		if ci := req.ClientInfo(); ci != nil && strings.TrimSpace(ci.Name) != "" {
			h.agent = strings.TrimSpace(ci.Name)
		}
	}
	return h.agent
}

// sessionOf is the owner's SESSION: the transport's session id when it
// has one, else this connection's.
func (h *handler) sessionOf(req *mcp.CallToolRequest) string {
	if req.Session != nil {
		if id := req.Session.ID(); id != "" {
			return id
		}
	}
	return h.o.Session
}

// run sends the action to the host and turns its events into a result.
// A denial is a tool error the agent reads, not a protocol error.
func (h *handler) run(ctx context.Context, req *mcp.CallToolRequest, r localapi.ExternalRequest) (*mcp.CallToolResult, Result, error) {
	r.Agent, r.Session = h.agentOf(req), h.sessionOf(req)
	if err := r.Action.Validate(); err != nil {
		return toolError(err.Error())
	}
	var (
		res  Result
		out  capped
		end  localapi.Event
		seen bool
	)
	err := h.o.Runner.Run(ctx, r, func(e localapi.Event) error {
		switch e.Event {
		case localapi.EventPending:
			res.Request = e.ID
			h.log.InfoContext(ctx, "waiting for approval", "request", e.ID, "console", e.Console)
		case localapi.EventStdout, localapi.EventStderr:
			b, err := e.Bytes()
			if err != nil {
				return fmt.Errorf("bad output event: %w", err)
			}
			out.write(b)
		default:
			end, seen = e, true
		}
		return nil
	})
	res.Output = out.String()
	switch {
	case err != nil:
		h.log.WarnContext(ctx, "run failed", "err", err)
		res.Message = "warden could not run this action (" + err.Error() + "). It may not have run; do not retry it blindly; tell the user."
		return errorResult(res)
	case !seen:
		res.Message = "warden could not run this action: the host sent no outcome."
		return errorResult(res)
	}
	switch end.Event {
	case localapi.EventExit:
		if end.Code == nil {
			res.Message = "warden could not run this action: the host sent an exit without a status."
			return errorResult(res)
		}
		res.Ran, res.ExitCode = true, *end.Code
		text := res.Output
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += fmt.Sprintf("[exit status %d]", res.ExitCode)
		if res.Request != "" {
			text += fmt.Sprintf(" (approved on the warden console, request %s)", res.Request)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: res.ExitCode != 0}, res, nil
	case localapi.EventDenied:
		res.Message, res.Rule = end.Message, end.Rule
	default:
		res.Message = "warden could not run this action: " + end.Message
	}
	return errorResult(res)
}

// errorResult is a result for an action that did not run (or whose fate
// is unknown): IsError, with the message first.
func errorResult(res Result) (*mcp.CallToolResult, Result, error) {
	text := res.Message
	if res.Output != "" {
		text += "\n" + res.Output
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: true}, res, nil
}

// toolError is a result for input warden refused before asking anyone.
func toolError(msg string) (*mcp.CallToolResult, Result, error) {
	return errorResult(Result{Message: "warden did not run this action: " + msg + "."})
}

// capped collects output up to MaxOutput bytes.
type capped struct {
	b       strings.Builder
	dropped int
}

func (c *capped) write(p []byte) {
	if room := MaxOutput - c.b.Len(); room < len(p) {
		c.dropped += len(p) - max(room, 0)
		p = p[:max(room, 0)]
	}
	c.b.Write(p)
}

func (c *capped) String() string {
	if c.dropped > 0 {
		return c.b.String() + fmt.Sprintf("\n[warden: %d more bytes of output dropped]\n", c.dropped)
	}
	return c.b.String()
}
