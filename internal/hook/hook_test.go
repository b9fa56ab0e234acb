package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/wardenhq/warden/internal/action"
)

// parseCase is a payload in testdata and the call it maps to.
type parseCase struct {
	file string
	want Call
}

// parseFiles runs parseFile on each case.
func parseFiles(t *testing.T, p Protocol, agent, session string, cases []parseCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.file, func(t *testing.T) { parseFile(t, p, tt.file, agent, session, tt.want) })
	}
}

// parseFile parses testdata/file with p and wants the call want, with
// the agent and session of the payload.
func parseFile(t *testing.T, p Protocol, file, agent, session string, want Call) {
	t.Helper()
	got, err := p.Parse(testdata(t, file))
	if err != nil {
		t.Fatal(err)
	}
	want.Agent, want.Session = agent, session
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func testdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestClaudeCodeParse maps the sample payloads of Claude Code's hook
// reference (testdata/*.json).
func TestClaudeCodeParse(t *testing.T) {
	const cwd = "/home/alice/proj"
	parseFiles(t, ClaudeCode{}, ClaudeCodeAgent, "abc123", []parseCase{
		{"bash_safe.json", Call{Tool: "Bash", Action: action.NewShell("ls -la").In(cwd)}},
		{"bash_dangerous.json", Call{Tool: "Bash", Action: action.NewShell("git push --force origin main").In(cwd)}},
		{"write.json", Call{Tool: "Write", Action: action.NewWrite(cwd+"/notes.txt", int64(len("file content"))).In(cwd)}},
		{"edit.json", Call{Tool: "Edit", Action: action.NewWrite(cwd+"/main.go", 0).In(cwd)}},
		{"multiedit.json", Call{Tool: "MultiEdit", Action: action.NewWrite(cwd+"/main.go", 0).In(cwd)}},
		{"notebookedit.json", Call{Tool: "NotebookEdit", Action: action.NewWrite(cwd+"/analysis.ipynb", 0).In(cwd)}},
		{"mcp.json", Call{Tool: "mcp__github__create_issue", Action: action.NewMCP("github", "create_issue",
			json.RawMessage(`{
    "owner": "wardenhq",
    "repo": "warden",
    "title": "hook test"
  }`), false).In(cwd)}},
		{"read.json", Call{Tool: "Read", Pass: true, Reads: []string{"/home/alice/proj/README.md"}, Dir: "/home/alice/proj"}},
	})
}

func TestClaudeCodeParseMalformed(t *testing.T) {
	valid := map[string]any{
		"session_id": "s", "cwd": "/w", "permission_mode": "default", "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}, "tool_use_id": "t",
	}
	with := func(k string, v any) []byte {
		m := map[string]any{}
		for k, v := range valid {
			m[k] = v
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		b, _ := json.Marshal(m)
		return b
	}
	tests := []struct {
		name    string
		payload []byte
		want    string
	}{
		{"not json", []byte("{not json"), "invalid character"},
		{"empty", nil, "unexpected end"},
		{"another event", testdata(t, "posttooluse.json"), "PreToolUse only"},
		{"no session", with("session_id", nil), "no session_id"},
		{"no tool", with("tool_name", nil), "no tool_name"},
		{"relative cwd", with("cwd", "proj"), "not absolute"},
		{"no command", with("tool_input", map[string]any{"description": "x"}), "no tool_input.command"},
		{"command not a string", with("tool_input", map[string]any{"command": 42}), "tool_input"},
		{"empty command", with("tool_input", map[string]any{"command": ""}), "needs a command"},
		{"tool_input not an object", with("tool_input", "ls"), "not a JSON object"},
		{"write without path", with("tool_name", "Write"), "no tool_input.file_path"},
		{"mcp args not an object", []byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"mcp__s__t","tool_input":[1]}`), "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ClaudeCode{}.Parse(tt.payload)
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse = %+v, %v; want ErrMalformed with %q", c, err, tt.want)
			}
		})
	}
}

func TestMCPTool(t *testing.T) {
	tests := []struct {
		name, server, tool string
		ok                 bool
	}{
		{"mcp__github__create_issue", "github", "create_issue", true},
		{"mcp__my_server__do__thing", "my_server", "do__thing", true},
		{"mcp__github", "", "", false},
		{"mcp____x", "", "", false},
		{"Bash", "", "", false},
	}
	for _, tt := range tests {
		s, tool, ok := mcpTool(tt.name)
		if s != tt.server || tool != tt.tool || ok != tt.ok {
			t.Errorf("mcpTool(%q) = %q, %q, %v", tt.name, s, tool, ok)
		}
	}
}

func TestClaudeCodeRender(t *testing.T) {
	tests := []struct {
		name       string
		answer     Answer
		wantStdout string
		wantStderr string
		wantExit   int
	}{
		{"allow", Answer{Verdict: Allow, Rule: "safe"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"warden: allowed (safe)"}}`, "", 0},
		{"allow by a human", Answer{Verdict: Allow, Rule: "human", RequestID: "r1"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"warden: approved on the console (request r1)"}}`, "", 0},
		{"deny", Answer{Verdict: Deny, Rule: "floor.hardline", Reason: "blocked: rm -rf /"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"blocked: rm -rf /"}}`, "", 0},
		{"ask", Answer{Verdict: Ask, Rule: "human", Reason: "force push"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"warden: needs your approval — force push"}}`, "", 0},
		{"pass", Answer{Verdict: Pass}, "", "", 0},
		{"failure", Answer{Verdict: Deny, Rule: "error", Reason: "cannot check"}, "", "cannot check\n", 2},
		{"no verdict", Answer{}, "", "no verdict", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ClaudeCode{}.Render(tt.answer)
			if got := strings.TrimSpace(string(r.Stdout)); got != tt.wantStdout {
				t.Errorf("stdout = %s\nwant     %s", got, tt.wantStdout)
			}
			if !strings.Contains(r.Stderr, tt.wantStderr) || (tt.wantStderr == "" && r.Stderr != "") {
				t.Errorf("stderr = %q, want %q", r.Stderr, tt.wantStderr)
			}
			if r.Exit != tt.wantExit {
				t.Errorf("exit = %d, want %d", r.Exit, tt.wantExit)
			}
		})
	}
}

func TestGenericParse(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		want    Call
		wantErr string
	}{
		{"shell", `{"version":1,"agent":"my-agent","session":"run-42","action":{"kind":"shell","command":"git push","dir":"/w"}}`,
			Call{Agent: "my-agent", Session: "run-42", Tool: "shell", Action: action.NewShell("git push").In("/w")}, ""},
		{"write", `{"version":1,"agent":"a","session":"s","action":{"kind":"write","path":"/w/f","size":3}}`,
			Call{Agent: "a", Session: "s", Tool: "write", Action: action.NewWrite("/w/f", 3)}, ""},
		{"mcp", `{"version":1,"agent":"a","session":"s","action":{"kind":"mcp","server":"gh","tool":"x","args":{"k":1}}}`,
			Call{Agent: "a", Session: "s", Tool: "mcp", Action: action.NewMCP("gh", "x", json.RawMessage(`{"k":1}`), false)}, ""},
		{"no version", `{"agent":"a","session":"s","action":{"kind":"shell","command":"ls"}}`, Call{}, "version 0"},
		{"future version", `{"version":2,"agent":"a","session":"s","action":{"kind":"shell","command":"ls"}}`, Call{}, "version 2"},
		{"no agent", `{"version":1,"session":"s","action":{"kind":"shell","command":"ls"}}`, Call{}, "no agent"},
		{"no session", `{"version":1,"agent":"a","action":{"kind":"shell","command":"ls"}}`, Call{}, "no session"},
		{"unknown field", `{"version":1,"agent":"a","session":"s","yolo":true,"action":{"kind":"shell","command":"ls"}}`, Call{}, "unknown field"},
		{"relative dir", `{"version":1,"agent":"a","session":"s","action":{"kind":"shell","command":"ls","dir":"w"}}`, Call{}, "not absolute"},
		{"relative write path", `{"version":1,"agent":"a","session":"s","action":{"kind":"write","path":"f"}}`, Call{}, "not absolute"},
		{"backend", `{"version":1,"agent":"a","session":"s","action":{"kind":"shell","command":"rm -rf x","backend":"docker"}}`, Call{}, "backend"},
		{"read-only hint", `{"version":1,"agent":"a","session":"s","action":{"kind":"mcp","server":"s","tool":"t","read_only":true}}`, Call{}, "read_only"},
		{"unknown kind", `{"version":1,"agent":"a","session":"s","action":{"kind":"teleport"}}`, Call{}, "unknown action kind"},
		{"empty command", `{"version":1,"agent":"a","session":"s","action":{"kind":"shell"}}`, Call{}, "needs a command"},
		{"two values", `{"version":1,"agent":"a","session":"s","action":{"kind":"shell","command":"ls"}} {}`, Call{}, "more than one"},
		{"not json", `shell ls`, Call{}, "invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Generic{}.Parse([]byte(tt.payload))
			if tt.wantErr != "" {
				if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("Parse = %+v, %v; want ErrMalformed with %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestGenericRender(t *testing.T) {
	tests := []struct {
		name     string
		answer   Answer
		want     string
		wantExit int
	}{
		{"allow", Answer{Verdict: Allow, Rule: "safe", Classes: nil}, `{"version":1,"decision":"allow","rule":"safe","classes":[]}`, 0},
		{"ask", Answer{Verdict: Ask, Rule: "human", Reason: "r", Classes: []string{"git.force_push"}}, `{"version":1,"decision":"ask","reason":"r","rule":"human","classes":["git.force_push"]}`, 1},
		{"deny", Answer{Verdict: Deny, Rule: "floor.hardline", Reason: "no", RequestID: "q"}, `{"version":1,"decision":"deny","reason":"no","rule":"floor.hardline","request_id":"q","classes":[]}`, 2},
		{"no verdict", Answer{}, `{"version":1,"decision":"deny","reason":"warden blocked this action: no verdict (\"\"). Do not retry it.","classes":[]}`, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Generic{}.Render(tt.answer)
			if got := strings.TrimSpace(string(r.Stdout)); got != tt.want || r.Exit != tt.wantExit {
				t.Errorf("got %s exit %d\nwant %s exit %d", got, r.Exit, tt.want, tt.wantExit)
			}
		})
	}
}

// fakeDecider answers with a fixed answer or error and records calls.
type fakeDecider struct {
	answer Answer
	err    error
	calls  []Call
}

func (f *fakeDecider) Decide(_ context.Context, c Call) (Answer, error) {
	f.calls = append(f.calls, c)
	return f.answer, f.err
}

func TestHandle(t *testing.T) {
	tests := []struct {
		name       string
		proto      Protocol
		in         []byte
		inErr      bool
		d          *fakeDecider
		wantCalls  int
		wantExit   int
		wantStdout string
		wantStderr string
	}{
		{name: "allowed", proto: ClaudeCode{}, in: testdata(t, "bash_safe.json"), d: &fakeDecider{answer: Answer{Verdict: Allow, Rule: "human", RequestID: "q", Vouched: true}},
			wantCalls: 1, wantStdout: `"permissionDecision":"allow"`},
		{name: "denied without a reason gets one", proto: ClaudeCode{}, in: testdata(t, "bash_safe.json"), d: &fakeDecider{answer: Answer{Verdict: Deny}},
			wantCalls: 1, wantStdout: `Do not retry`},
		{name: "pass asks nobody", proto: ClaudeCode{}, in: testdata(t, "read.json"), d: &fakeDecider{}},
		{name: "malformed", proto: ClaudeCode{}, in: []byte("{"), d: &fakeDecider{answer: Answer{Verdict: Allow}},
			wantExit: 2, wantStderr: "could not be checked"},
		{name: "unreadable", proto: ClaudeCode{}, inErr: true, d: &fakeDecider{answer: Answer{Verdict: Allow}},
			wantExit: 2, wantStderr: "could not be checked"},
		{name: "too large", proto: Generic{}, in: bytes.Repeat([]byte(" "), MaxInput+1), d: &fakeDecider{answer: Answer{Verdict: Allow}},
			wantExit: 2, wantStdout: "larger than"},
		{name: "decider fails", proto: ClaudeCode{}, in: testdata(t, "bash_safe.json"), d: &fakeDecider{answer: Answer{Verdict: Allow}, err: errors.New("store down")},
			wantCalls: 1, wantExit: 2, wantStderr: "store down"},
		{name: "decider gives no verdict", proto: Generic{}, in: []byte(`{"version":1,"agent":"a","session":"s","action":{"kind":"shell","command":"ls"}}`), d: &fakeDecider{},
			wantCalls: 1, wantExit: 2, wantStdout: `"decision":"deny"`},
		{name: "generic ask", proto: Generic{}, in: []byte(`{"version":1,"agent":"a","session":"s","action":{"kind":"shell","command":"git push -f"}}`), d: &fakeDecider{answer: Answer{Verdict: Ask, Rule: "human"}},
			wantCalls: 1, wantExit: 1, wantStdout: `"decision":"ask"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in io.Reader = bytes.NewReader(tt.in)
			if tt.inErr {
				in = iotest.ErrReader(errors.New("broken pipe"))
			}
			r := Handle(t.Context(), tt.proto, in, tt.d, Options{})
			if len(tt.d.calls) != tt.wantCalls {
				t.Errorf("%d decider calls, want %d", len(tt.d.calls), tt.wantCalls)
			}
			if r.Exit != tt.wantExit || !strings.Contains(string(r.Stdout), tt.wantStdout) || !strings.Contains(r.Stderr, tt.wantStderr) {
				t.Errorf("got exit %d stdout %s stderr %q; want exit %d, stdout with %q, stderr with %q",
					r.Exit, r.Stdout, r.Stderr, tt.wantExit, tt.wantStdout, tt.wantStderr)
			}
			if tt.wantExit == 0 && tt.wantStdout == "" && (len(r.Stdout) != 0 || r.Stderr != "") {
				t.Errorf("pass printed %q / %q", r.Stdout, r.Stderr)
			}
		})
	}
}
