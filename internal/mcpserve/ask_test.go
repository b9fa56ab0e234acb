package mcpserve

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
)

// protocols are the client protocols every ask test runs on: the last
// one with server-initiated elicitation (the SDK's shim sends
// elicitation/create) and the latest (2026-07-28: InputRequests reach
// the client, which retries the call).
var protocols = []struct{ name, version string }{
	{"2025-11-25", "2025-11-25"},
	{"latest", ""},
}

// forProtocols runs test as a subtest on each protocol (version "" is
// the latest), each with a fresh host and a build directory.
func forProtocols(t *testing.T, test func(t *testing.T, version string, h *testHost, dir string)) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) { test(t, p.version, startHost(t), withBuild(t)) })
	}
}

// askClient configures the MCP client side of an ask test.
type askClient struct {
	ask      bool                                                                 // the server's AskClient
	elicit   func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) // nil: no elicitation capability
	protocol string
	noMRTR   bool // the client handles input requests itself
}

// connectAsk is connect with the server's ask_client and the client's
// elicitation handler and protocol set as c says.
func connectAsk(t *testing.T, h *testHost, dir string, c askClient) (*mcp.ClientSession, *handler) {
	t.Helper()
	api := localapi.NewClient(h.api.Socket())
	o := Options{Runner: api, Session: "conn-1", Dir: dir}
	if c.ask {
		o.AskClient, o.Answerer = true, api
	}
	s, hd, err := newServer(o)
	if err != nil {
		t.Fatal(err)
	}
	co := &mcp.ClientOptions{ElicitationHandler: c.elicit}
	if c.noMRTR {
		co.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	}
	cs := inMemory(t, s, "test-agent", co, &mcp.ClientSessionOptions{ProtocolVersion: c.protocol}, api.Close)
	// The path under test: the SDK's shim (elicitation/create) below
	// 2026-07-28, input requests the client fulfils from it on.
	want := c.protocol
	if want == "" {
		want = "2026-07-28"
	}
	if got := cs.InitializeResult().ProtocolVersion; got != want {
		t.Fatalf("negotiated protocol %s, want %s", got, want)
	}
	return cs, hd
}

// answer is a form answer of the client's user.
func answer(approve bool, reason string) *mcp.ElicitResult {
	c := map[string]any{"approve": approve}
	if reason != "" {
		c["reason"] = reason
	}
	return &mcp.ElicitResult{Action: "accept", Content: c}
}

var requestID = regexp.MustCompile(`\(request ([0-9A-Z]{26})\)`)

// pendingIDs lists the host's pending requests.
func pendingIDs(t *testing.T, h *testHost) []string {
	t.Helper()
	list, err := h.api.Approvals(context.Background())
	if err != nil {
		t.Error(err)
	}
	var ids []string
	for _, a := range list {
		ids = append(ids, a.ID)
	}
	return ids
}

func withBuild(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// buildKept checks that the build directory withBuild made in dir is
// still there: the delete did not run.
func buildKept(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "build")); err != nil {
		t.Errorf("build removed: %v", err)
	}
}

// buildGone checks that the build directory withBuild made in dir is
// gone: the delete ran.
func buildGone(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "build")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("build still there: %v", err)
	}
}

// TestAskClient: with ask_client on, a client that can elicit gets the
// question, on either protocol, and its user's answer decides.
func TestAskClient(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name+"/approve", func(t *testing.T) {
			h := startHost(t)
			dir := withBuild(t)
			var asked atomic.Value
			cs, hd := connectAsk(t, h, dir, askClient{ask: true, protocol: p.version,
				elicit: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked.Store(req.Params.Message)
					// The console has the same question.
					m := requestID.FindStringSubmatch(req.Params.Message)
					if ids := pendingIDs(t, h); m == nil || len(ids) != 1 || ids[0] != m[1] {
						t.Errorf("asked %q while pending: %v", req.Params.Message, ids)
					}
					return answer(true, ""), nil
				}})
			res, text := call(t, cs, "shell", map[string]any{"command": "rm -rf build && echo removed"})
			msg, _ := asked.Load().(string)
			if !strings.HasPrefix(msg, "warden: test-agent wants to run the shell command `rm -rf build && echo removed` in "+dir+"; it needs approval (request ") ||
				!strings.Contains(msg, "Also on the warden console") {
				t.Errorf("question: %q", msg)
			}
			if res.IsError || !regexp.MustCompile(`^removed\n\[exit status 0\] \(approved in the MCP client, request [0-9A-Z]{26}\)$`).MatchString(text) {
				t.Errorf("result: error %v, %q", res.IsError, text)
			}
			buildGone(t, dir)
			if n := hd.asks.open(); n != 0 {
				t.Errorf("%d questions still open", n)
			}
		})
		t.Run(p.name+"/deny", func(t *testing.T) {
			h := startHost(t)
			dir := withBuild(t)
			cs, _ := connectAsk(t, h, dir, askClient{ask: true, protocol: p.version,
				elicit: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return answer(false, "keep the build"), nil
				}})
			res, text := call(t, cs, "shell", map[string]any{"command": "rm -rf build"})
			wantResult(t, res, text, true, "The user denied `rm -rf build`. Their reason: keep the build. Do not retry it or variations of it.")
			buildKept(t, dir)
		})
		t.Run(p.name+"/decline", func(t *testing.T) {
			h := startHost(t)
			dir := withBuild(t)
			cs, _ := connectAsk(t, h, dir, askClient{ask: true, protocol: p.version,
				elicit: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "decline"}, nil
				}})
			res, text := call(t, cs, "execute_code", map[string]any{"language": "sh", "source": "rm -rf build"})
			wantResult(t, res, text, true, "declined in test-agent")
			buildKept(t, dir)
		})
	}
}

// TestAskClientConsoleFirst: the console answers while the client's
// question is open; the client's later answer gets 409 and is ignored.
func TestAskClientConsoleFirst(t *testing.T) {
	forProtocols(t, func(t *testing.T, version string, h *testHost, dir string) {
		cs, _ := connectAsk(t, h, dir, askClient{ask: true, protocol: version,
			elicit: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				m := requestID.FindStringSubmatch(req.Params.Message)
				if m == nil {
					t.Errorf("no request id in %q", req.Params.Message)
					return nil, errors.New("no id")
				}
				if _, err := h.api.Approve(ctx, m[1], localapi.ApproveRequest{}); err != nil {
					t.Errorf("console approve: %v", err)
				}
				return answer(false, "too late"), nil
			}})
		res, text := call(t, cs, "shell", map[string]any{"command": "rm -rf build && echo removed"})
		wantResult(t, res, text, false, "removed\n[exit status 0] (approved on the warden console, request ")
		buildGone(t, dir)
	})
}

// TestAskClientForgedState: a call carrying an answer with a state
// warden did not sign answers nothing; the question stays open.
func TestAskClientForgedState(t *testing.T) {
	forProtocols(t, func(t *testing.T, version string, h *testHost, dir string) {
		var cs *mcp.ClientSession
		ready := make(chan struct{})
		cs, _ = connectAsk(t, h, dir, askClient{ask: true, protocol: version,
			elicit: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				<-ready
				m := requestID.FindStringSubmatch(req.Params.Message)
				if m == nil {
					return nil, errors.New("no id")
				}
				forger, err := newAsks() // another key
				if err != nil {
					return nil, err
				}
				for _, state := range []string{forger.sign("shell", m[1]), m[1], "", "w1..", "w1." + strings.Repeat("A", 20) + ".x"} {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{"command": "rm -rf build"},
						InputResponses: mcp.InputResponseMap{inputKey: answer(true, "")}, RequestState: state})
					if err != nil {
						t.Errorf("forged call %q: %v", state, err)
						continue
					}
					if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "nothing was approved") {
						t.Errorf("forged state %q: error %v, %q", state, res.IsError, res.Content[0].(*mcp.TextContent).Text)
					}
				}
				if ids := pendingIDs(t, h); len(ids) != 1 || ids[0] != m[1] {
					t.Errorf("after forged answers, pending: %v", ids)
				}
				return &mcp.ElicitResult{Action: "cancel"}, nil
			}})
		close(ready)
		res, text := call(t, cs, "shell", map[string]any{"command": "rm -rf build"})
		wantResult(t, res, text, true, "dismissed in test-agent")
		buildKept(t, dir)
	})
}

// TestAskClientTamperedState: on the latest protocol the client holds
// the state between rounds. Altered, or replayed on another tool, it
// answers nothing; the real one, once, does.
func TestAskClientTamperedState(t *testing.T) {
	h := startHost(t)
	dir := withBuild(t)
	cs, _ := connectAsk(t, h, dir, askClient{ask: true, noMRTR: true,
		elicit: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("the test answers the input requests itself")
		}})
	args := map[string]any{"command": "rm -rf build"}
	first, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "shell", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	q, ok := first.InputRequests[inputKey].(*mcp.ElicitParams)
	if !first.NeedsInput() || !ok || first.RequestState == "" {
		t.Fatalf("first round: needs input %v, %#v, state %q", first.NeedsInput(), first.InputRequests, first.RequestState)
	}
	if !strings.Contains(q.Message, "`rm -rf build`") {
		t.Errorf("question: %q", q.Message)
	}
	st := first.RequestState
	flip := []byte(st)
	flip[len(flip)-2] ^= 1
	approve := mcp.InputResponseMap{inputKey: answer(true, "")}
	for _, tt := range []struct {
		tool, state string
		args        map[string]any
	}{
		{"shell", string(flip), args},
		{"execute_code", st, map[string]any{"language": "sh", "source": "rm -rf build"}},
		{"write_file", st, map[string]any{"path": "x", "content": ""}},
	} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args, InputResponses: approve, RequestState: tt.state})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "nothing was approved") {
			t.Errorf("%s with state %q: error %v, %v", tt.tool, tt.state, res.IsError, res.Content[0].(*mcp.TextContent).Text)
		}
	}
	if ids := pendingIDs(t, h); len(ids) != 1 {
		t.Fatalf("pending after tampered answers: %v", ids)
	}
	// The real state denies; a replay of it finds nothing open.
	deny := mcp.InputResponseMap{inputKey: answer(false, "no")}
	for i, want := range []string{"Their reason: no.", "is no longer open here"} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "shell", Arguments: args, InputResponses: deny, RequestState: st})
		if err != nil {
			t.Fatal(err)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.Contains(text, want) {
			t.Errorf("answer %d: error %v, %q; want %q", i, res.IsError, text, want)
		}
	}
	buildKept(t, dir)
}

// TestAskClientConsoleOnly: without ask_client, or with a client that
// cannot elicit, the question goes to the console alone, as before.
func TestAskClientConsoleOnly(t *testing.T) {
	for _, p := range protocols {
		for _, c := range []struct {
			name   string
			ask    bool
			elicit bool
		}{{"ask_client off", false, true}, {"client without elicitation", true, false}} {
			t.Run(p.name+"/"+c.name, func(t *testing.T) {
				h := startHost(t)
				dir := withBuild(t)
				ac := askClient{ask: c.ask, protocol: p.version}
				if c.elicit {
					ac.elicit = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						t.Error("the client was asked")
						return answer(true, ""), nil
					}
				}
				cs, _ := connectAsk(t, h, dir, ac)
				res, text := callAnswered(t, h, cs, true, "", "shell", map[string]any{"command": "rm -rf build && echo removed"})
				wantResult(t, res, text, false, "removed\n[exit status 0] (approved on the warden console, request ")
			})
		}
	}
}

// TestAskClientFails: on the older protocol the SDK elicits within the
// call; when that fails, the call fails and warden denies the question
// at once (fail closed) rather than leave it open.
func TestAskClientFails(t *testing.T) {
	h := startHost(t)
	dir := withBuild(t)
	var id atomic.Value
	cs, hd := connectAsk(t, h, dir, askClient{ask: true, protocol: "2025-11-25",
		elicit: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if m := requestID.FindStringSubmatch(req.Params.Message); m != nil {
				id.Store(m[1])
			}
			return nil, errors.New("the UI crashed")
		}})
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{"command": "rm -rf build"}}); err == nil {
		t.Error("the call succeeded")
	}
	if ids := pendingIDs(t, h); len(ids) != 0 {
		t.Errorf("still pending: %v", ids)
	}
	if n := hd.asks.open(); n != 0 {
		t.Errorf("%d questions still open", n)
	}
	rid, _ := id.Load().(string)
	r, err := h.db.GetRequest(t.Context(), rid)
	if err != nil || r.State != store.Denied || !strings.Contains(r.Reason, "the question could not be put to test-agent") || !strings.HasPrefix(r.By, "uid ") || !strings.Contains(r.By, `via admin socket, outside sandboxes (client says "mcp client test-agent")`) {
		t.Errorf("request %q: %+v, %v; want denied for the failed question", rid, r, err)
	}
	buildKept(t, dir)
}

// TestAbandonedQuestion: a question the client never answers is dropped
// when its time is up, and its run cancelled (withdrawing the host's
// question).
func TestAbandonedQuestion(t *testing.T) {
	old := askGrace
	askGrace = 50 * time.Millisecond
	t.Cleanup(func() { askGrace = old })
	h := startHost(t) // a minute's deadline: the ttl is min(deadline+grace, max); shorten max too
	oldMax := maxAskWait
	maxAskWait = 100 * time.Millisecond
	t.Cleanup(func() { maxAskWait = oldMax })
	dir := withBuild(t)
	cs, hd := connectAsk(t, h, dir, askClient{ask: true, noMRTR: true,
		elicit: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, errors.New("unused") }})
	first, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{"command": "rm -rf build"}})
	if err != nil || !first.NeedsInput() {
		t.Fatalf("first round: %v, %v", first, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for (hd.asks.open() != 0 || len(pendingIDs(t, h)) != 0) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n, ids := hd.asks.open(), pendingIDs(t, h); n != 0 || len(ids) != 0 {
		t.Errorf("open %d, pending %v", n, ids)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{"command": "rm -rf build"},
		InputResponses: mcp.InputResponseMap{inputKey: answer(true, "")}, RequestState: first.RequestState})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "no longer open") {
		t.Errorf("late answer: %v, %v", res, err)
	}
	buildKept(t, dir)
}

func TestAsksLimit(t *testing.T) {
	a, err := newAsks()
	if err != nil {
		t.Fatal(err)
	}
	var cancelled atomic.Int32
	for i := range maxAsks + 1 {
		j := &job{id: string(rune('A' + i)), cancel: func() { cancelled.Add(1) }}
		if ok := a.put(j, time.Hour); ok != (i < maxAsks) {
			t.Errorf("put %d: %v", i, ok)
		}
	}
	if a.claim("A") == nil || a.claim("A") != nil {
		t.Error("claim is not once")
	}
	if got := cancelled.Load(); got != 0 {
		t.Errorf("%d cancelled", got)
	}
	if id, ok := a.verify("shell", a.sign("shell", "R1")); !ok || id != "R1" {
		t.Errorf("verify: %q, %v", id, ok)
	}
	for i := range maxAsks {
		a.claim(string(rune('A' + i)))
	}
	if n := a.open(); n != 0 {
		t.Errorf("%d open", n)
	}
}

func TestReadAnswer(t *testing.T) {
	tests := []struct {
		name    string
		in      mcp.InputResponseMap
		approve bool
		reason  string
	}{
		{"approve", mcp.InputResponseMap{inputKey: answer(true, "")}, true, ""},
		{"not approved", mcp.InputResponseMap{inputKey: answer(false, "")}, false, "not approved in a"},
		{"reason", mcp.InputResponseMap{inputKey: answer(false, " later ")}, false, "later"},
		{"approve as a string", mcp.InputResponseMap{inputKey: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": "true"}}}, false, "not approved in a"},
		{"decline", mcp.InputResponseMap{inputKey: &mcp.ElicitResult{Action: "decline"}}, false, "declined in a"},
		{"cancel", mcp.InputResponseMap{inputKey: &mcp.ElicitResult{Action: "cancel"}}, false, "dismissed in a"},
		{"unknown action", mcp.InputResponseMap{inputKey: &mcp.ElicitResult{Action: "yes", Content: map[string]any{"approve": true}}}, false, "dismissed in a"},
		{"other key", mcp.InputResponseMap{"x": answer(true, "")}, false, "no answer came from a"},
		{"none", nil, false, "no answer came from a"},
	}
	for _, tt := range tests {
		if approve, reason := readAnswer(tt.in, "a"); approve != tt.approve || reason != tt.reason {
			t.Errorf("%s: %v %q, want %v %q", tt.name, approve, reason, tt.approve, tt.reason)
		}
	}
}
