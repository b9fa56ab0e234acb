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
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/tools"
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
	// ProgressInterval is how often a call whose client sent a progress
	// token gets notifications/progress (while it waits for a human, with
	// the time left, and while it runs), so a client's request timeout
	// does not end it; zero means DefaultProgressInterval, negative none.
	ProgressInterval time.Duration
}

// DefaultProgressInterval is how often a waiting or running call
// reports progress: well under the 60 s request timeout clients use by
// default.
const DefaultProgressInterval = 5 * time.Second

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
	if o.ProgressInterval == 0 {
		o.ProgressInterval = DefaultProgressInterval
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
	codeSchema, err := codeInputSchema()
	if err != nil {
		return nil, nil, fmt.Errorf("mcp server: %w", err)
	}
	yes, no := true, false
	mcp.AddTool(s, &mcp.Tool{
		Name:        "shell",
		Title:       "Run a shell command (through warden's gate)",
		Description: "Run one shell command line on the user's machine, through warden's gate. Returns its output (stdout and stderr) and exit status, or why it was not run.",
		Annotations: &mcp.ToolAnnotations{Title: "Run a shell command", ReadOnlyHint: false, DestructiveHint: &yes, OpenWorldHint: &yes},
	}, answers(h, h.shell))
	mcp.AddTool(s, &mcp.Tool{
		Name:        "execute_code",
		Title:       "Run a program (through warden's gate)",
		Description: "Run a program in an interpreter (" + strings.Join(tools.Languages(), ", ") + ") on the user's machine, through warden's gate. Returns its output and exit status, or why it was not run.",
		InputSchema: codeSchema,
		Annotations: &mcp.ToolAnnotations{Title: "Run a program", ReadOnlyHint: false, DestructiveHint: &yes, OpenWorldHint: &yes},
	}, answers(h, h.code))
	mcp.AddTool(s, &mcp.Tool{
		Name:        "write_file",
		Title:       "Write a file (through warden's gate)",
		Description: "Write a file (created or replaced whole) inside the working directory warden mcp was started in, through warden's gate.",
		// Replacing a file whole destroys what it held; writing the same
		// content again changes nothing more.
		Annotations: &mcp.ToolAnnotations{Title: "Write a file", ReadOnlyHint: false, DestructiveHint: &yes, IdempotentHint: true, OpenWorldHint: &no},
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
	Language string `json:"language" jsonschema:"the interpreter"`
	Source   string `json:"source" jsonschema:"the program text"`
}

// codeInputSchema is CodeInput's schema with language an enum of the
// languages the host's code tool runs, so a client offers only those
// and a call with another is refused before anyone is asked.
func codeInputSchema() (*jsonschema.Schema, error) {
	sc, err := jsonschema.For[CodeInput](nil)
	if err != nil {
		return nil, err
	}
	lang := sc.Properties["language"]
	if lang == nil {
		return nil, errors.New("execute_code schema has no language")
	}
	for _, l := range tools.Languages() {
		lang.Enum = append(lang.Enum, l)
	}
	return sc, nil
}

// WriteInput is the write_file tool's input.
type WriteInput struct {
	Path    string `json:"path" jsonschema:"the file, relative to the working directory or absolute inside it"`
	Content string `json:"content" jsonschema:"the whole new content"`
}

// Statuses of a Result: what became of the call.
const (
	// StatusRan: the action ran; ExitCode is its exit status.
	StatusRan = "ran"
	// StatusDenied: the gate or a human refused it; it did not run.
	StatusDenied = "denied"
	// StatusInvalid: its arguments were refused before anyone was
	// asked; it did not run.
	StatusInvalid = "invalid"
	// StatusError: warden failed (the host went away, a broken
	// outcome); whether it ran is not known.
	StatusError = "error"
)

// Result is every tool's structured output.
type Result struct {
	// Status says what became of the call: ran, denied, invalid or error.
	Status string `json:"status" jsonschema:"ran, denied (not run), invalid (arguments refused, not run) or error (unknown whether it ran)"`
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
	// The host would ask first and fail after: refuse now.
	if !tools.KnownLanguage(in.Language) {
		return toolError(fmt.Sprintf("language %q is not one warden runs (%s)", in.Language, strings.Join(tools.Languages(), ", ")))
	}
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
	p := h.startProgress(ctx, req)
	defer p.close()
	if h.asks != nil && canElicit(req.ClientCapabilities()) {
		return h.ask(ctx, req, r, p)
	}
	return h.result(h.collect(ctx, r, p, func(e localapi.Event) {
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
// hears the host's question when it asks one, and p reports the wait
// and the run to the client.
func (h *handler) collect(ctx context.Context, r localapi.ExternalRequest, p *progress, pending func(localapi.Event)) outcome {
	var (
		o   outcome
		out capped
	)
	o.err = h.o.Runner.Run(ctx, r, func(e localapi.Event) error {
		switch e.Event {
		case localapi.EventPending:
			o.res.Request = e.ID
			p.waiting(e)
			pending(e)
		case localapi.EventStdout, localapi.EventStderr:
			p.running()
			b, err := e.Bytes()
			if err != nil {
				return fmt.Errorf("bad output event: %w", err)
			}
			out.write(b)
		default:
			p.running()
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
	res.Status = StatusError
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
		res.Status, res.Ran, res.ExitCode = StatusRan, true, &code
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
		res.Status, res.Message, res.Rule = StatusDenied, end.Message, end.Rule
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
	return errorResult(Result{Status: StatusInvalid, Message: "warden did not run this action: " + msg + "."})
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
