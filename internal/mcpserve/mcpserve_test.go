package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/wardenhq/warden/internal/ancestry"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner/runnertest"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
	"github.com/wardenhq/warden/internal/tools"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testHost is the host side: a real store, gate, broker and runner
// behind the admin API on a unix socket, as warden serve wires them
// (default policy).
type testHost struct {
	api *localapi.Client // as warden approvals uses it: the console's answers
	db  *sqlite.DB
}

func startHost(t *testing.T) *testHost {
	t.Helper()
	rf := runnertest.New(t, runnertest.Options{Ask: time.Minute, Terminal: tools.Terminal{Env: []string{"PATH=/usr/bin:/bin"}}})
	state, db, b := rf.Dir, rf.DB, rf.Broker
	srv := localapi.New(localapi.Options{Broker: b, Store: db, Runner: rf.Runner,
		Peers: localapi.PeerPolicy{UID: os.Getuid(), Boundary: ancestry.Boundary{Host: os.Getpid()}}})
	sock := filepath.Join(state, localapi.SocketName)
	ln, err := localapi.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.HTTPServer(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = hs.Serve(ln) }()
	h := &testHost{api: localapi.NewClient(sock), db: db}
	t.Cleanup(func() {
		b.Close(context.Background(), "test over")
		hs.Close()
		<-done
		h.api.Close()
	})
	return h
}

// connect starts warden's MCP server against the host and returns a
// client session of an MCP client named agent.
func connect(t *testing.T, h *testHost, agent, session, dir string) *mcp.ClientSession {
	t.Helper()
	return connectWith(t, h, agent, Options{Session: session, Dir: dir}, nil)
}

// call calls a tool and returns the result's text and structured output.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return res, text.String()
}

// agentInBuild is a host and the session conn-1 of MCP client
// test-agent, in a directory holding a build directory.
func agentInBuild(t *testing.T) (*testHost, string, *mcp.ClientSession) {
	t.Helper()
	h := startHost(t)
	dir := withBuild(t)
	return h, dir, connect(t, h, "test-agent", "conn-1", dir)
}

// callAnswered calls tool with args while a human on the console
// answers its question (approve, with reason).
func callAnswered(t *testing.T, h *testHost, cs *mcp.ClientSession, approve bool, reason, tool string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	answered := answerFirst(t, h, approve, reason)
	res, text := call(t, cs, tool, args)
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	return res, text
}

// wantResult checks a tool's result: an error or not, as isError says,
// with sub in its text.
func wantResult(t *testing.T, res *mcp.CallToolResult, text string, isError bool, sub string) {
	t.Helper()
	if res.IsError != isError || !strings.Contains(text, sub) {
		t.Errorf("result: error %v, %q", res.IsError, text)
	}
}

// answerFirst waits for one pending request and answers it as a human
// on the console would; it returns the request's owner.
func answerFirst(t *testing.T, h *testHost, approve bool, reason string) <-chan error {
	errc := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			list, err := h.api.Approvals(context.Background())
			if err != nil {
				errc <- err
				return
			}
			if len(list) == 1 {
				if !strings.HasPrefix(list[0].OwnerText, "external:test-agent/conn-1,") {
					errc <- errors.New("pending request owned by " + list[0].OwnerText)
					return
				}
				if approve {
					_, err = h.api.Approve(context.Background(), list[0].ID, localapi.ApproveRequest{})
				} else {
					_, err = h.api.Deny(context.Background(), list[0].ID, localapi.DenyRequest{Reason: reason})
				}
				errc <- err
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		errc <- errors.New("no pending request")
	}()
	return errc
}

// TestShellApprovedOnTheConsole is the test: an MCP client calls
// shell with a dangerous command, a human answers on the console, and
// the result comes back with the command's output.
func TestShellApprovedOnTheConsole(t *testing.T) {
	h, dir, cs := agentInBuild(t)
	res, text := callAnswered(t, h, cs, true, "", "shell", map[string]any{"command": "rm -rf build && echo removed"})
	wantResult(t, res, text, false, "removed\n[exit status 0] (approved on the warden console, request ")
	buildGone(t, dir)
	// The decision was audited as the MCP client's session.
	ds, err := h.db.Decisions(t.Context(), store.AuditFilter{Session: owner.ExternalKey("test-agent", "conn-1")})
	if err != nil || len(ds) != 2 {
		t.Errorf("audit: %d records, %v; want the gate's ask and the human's answer", len(ds), err)
	}
}

func TestShellDeniedOnTheConsole(t *testing.T) {
	h, dir, cs := agentInBuild(t)
	res, text := callAnswered(t, h, cs, false, "keep the build", "shell", map[string]any{"command": "rm -rf build"})
	wantResult(t, res, text, true, "The user denied `rm -rf build`. Their reason: keep the build. Do not retry it or variations of it.")
	buildKept(t, dir)
}

// TestToolsWithoutAsking: hardline is denied and safe runs, with no
// question put to anyone.
func TestToolsWithoutAsking(t *testing.T) {
	h := startHost(t)
	dir := t.TempDir()
	cs := connect(t, h, "test-agent", "conn-1", dir)
	tests := []struct {
		name      string
		tool      string
		args      map[string]any
		wantError bool
		want      string
	}{
		{"hardline", "shell", map[string]any{"command": "rm -rf /"}, true, "warden blocked this shell command `rm -rf /`"},
		{"safe", "shell", map[string]any{"command": "echo hello"}, false, "hello\n[exit status 0]"},
		{"non-zero exit", "shell", map[string]any{"command": "echo oops >&2; exit 3"}, true, "oops\n[exit status 3]"},
		{"cwd", "shell", map[string]any{"command": "pwd", "cwd": "/"}, false, "/\n[exit status 0]"},
		{"relative cwd", "shell", map[string]any{"command": "pwd", "cwd": "sub"}, true, "not absolute"},
		{"code", "execute_code", map[string]any{"language": "sh", "source": "echo from code"}, false, "from code\n[exit status 0]"},
		{"write", "write_file", map[string]any{"path": "notes.txt", "content": "hi"}, false, "[exit status 0]"},
		{"write outside the directory", "write_file", map[string]any{"path": "/etc/warden-test", "content": "x"}, true, "/etc/warden-test"},
		{"empty command", "shell", map[string]any{"command": ""}, true, "needs a command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, text := call(t, cs, tt.tool, tt.args)
			if res.IsError != tt.wantError || !strings.Contains(text, tt.want) {
				t.Errorf("error %v, %q; want error %v with %q", res.IsError, text, tt.wantError, tt.want)
			}
			// An action that did not run says so: ran false and no
			// exit status a client could read as success.
			sc, err := json.Marshal(res.StructuredContent)
			if err != nil {
				t.Fatal(err)
			}
			ran := !strings.Contains(text, "did not run") && !strings.Contains(text, "blocked") && !strings.Contains(text, "not absolute")
			switch {
			case ran && !strings.Contains(string(sc), `"ran":true`) || ran && !strings.Contains(string(sc), `"exit_code":`):
				t.Errorf("a call that ran: structured %s", sc)
			case !ran && (strings.Contains(string(sc), `"exit_code"`) || strings.Contains(string(sc), `"ran":true`)):
				t.Errorf("a call that did not run: structured %s", sc)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "hi" {
		t.Errorf("notes.txt: %q, %v", b, err)
	}
	if list, err := h.api.Approvals(t.Context()); err != nil || len(list) != 0 {
		t.Errorf("pending: %v, %v", list, err)
	}
}

// TestWriteFileThroughSymlink: write_file judges a path on where it
// leads; a link in the working directory to a shell startup file is a
// write to that file, denied, and the file is unchanged.
func TestWriteFileThroughSymlink(t *testing.T) {
	h := startHost(t)
	dir, other := t.TempDir(), t.TempDir()
	rc := filepath.Join(other, ".bashrc")
	if err := os.WriteFile(rc, []byte("# rc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rc, filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, h, "test-agent", "conn-1", dir)
	res, text := call(t, cs, "write_file", map[string]any{"path": "notes.txt", "content": "alias ls=rm\n"})
	if !res.IsError || !strings.Contains(text, "shell startup file") {
		t.Errorf("error %v, %q", res.IsError, text)
	}
	if b, err := os.ReadFile(rc); err != nil || string(b) != "# rc\n" {
		t.Errorf(".bashrc changed: %q %v", b, err)
	}
}

// fakeRunner fails as a host that went away does.
type fakeRunner struct{ err error }

func (f fakeRunner) Run(context.Context, localapi.ExternalRequest, func(localapi.Event) error) error {
	return f.err
}

func TestHostGone(t *testing.T) {
	s, err := New(Options{Runner: fakeRunner{&localapi.NotRunningError{Socket: "/x"}}, Session: "c", Dir: "/"})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "a"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cs.Close(); _ = ss.Wait() }()
	res, text := call(t, cs, "shell", map[string]any{"command": "echo hi"})
	if !res.IsError || !strings.Contains(text, "warden is not running") {
		t.Errorf("error %v, %q", res.IsError, text)
	}
}

func TestNewOptions(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"no runner", Options{Session: "s", Dir: "/"}, "no runner"},
		{"no session", Options{Runner: fakeRunner{}, Dir: "/"}, "no session"},
		{"relative dir", Options{Runner: fakeRunner{}, Session: "s", Dir: "x"}, "not absolute"},
	}
	for _, tt := range tests {
		if _, err := New(tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}
