package mcpserve

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
)

// connectWith starts warden's MCP server with options o (its Runner
// reaching h) and returns a session of an MCP client named agent with
// options co.
func connectWith(t *testing.T, h *testHost, agent string, o Options, co *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	runner := localapi.NewClient(h.api.Socket())
	o.Runner = runner
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return inMemory(t, s, agent, co, nil, runner.Close)
}

// inMemory connects an MCP client named agent (options co, session
// options so) to server s over in-memory transports. When the test
// ends the client closes, the server's session ends, then done runs.
func inMemory(t *testing.T, s *mcp.Server, agent string, co *mcp.ClientOptions, so *mcp.ClientSessionOptions, done func()) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: agent, Version: "1"}, co).Connect(ctx, ct, so)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		_ = ss.Wait()
		cancel()
		done()
	})
	return cs
}

// timeoutClient is an MCP client with a request timeout that progress
// notifications reset, as the TypeScript SDK's resetTimeoutOnProgress
// does (the Go SDK's client has no request timeout of its own: this is
// the client side of that behaviour, built on its progress handler).
type timeoutClient struct {
	timeout time.Duration

	mu    sync.Mutex
	timer *time.Timer
	got   []mcp.ProgressNotificationParams
}

func (c *timeoutClient) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.got = append(c.got, *req.Params)
		if c.timer != nil {
			c.timer.Reset(c.timeout)
		}
	}}
}

// call calls a tool with a progress token; the call is cancelled when
// timeout passes without a progress notification.
func (c *timeoutClient) call(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.mu.Lock()
	c.timer = time.AfterFunc(c.timeout, cancel)
	c.mu.Unlock()
	defer func() { c.mu.Lock(); c.timer.Stop(); c.mu.Unlock() }()
	p := &mcp.CallToolParams{Name: tool, Arguments: args}
	p.SetProgressToken("call-1")
	return cs.CallTool(ctx, p)
}

func (c *timeoutClient) notes() []mcp.ProgressNotificationParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.got)
}

// answerAfter approves the one pending request once it has been open
// for at least wait.
func answerAfter(h *testHost, wait time.Duration) <-chan error {
	errc := make(chan error, 1)
	go func() {
		var since time.Time
		for deadline := time.Now().Add(wait + 30*time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			list, err := h.api.Approvals(context.Background())
			if err != nil {
				errc <- err
				return
			}
			if len(list) != 1 {
				continue
			}
			if since.IsZero() {
				since = time.Now()
			}
			if time.Since(since) >= wait {
				_, err = h.api.Approve(context.Background(), list[0].ID, localapi.ApproveRequest{})
				errc <- err
				return
			}
		}
		errc <- errors.New("no pending request")
	}()
	return errc
}

// TestProgressOutlastsClientTimeout is the test: a client whose
// requests time out after a short idle time, reset by progress, calls a
// dangerous command; the human answers long after that timeout, and the
// call still ends with the command's output, because the server kept
// reporting the wait (with the time left). Without progress the same
// client gives up first, and its hang-up withdraws the question.
func TestProgressOutlastsClientTimeout(t *testing.T) {
	const timeout = 1500 * time.Millisecond
	h := startHost(t)
	dir := withBuild(t)
	c := &timeoutClient{timeout: timeout}
	cs := connectWith(t, h, "test-agent", Options{Session: "conn-1", Dir: dir, ProgressInterval: 50 * time.Millisecond}, c.options())

	answered := answerAfter(h, 3*timeout)
	res, err := c.call(t.Context(), cs, "shell", map[string]any{"command": "rm -rf build && echo removed"})
	if err != nil {
		t.Fatalf("the call ended before the human answered: %v", err)
	}
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError || !strings.Contains(text, "removed\n[exit status 0]") {
		t.Errorf("result: %v %q", res.IsError, text)
	}
	buildGone(t, dir)
	notes := c.notes()
	waiting := 0
	for i, n := range notes {
		if n.ProgressToken != "call-1" {
			t.Errorf("progress token %v", n.ProgressToken)
		}
		if i > 0 && n.Progress <= notes[i-1].Progress {
			t.Errorf("progress went from %v to %v: it must increase", notes[i-1].Progress, n.Progress)
		}
		if strings.HasPrefix(n.Message, "waiting for approval of request ") && strings.Contains(n.Message, " left") && n.Total > n.Progress {
			waiting++
		}
	}
	if waiting < 10 {
		t.Errorf("%d waiting notifications (of %d); want one every 50ms over %v", waiting, len(notes), 3*timeout)
	}
}

func TestNoProgressClientGivesUp(t *testing.T) {
	const timeout = 1500 * time.Millisecond
	h := startHost(t)
	dir := withBuild(t)
	c := &timeoutClient{timeout: timeout}
	cs := connectWith(t, h, "test-agent", Options{Session: "conn-1", Dir: dir, ProgressInterval: -1}, c.options())
	_, err := c.call(t.Context(), cs, "shell", map[string]any{"command": "rm -rf build"})
	if err == nil {
		t.Fatal("the call outlived the client's timeout without progress")
	}
	if len(c.notes()) != 0 {
		t.Errorf("progress was off but %d notifications came", len(c.notes()))
	}
	// The hang-up withdrew the question: nothing left to approve, and
	// nothing ran.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		list, err := h.api.Approvals(t.Context())
		if err == nil && len(list) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("question still pending after the client gave up: %v %v", list, err)
		}
	}
	buildKept(t, dir)
}

// TestArgumentsRefusedBeforeAsking: a call that cannot run fails at
// once, with status invalid, and no human is asked.
func TestArgumentsRefusedBeforeAsking(t *testing.T) {
	h := startHost(t)
	cs := connect(t, h, "test-agent", "conn-1", t.TempDir())
	for name, tc := range map[string]struct {
		tool string
		args map[string]any
		want string
	}{
		"unknown language": {"execute_code", map[string]any{"language": "cobol", "source": "rm -rf ~"}, "cobol"},
		"no source":        {"execute_code", map[string]any{"language": "python"}, "source"},
		"no command":       {"shell", map[string]any{}, "command"},
		"no path":          {"write_file", map[string]any{"content": "x"}, "path"},
	} {
		res, text := call(t, cs, tc.tool, tc.args)
		if !res.IsError || !strings.Contains(text, tc.want) {
			t.Errorf("%s: %v %q", name, res.IsError, text)
		}
	}
	// The handler's own check, past the schema (a case the schema's
	// enum does not list but the name is still unknown).
	_, res, _ := (&handler{}).code(t.Context(), nil, CodeInput{Language: "COBOL", Source: "x"})
	if res.Status != StatusInvalid || res.Ran {
		t.Errorf("handler check: %+v", res)
	}
	if list, err := h.api.Approvals(t.Context()); err != nil || len(list) != 0 {
		t.Errorf("pending: %v %v", list, err)
	}
	if ds, err := h.db.Decisions(t.Context(), store.AuditFilter{Session: owner.ExternalKey("test-agent", "conn-1")}); err != nil || len(ds) != 0 {
		t.Errorf("decisions: %d %v; nothing should have reached the gate", len(ds), err)
	}
}

// TestToolsDescribeThemselves: titles, annotations and the language
// enum are on tools/list.
func TestToolsDescribeThemselves(t *testing.T) {
	h := startHost(t)
	cs := connect(t, h, "test-agent", "conn-1", t.TempDir())
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range list.Tools {
		byName[tl.Name] = tl
	}
	for _, n := range []string{"shell", "execute_code", "write_file"} {
		tl := byName[n]
		if tl == nil || tl.Title == "" || tl.Annotations == nil || tl.Annotations.ReadOnlyHint || tl.Annotations.DestructiveHint == nil || !*tl.Annotations.DestructiveHint || tl.Annotations.Title == "" {
			t.Errorf("%s: %+v", n, tl)
		}
	}
	if a := byName["write_file"].Annotations; !a.IdempotentHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
		t.Errorf("write_file annotations: %+v", a)
	}
	schema, _ := byName["execute_code"].InputSchema.(map[string]any)
	lang, _ := schema["properties"].(map[string]any)["language"].(map[string]any)
	enum, _ := lang["enum"].([]any)
	var names []string
	for _, e := range enum {
		names = append(names, e.(string))
	}
	if !slices.Contains(names, "python") || !slices.Contains(names, "bash") || slices.Contains(names, "cobol") {
		t.Errorf("language enum: %v", names)
	}
	out, _ := byName["shell"].OutputSchema.(map[string]any)
	if props, _ := out["properties"].(map[string]any); props["status"] == nil {
		t.Errorf("output schema has no status: %v", out)
	}
}
