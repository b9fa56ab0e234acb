package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/internal/owner"
)

// Separator joins a server's name and its tool's name in the name offered
// to the model. Server names cannot contain it (config refuses "__").
const Separator = "__"

// Tool is one tool of a configured server.
type Tool struct {
	// Server is the configured server name; Name the server's tool name.
	Server, Name string
	// Qualified is Server + "__" + Name, the name the model sees.
	Qualified string
	// Description is the server's description of the tool.
	Description string
	// InputSchema is the tool's JSON schema for its arguments.
	InputSchema map[string]any
}

// Result is the outcome of a tool call.
type Result struct {
	// Text is the text content, parts joined by newlines; other content
	// is noted in brackets so the model knows it was there.
	Text string
	// IsError reports that the tool itself failed (the model should see
	// that and may correct itself); protocol failures are errors instead.
	IsError bool
	// Structured is the tool's structured result, if any.
	Structured any
}

// ServerError is one server's failure in Tools.
type ServerError struct {
	Server string
	Err    error
}

func (e *ServerError) Error() string { return "mcp server " + e.Server + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *ServerError) Unwrap() error { return e.Err }

// ToolsError is returned by Tools when some servers could not be listed;
// the tools of the others are returned beside it, so the agent can carry
// on and say which servers are missing.
type ToolsError struct {
	// Failed has one entry per failed server, in configuration order.
	Failed []*ServerError
}

func (e *ToolsError) Error() string {
	parts := make([]string, len(e.Failed))
	for i, f := range e.Failed {
		parts[i] = f.Error()
	}
	return "list mcp tools: " + strings.Join(parts, "; ")
}

// Unwrap returns the servers' errors.
func (e *ToolsError) Unwrap() []error {
	out := make([]error, len(e.Failed))
	for i, f := range e.Failed {
		out[i] = f
	}
	return out
}

// Split splits a qualified tool name "server__tool" at the first "__".
// ok is false unless both parts are non-empty. A server name ending in
// "_" (which config accepts) does not survive this ("a_" + "__" + "t"
// splits as "a", "_t"); Manager.Resolve knows the configured names and
// gets it right.
func Split(qualified string) (server, tool string, ok bool) {
	server, tool, ok = strings.Cut(qualified, Separator)
	if !ok || server == "" || tool == "" {
		return "", "", false
	}
	return server, tool, true
}

// Resolve splits a qualified tool name into a configured server and a
// tool name; ok is false if no configured server prefixes it. If two
// configured names do ("fs" and "fs_" for "fs___read"), the longer wins.
func (m *Manager) Resolve(qualified string) (server, tool string, ok bool) {
	for _, name := range m.names {
		if t, found := strings.CutPrefix(qualified, name+Separator); found && t != "" && len(name) > len(server) {
			server, tool, ok = name, t, true
		}
	}
	return server, tool, ok
}

// Tools lists the tools of every configured server for o, opening o's
// sessions as needed (servers are listed concurrently). If some servers
// fail, it returns the others' tools and a *ToolsError naming the failed
// ones; ctx's end is reported the same way, per server.
func (m *Manager) Tools(ctx context.Context, o owner.Owner) ([]Tool, error) {
	lists := make([][]Tool, len(m.names))
	errs := make([]error, len(m.names))
	var wg sync.WaitGroup
	for i, name := range m.names {
		wg.Go(func() { lists[i], errs[i] = m.serverTools(ctx, o, name) })
	}
	wg.Wait()
	var out []Tool
	var te ToolsError
	for i, name := range m.names {
		out = append(out, lists[i]...)
		if errs[i] != nil {
			te.Failed = append(te.Failed, &ServerError{Server: name, Err: errs[i]})
		}
	}
	if len(te.Failed) > 0 {
		return out, &te
	}
	return out, nil
}

func (m *Manager) serverTools(ctx context.Context, o owner.Owner, server string) ([]Tool, error) {
	s, release, err := m.acquire(ctx, o, server)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, stop := withSession(ctx, s)
	defer stop()
	var out []Tool
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		schema, err := toMap(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
		out = append(out, Tool{
			Server: server, Name: t.Name, Qualified: server + Separator + t.Name,
			Description: t.Description, InputSchema: schema,
		})
	}
	return out, nil
}

// Call calls tool on server as o, through o's session. Whether o may is
// not decided here: the caller asks the gate first. A tool that fails
// returns a Result with IsError; an error means the call did not happen
// or did not finish (unknown server, server down, ctx ended, session
// closed).
func (m *Manager) Call(ctx context.Context, o owner.Owner, server, tool string, args map[string]any) (Result, error) {
	s, release, err := m.acquire(ctx, o, server)
	if err != nil {
		return Result{}, fmt.Errorf("call %s%s%s: %w", server, Separator, tool, err)
	}
	defer release()
	ctx, stop := withSession(ctx, s)
	defer stop()
	params := &mcp.CallToolParams{Name: tool}
	if args != nil {
		params.Arguments = args
	} else {
		params.Arguments = map[string]any{}
	}
	res, err := s.cs.CallTool(ctx, params)
	if err == nil && ctx.Err() != nil {
		// The session closed (CloseOwner, Close) while the call ran: a
		// result that raced the close, such as a server's answer to a
		// question cancelled by the close, belongs to an owner that is
		// gone and is not reported as the call's outcome.
		err = ErrClosed
	}
	if err != nil {
		if cause := context.Cause(ctx); cause != nil {
			err = fmt.Errorf("%w (%w)", err, cause)
		}
		return Result{}, fmt.Errorf("call %s%s%s: %w", server, Separator, tool, err)
	}
	return toResult(res), nil
}

// withSession returns ctx that also ends when s is closed, so CloseOwner
// and Close end the owner's calls instead of waiting for them.
func withSession(ctx context.Context, s *session) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(s.ctx, func() { cancel(context.Cause(s.ctx)) })
	return ctx, func() { stop(); cancel(nil) }
}

func toResult(res *mcp.CallToolResult) Result {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s]", c.URI))
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s]", c.Resource.URI))
			}
		default:
			parts = append(parts, fmt.Sprintf("[%T]", c))
		}
	}
	return Result{Text: strings.Join(parts, "\n"), IsError: res.IsError, Structured: res.StructuredContent}
}

// toMap turns a schema as the SDK decoded it into a map.
func toMap(v any) (map[string]any, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return v, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}
