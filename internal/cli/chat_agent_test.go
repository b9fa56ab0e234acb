package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/buftest"
	"github.com/wardenhq/warden/internal/llm/llmtest"
	"github.com/wardenhq/warden/internal/mcpclient/mcptest"
)

// chatModel calls terminal for "run: CMD" and files__confirm_delete for
// "mcp"; once a tool answered it replies "result: <tool result>".
func chatModel(r llmtest.Request) llmtest.Reply {
	last := r.Messages[len(r.Messages)-1]
	if last.Role == "tool" {
		return llmtest.Text("result: " + last.Content)
	}
	if cmd, ok := strings.CutPrefix(last.Content, "run: "); ok {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		return llmtest.Calls(llmtest.Call("terminal", string(args)))
	}
	if last.Content == "mcp" {
		return llmtest.Calls(llmtest.Call("files__confirm_delete", `{"path":"/srv/x"}`))
	}
	return llmtest.Text("you said: " + last.Content)
}

type chatRun struct {
	stdout, stderr, tty buftest.Buffer
	err                 error
	dir                 string
	model               *llmtest.Server
}

// runChatWith runs warden chat against the fake model with input as
// stdin; a terminal (keys read from lines) when tty is set.
func runChatWith(t *testing.T, query, input string, tty bool, extraConfig string) *chatRun {
	t.Helper()
	srv := llmtest.New(t, chatModel)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config.yaml")
	server, _ := json.Marshal(mcptest.Command(mcptest.Legacy))
	yaml := fmt.Sprintf("llm:\n  base_url: %s\n  model: m\n  max_retries: 0\nmcp:\n  rules: [{match: \"files/*\", action: allow}]\n  servers:\n    files:\n      command: %s\n%s", srv.URL(), server, extraConfig)
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &chatRun{dir: filepath.Join(dir, "work"), model: srv}
	if err := os.Mkdir(r.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	env := chatEnv{stdin: strings.NewReader(input), stdout: &r.stdout, stderr: &r.stderr,
		environ: []string{"PATH=" + os.Getenv("PATH")}, dir: r.dir, user: "tester"}
	if tty {
		env.term = &terminal{w: &r.tty}
	}
	r.err = runChat(t.Context(), chatOptions{state: filepath.Join(dir, "state"), config: cfgPath, query: query}, env)
	return r
}

func TestChatQuery(t *testing.T) {
	tests := []struct {
		name, query      string
		wantOut, wantErr string
	}{
		{"words", "hello", "you said: hello", ""},
		{"safe tool call runs", "run: echo from-the-tool", "result: from-the-tool\n[exit status 0]", "→ terminal"},
		{"dangerous call follows single_query_mode", "run: rm -rf ./victim", "result: BLOCKED", "warden: blocked:"},
		{"mcp questions are declined at once", "mcp", "result: declined", "→ files__confirm_delete"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runChatWith(t, tc.query, "", false, "")
			if r.err != nil {
				t.Fatal(r.err)
			}
			if !strings.Contains(r.stdout.String(), tc.wantOut) || !strings.Contains(r.stderr.String(), tc.wantErr) {
				t.Fatalf("stdout:\n%s\nstderr:\n%s", r.stdout.String(), r.stderr.String())
			}
			if strings.Contains(r.stdout.String(), "warden chat: session") {
				t.Error("-q printed the interactive intro")
			}
			if reqs := r.model.Requests(); len(reqs) == 0 || !reqs[0].Stream {
				t.Error("chat did not stream the reply")
			}
		})
	}
}

func TestChatQueryWithoutModel(t *testing.T) {
	dir := t.TempDir()
	err := runChat(t.Context(), chatOptions{state: filepath.Join(dir, "state"), config: filepath.Join(dir, "none.yaml"), query: "hi"},
		chatEnv{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, dir: dir, user: "u"})
	if !errors.Is(err, errNoModel) || exitCode(err) != ExitBlocked {
		t.Fatalf("err %v (exit %d), want errNoModel and exit 2", err, exitCode(err))
	}
}

func TestChatTerminalApprovesTheAgentsCall(t *testing.T) {
	r := runChatWith(t, "", "run: rm -rf ./victim && echo removed\no\n", true, "")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.Contains(r.tty.String(), "this needs your approval") || !strings.Contains(r.stdout.String(), "result: removed") {
		t.Fatalf("tty:\n%s\nstdout:\n%s\nstderr:\n%s", r.tty.String(), r.stdout.String(), r.stderr.String())
	}
}

// TestChatTerminalAnswersMCPQuestions: an MCP server's question during
// the agent's tool call is asked at this terminal, field by field, and
// the answer completes the call.
func TestChatTerminalAnswersMCPQuestions(t *testing.T) {
	for _, tc := range []struct {
		name, keys, want string
	}{
		{"accept", "mcp\ny\nfine by me\na\n", "result: accepted: confirm=true note=fine by me"},
		// Single keys, as a raw terminal sends them: x is no answer to
		// a yes-or-no question, n is; Enter leaves the note out.
		{"bad key asked again", "mcp\nxn\n\na", "result: accepted: confirm=false"},
		{"keys without line ends", "mcp\nyok\ra", "result: accepted: confirm=true note=ok"},
		{"decline", "mcp\ny\n\nd\n", "result: declined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runChatWith(t, "", tc.keys, true, "")
			if r.err != nil {
				t.Fatal(r.err)
			}
			if !strings.Contains(r.tty.String(), "MCP server files asks") || !strings.Contains(r.stdout.String(), tc.want) {
				t.Fatalf("tty:\n%s\nstdout:\n%s\nstderr:\n%s", r.tty.String(), r.stdout.String(), r.stderr.String())
			}
			// Every choice is echoed as it was taken.
			if !strings.Contains(r.tty.String(), "→ yes") && !strings.Contains(r.tty.String(), "→ no") {
				t.Errorf("no echo of the yes/no answer:\n%s", r.tty.String())
			}
			if !strings.Contains(r.tty.String(), "→ accepted") && !strings.Contains(r.tty.String(), "→ declined") {
				t.Errorf("no echo of accept/decline:\n%s", r.tty.String())
			}
		})
	}
}

// TestChatTerminalAlwaysNeedsConfirming: a at the approval prompt asks
// to confirm; n goes back to the prompt (o then runs it once), y
// approves always; every choice is echoed.
func TestChatTerminalAlwaysNeedsConfirming(t *testing.T) {
	r := runChatWith(t, "", "run: rm -rf ./victim && echo removed\nano\n", true, "")
	if r.err != nil {
		t.Fatal(r.err)
	}
	tty := r.tty.String()
	if !strings.Contains(tty, "always: allow this exact command in every session from now on") || !strings.Contains(tty, "→ approved once") ||
		strings.Contains(tty, "→ approved always") || !strings.Contains(r.stdout.String(), "result: removed") {
		t.Fatalf("tty:\n%s\nstdout:\n%s", tty, r.stdout.String())
	}
	r = runChatWith(t, "", "run: rm -rf ./victim && echo removed\nay\n", true, "")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.Contains(r.tty.String(), "→ approved always (this exact command, every session)") || !strings.Contains(r.stdout.String(), "result: removed") {
		t.Fatalf("tty:\n%s\nstdout:\n%s", r.tty.String(), r.stdout.String())
	}
}
