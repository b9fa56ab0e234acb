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
// With Options.AskClient (mcp.ask_client in the config) and a client
// that can elicit (form mode), the question also goes to the client, so
// its own UI shows it to its human: the first call returns the question
// as an MCP input request (InputRequests, which the SDK turns into an
// elicitation/create for clients on protocols before 2026-07-28), and
// the call the client retries with the answer approves or denies the
// host's request, then returns the run's outcome. The console keeps the
// question; the first answer wins. See ask.go.
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

// Answerer answers a pending host request as a human would on the
// console (*localapi.Client). A request that had already ended gives an
// error matching store.ErrNotPending.
type Answerer interface {
	Approve(ctx context.Context, id string, a localapi.ApproveRequest) (localapi.Result, error)
	Deny(ctx context.Context, id string, d localapi.DenyRequest) (localapi.Result, error)
}

var _ Answerer = (*localapi.Client)(nil)

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
	// AskClient puts a call's question to the MCP client too, when the
	// client advertised form elicitation; Answerer then carries its
	// answer to the host. The console keeps the question either way.
	AskClient bool
	// Answerer answers host requests for the client; required with
	// AskClient.
	Answerer Answerer
}

// New returns the MCP server with warden's tools.
func New(o Options) (*mcp.Server, error) {
	s, _, err := newServer(o)
	return s, err
}

// newServer is New, also returning the handler (for tests).
func newServer(o Options) (*mcp.Server, *handler, error) {
	switch {
	case o.Runner == nil:
		return nil, nil, errors.New("mcp server: no runner")
	case o.Session == "":
		return nil, nil, errors.New("mcp server: no session id")
	case !filepath.IsAbs(o.Dir):
		return nil, nil, fmt.Errorf("mcp server: dir %q is not absolute", o.Dir)
	case o.AskClient && o.Answerer == nil:
		return nil, nil, errors.New("mcp server: ask_client without an answerer")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Version == "" {
		o.Version = "(devel)"
	}
	h := &handler{o: o, log: o.Logger.With("component", "mcpserve")}
	if o.AskClient {
		a, err := newAsks()
		if err != nil {
			return nil, nil, fmt.Errorf("mcp server: %w", err)
		}
		h.asks = a
	}
	where := "on the warden console"
	if h.asks != nil {
		where += " (and in your own UI, when you support elicitation)"
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "warden", Title: "warden execution host", Version: o.Version}, &mcp.ServerOptions{
		Instructions: "Every call runs on the user's machine only after warden's gate allows it; a dangerous call waits for the user's approval " + where + ". A denied call was not run: do not retry it or variations of it.",
		Logger:       o.Logger,
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "shell",
		Description: "Run one shell command line on the user's machine, through warden's gate. Returns its output (stdout and stderr) and exit status, or why it was not run.",
	}, answers(h, h.shell))
	mcp.AddTool(s, &mcp.Tool{
		Name:        "execute_code",
		Description: "Run a program in an interpreter (python, node, bash, sh, …) on the user's machine, through warden's gate. Returns its output and exit status, or why it was not run.",
	}, answers(h, h.code))
	mcp.AddTool(s, &mcp.Tool{
		Name:        "write_file",
		Description: "Write a file (created or replaced whole) inside the working directory warden mcp was started in, through warden's gate.",
	}, answers(h, h.write))
	if h.asks != nil {
		// Outermost, around the SDK's own multi-round-trip shim, so it
		// sees a call whose client-side question failed (see
		// denyUnanswered).
		s.AddReceivingMiddleware(h.denyUnanswered)
	}
	return s, h, nil
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
	// ExitCode is the exit status when it ran (0 for a write); absent
	// when it did not run, so a client never reads a denied call as a
	// success.
	ExitCode *int `json:"exit_code,omitempty"`
	// Output is stdout and stderr as they came, capped at MaxOutput.
	Output string `json:"output,omitempty"`
	// Message says why it did not run (denied, expired, an error).
	Message string `json:"message,omitempty"`
	// Rule is the gate's deciding rule when it was denied.
	Rule string `json:"rule,omitempty"`
	// Request is the console request a human answered, if one was asked.
	Request string `json:"request,omitempty"`
	// AnsweredIn is "client" when the MCP client's user answered the
	// request (mcp.ask_client), "" when the console did or nobody was
	// asked.
	AnsweredIn string `json:"answered_in,omitempty"`
}

// handler serves the tool calls of one server.
type handler struct {
	o   Options
	log *slog.Logger

	mu    sync.Mutex
	agent string // the client's name, pinned at its first call

	asks *asks // the questions put to the client; nil without AskClient
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
// A denial is a tool error the agent reads, not a protocol error. With
// AskClient and a client that can elicit, the question goes to the
// client as well (ask).
func (h *handler) run(ctx context.Context, req *mcp.CallToolRequest, r localapi.ExternalRequest) (*mcp.CallToolResult, Result, error) {
	r.Agent, r.Session = h.agentOf(req), h.sessionOf(req)
	if err := r.Action.Validate(); err != nil {
		return toolError(err.Error())
	}
	if h.asks != nil && canElicit(req.ClientCapabilities()) {
		return h.ask(ctx, req, r)
	}
	return h.result(h.collect(ctx, r, func(e localapi.Event) {
		h.log.InfoContext(ctx, "waiting for approval", "request", e.ID, "console", e.Console)
	}))
}

// outcome is what a host run sent: the result so far, its final event,
// and the error that cut it short, if any.
type outcome struct {
	res  Result
	end  localapi.Event
	seen bool // end was received
	err  error
}

// collect runs the action on the host and gathers its events; pending
// hears the host's question when it asks one.
func (h *handler) collect(ctx context.Context, r localapi.ExternalRequest, pending func(localapi.Event)) outcome {
	var (
		o   outcome
		out capped
	)
	o.err = h.o.Runner.Run(ctx, r, func(e localapi.Event) error {
		switch e.Event {
		case localapi.EventPending:
			o.res.Request = e.ID
			pending(e)
		case localapi.EventStdout, localapi.EventStderr:
			b, err := e.Bytes()
			if err != nil {
				return fmt.Errorf("bad output event: %w", err)
			}
			out.write(b)
		default:
			o.end, o.seen = e, true
		}
		return nil
	})
	if o.err != nil {
		h.log.WarnContext(ctx, "run failed", "err", o.err)
	}
	o.res.Output = out.String()
	return o
}

// result turns a run's outcome into the tool result.
func (h *handler) result(o outcome) (*mcp.CallToolResult, Result, error) {
	res, end := o.res, o.end
	switch {
	case o.err != nil:
		res.Message = "warden could not run this action (" + o.err.Error() + "). It may not have run; do not retry it blindly; tell the user."
		return errorResult(res)
	case !o.seen:
		res.Message = "warden could not run this action: the host sent no outcome."
		return errorResult(res)
	}
	switch end.Event {
	case localapi.EventExit:
		if end.Code == nil {
			res.Message = "warden could not run this action: the host sent an exit without a status."
			return errorResult(res)
		}
		code := *end.Code
		res.Ran, res.ExitCode = true, &code
		text := res.Output
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += fmt.Sprintf("[exit status %d]", code)
		switch {
		case res.Request != "" && res.AnsweredIn == answeredInClient:
			text += fmt.Sprintf(" (approved in the MCP client, request %s)", res.Request)
		case res.Request != "":
			text += fmt.Sprintf(" (approved on the warden console, request %s)", res.Request)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: code != 0}, res, nil
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
	res.Ran, res.ExitCode = false, nil
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
