// Package mcptest is a fake MCP server for tests, built on the go-sdk
// server API, with tools that exercise warden's MCP client:
//
//   - echo: returns its arguments (as JSON text and structured content);
//   - confirm_delete {path}: asks the human with a form
//     {confirm: boolean, note: string} and returns what they answered:
//     "accepted: confirm=true note=…", "declined" or "cancelled";
//   - slow {ms}: waits ms milliseconds (or until cancelled), then "done";
//   - open_url {url}: asks the human to open url (URL-mode elicitation,
//     always the legacy way) and returns the answer like confirm_delete;
//   - env: the names of the server process's environment variables, one
//     a line, sorted (to check what a stdio child inherited).
//
// A Style chooses how confirm_delete asks: Legacy calls
// ServerSession.Elicit mid-call (works on protocol 2025-11-25 and older;
// fails on 2026-07-28), InputRequests returns an input-required result
// (multi round trip; on older protocols the SDK's server shim turns it
// into a legacy request).
//
// # In process
//
//	fake := mcptest.New(mcptest.Legacy)
//	defer fake.Close() // after the client sessions are closed
//	m := mcpclient.New(mcpclient.Options{Servers: …, Connect: fake.Connect})
//
// Each Connect starts a fresh server session over mcp.NewInMemoryTransports;
// Sessions counts them, so a test can tell how many client sessions were
// opened.
//
// # As a stdio subprocess
//
// Either re-exec the test binary: in the package's TestMain call
//
//	func TestMain(m *testing.M) { mcptest.MaybeServe(); goleak.VerifyTestMain(m) }
//
// and configure the server with Command: mcptest.Command(mcptest.Legacy).
// MaybeServe looks only at os.Args (no environment marker): when the
// first argument is ServeFlag it serves on stdin/stdout and exits.
//
// Or build the tiny main package: go build -o fakemcp
// ./internal/mcpclient/mcptest/cmd/fakemcp, and run "fakemcp legacy" or
// "fakemcp inputrequests".
package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/internal/config"
)

// Style is how confirm_delete asks the human.
type Style int

// Styles.
const (
	// Legacy calls ServerSession.Elicit in the middle of the call.
	Legacy Style = iota
	// InputRequests returns an input-required result and is called again
	// with the answer (SEP-2322 multi round trip).
	InputRequests
)

// String returns the style's name as used on the command line.
func (s Style) String() string {
	if s == InputRequests {
		return "inputrequests"
	}
	return "legacy"
}

// ParseStyle reads a Style's name.
func ParseStyle(name string) (Style, error) {
	switch name {
	case "legacy", "":
		return Legacy, nil
	case "inputrequests":
		return InputRequests, nil
	}
	return 0, fmt.Errorf("mcptest: unknown style %q (want legacy or inputrequests)", name)
}

// Schema is the form confirm_delete asks for.
var Schema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"confirm": map[string]any{"type": "boolean", "description": "really delete?"},
		"note":    map[string]any{"type": "string", "description": "why"},
	},
	"required": []any{"confirm"},
}

// NewServer returns a fake server with the tools echo, confirm_delete
// and slow.
func NewServer(style Style) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcptest", Version: "v0"}, nil)
	s.AddTool(&mcp.Tool{
		Name:        "echo",
		Description: "returns its arguments",
		InputSchema: map[string]any{"type": "object"},
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args map[string]any
		if len(req.Params.Arguments) > 0 {
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}},
			StructuredContent: args,
		}, nil
	})

	type deleteIn struct {
		Path string `json:"path" jsonschema:"the file to delete"`
	}
	mcp.AddTool(s, &mcp.Tool{
		Name:        "confirm_delete",
		Description: "asks the human before deleting path",
	}, func(ctx context.Context, req *mcp.CallToolRequest, in deleteIn) (*mcp.CallToolResult, any, error) {
		params := &mcp.ElicitParams{
			Mode:            "form",
			Message:         "Delete " + in.Path + "?",
			RequestedSchema: Schema,
		}
		var res *mcp.ElicitResult
		switch style {
		case InputRequests:
			resp, answered := req.Params.InputResponses["confirm"]
			if !answered {
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{"confirm": params},
					RequestState:  in.Path,
				}, nil, nil
			}
			if req.Params.RequestState != in.Path {
				return nil, nil, fmt.Errorf("request state %q, want %q", req.Params.RequestState, in.Path)
			}
			r, ok := resp.(*mcp.ElicitResult)
			if !ok {
				return nil, nil, fmt.Errorf("input response %T, want *mcp.ElicitResult", resp)
			}
			res = r
		default:
			r, err := req.Session.Elicit(ctx, params)
			if err != nil {
				return nil, nil, fmt.Errorf("elicit: %w", err)
			}
			res = r
		}
		return textResult(Describe(res)), nil, nil
	})

	type slowIn struct {
		MS int `json:"ms" jsonschema:"milliseconds to wait"`
	}
	mcp.AddTool(s, &mcp.Tool{
		Name:        "slow",
		Description: "waits ms milliseconds",
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
		t := time.NewTimer(time.Duration(in.MS) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
			return textResult("done"), nil, nil
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	})
	type urlIn struct {
		URL string `json:"url" jsonschema:"the page to open"`
	}
	mcp.AddTool(s, &mcp.Tool{
		Name:        "open_url",
		Description: "asks the human to open url",
	}, func(ctx context.Context, req *mcp.CallToolRequest, in urlIn) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", Message: "Sign in", URL: in.URL, ElicitationID: "e1"})
		if err != nil {
			return nil, nil, fmt.Errorf("elicit: %w", err)
		}
		return textResult(Describe(res)), nil, nil
	})

	s.AddTool(&mcp.Tool{
		Name:        "env",
		Description: "lists the names of the server's environment variables",
		InputSchema: map[string]any{"type": "object"},
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var names []string
		for _, kv := range os.Environ() {
			name, _, _ := strings.Cut(kv, "=")
			names = append(names, name)
		}
		slices.Sort(names)
		return textResult(strings.Join(names, "\n")), nil
	})
	return s
}

// Describe is confirm_delete's text for an answer.
func Describe(r *mcp.ElicitResult) string {
	switch r.Action {
	case "accept":
		return fmt.Sprintf("accepted: confirm=%v note=%v", r.Content["confirm"], r.Content["note"])
	case "decline":
		return "declined"
	case "cancel":
		return "cancelled"
	}
	return "unknown action " + r.Action
}

// Fake serves in-process sessions of one fake server.
type Fake struct {
	server *mcp.Server

	mu       sync.Mutex
	sessions []*mcp.ServerSession
	done     []chan struct{}
}

// New returns an in-process fake whose confirm_delete asks in style.
func New(style Style) *Fake { return &Fake{server: NewServer(style)} }

// Connect starts a new server session and returns the client's end. Its
// signature fits mcpclient.Options.Connect.
func (f *Fake) Connect(ctx context.Context, _ config.MCPServer) (mcp.Transport, error) {
	st, ct := mcp.NewInMemoryTransports()
	ss, err := f.server.Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() { _ = ss.Wait(); close(done) }()
	f.mu.Lock()
	f.sessions = append(f.sessions, ss)
	f.done = append(f.done, done)
	f.mu.Unlock()
	return ct, nil
}

// Sessions returns how many sessions were started.
func (f *Fake) Sessions() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sessions)
}

// Done returns a channel closed when the i-th session (from 0) has ended:
// its client closed it.
func (f *Fake) Done(i int) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.done[i]
}

// CloseSession closes the i-th session from the server's side, as a
// crashing server would, and waits for it to end.
func (f *Fake) CloseSession(i int) {
	f.mu.Lock()
	ss, done := f.sessions[i], f.done[i]
	f.mu.Unlock()
	_ = ss.Close()
	<-done
}

// Close closes every session and waits for them to end.
func (f *Fake) Close() {
	f.mu.Lock()
	ss, done := f.sessions, f.done
	f.mu.Unlock()
	for i, s := range ss {
		_ = s.Close()
		<-done[i]
	}
}

// ServeFlag, as the first argument of a test binary, makes MaybeServe
// serve the fake on stdin/stdout: "-mcptest.serve=legacy" or
// "-mcptest.serve=inputrequests".
const ServeFlag = "-mcptest.serve"

// Command returns the argv that re-runs the current test binary as a
// stdio fake server of style (for config.MCPServer.Command). The test
// binary's TestMain must call MaybeServe first.
func Command(style Style) []string {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return []string{exe, ServeFlag + "=" + style.String()}
}

// MaybeServe serves the fake on stdin/stdout and exits if os.Args[1] is
// ServeFlag; otherwise it returns at once. Call it first in TestMain.
func MaybeServe() {
	if len(os.Args) < 2 {
		return
	}
	name, ok := strings.CutPrefix(os.Args[1], ServeFlag+"=")
	if !ok {
		return
	}
	if err := ServeStdio(context.Background(), name, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mcptest:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// ServeStdio serves the fake of the named style on in/out until in ends.
func ServeStdio(ctx context.Context, style string, in io.ReadCloser, out io.WriteCloser) error {
	st, err := ParseStyle(style)
	if err != nil {
		return err
	}
	return NewServer(st).Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
}

// textResult is a tool result of one text content.
func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
