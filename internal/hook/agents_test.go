package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/action"
)

// TestCodexParse maps Codex's PreToolUse payloads (its hook schema's
// shape: Claude Code's fields plus turn_id and model).
func TestCodexParse(t *testing.T) {
	const cwd = "/home/alice/proj"
	parseFiles(t, Codex{}, CodexAgent, "019a2c1e-7f3b-7c11-9a2e-5d1f0b6c4e21", []parseCase{
		{"codex_bash.json", Call{Tool: "Bash", Action: action.NewShell("git push --force origin main").In(cwd)}},
		{"codex_apply_patch.json", Call{Tool: "apply_patch",
			Action: action.NewWrite(cwd+"/docs/notes.md", 0).In(cwd),
			Extra: []action.Action{
				action.NewWrite(cwd+"/main.go", 0).In(cwd),
				action.NewWrite(cwd+"/old.go", 0).In(cwd),
				action.NewWrite(cwd+"/new.go", 0).In(cwd),
				action.NewWrite(cwd+"/tmp.txt", 0).In(cwd),
			}}},
		{"codex_mcp.json", Call{Tool: "mcp__memory__create_entities", Action: action.NewMCP("memory", "create_entities",
			json.RawMessage(`{"entities": [{"name": "warden", "entityType": "project", "observations": []}]}`), false).In(cwd)}},
	})
	// Other tools get no decision; a patch warden cannot read is refused.
	other := `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"update_plan","tool_input":{}}`
	if c, err := (Codex{}).Parse([]byte(other)); err != nil || !c.Pass {
		t.Errorf("update_plan: %+v, %v", c, err)
	}
	for name, patch := range map[string]string{
		"no envelope":   "*** Add File: x\n+y\n",
		"no file":       "*** Begin Patch\n*** End Patch\n",
		"empty path":    "*** Begin Patch\n*** Add File: \n*** End Patch\n",
		"relative, cwd": "",
	} {
		in, _ := json.Marshal(map[string]any{"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "apply_patch",
			"tool_input": map[string]string{"command": patch}})
		if patch == "" {
			in = []byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: rel.txt\n+x\n*** End Patch"}}`)
		}
		if _, err := (Codex{}).Parse(in); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
	var many strings.Builder
	many.WriteString("*** Begin Patch\n")
	for i := range maxPatchFiles + 1 {
		many.WriteString("*** Add File: f" + strings.Repeat("x", i) + "\n+y\n")
	}
	many.WriteString("*** End Patch\n")
	in, _ := json.Marshal(map[string]any{"session_id": "s", "cwd": "/w", "hook_event_name": "PreToolUse", "tool_name": "apply_patch",
		"tool_input": map[string]string{"command": many.String()}})
	if _, err := (Codex{}).Parse(in); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("a patch of %d files: %v", maxPatchFiles+1, err)
	}
}

// TestGeminiParse maps Gemini CLI's BeforeTool payloads.
func TestGeminiParse(t *testing.T) {
	const cwd = "/home/alice/proj"
	const sess = "a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
	parseFiles(t, Gemini{}, GeminiAgent, sess, []parseCase{
		{"gemini_shell.json", Call{Tool: "run_shell_command", Dir: cwd, Action: action.NewShell("git push --force origin main").In(cwd + "/sub")}},
		{"gemini_write.json", Call{Tool: "write_file", Dir: cwd, Action: action.NewWrite(cwd+"/notes.txt", int64(len("file content"))).In(cwd)}},
		{"gemini_read.json", Call{Tool: "read_file", Dir: cwd, Pass: true, Reads: []string{".env"}}},
		{"gemini_mcp.json", Call{Tool: "mcp_github_create_issue", Dir: cwd, Action: action.NewMCP("github", "create_issue",
			json.RawMessage(`{"owner": "wardenhq", "repo": "warden", "title": "hook test"}`), false).In(cwd)}},
	})
	base := `{"session_id":"s","cwd":"/w","hook_event_name":"BeforeTool",`
	for name, tc := range map[string]struct {
		in           string
		paths, globs []string
	}{
		"read_many_files": {base + `"tool_name":"read_many_files","tool_input":{"include":["src/**/*.go","/etc/passwd"]}}`, nil, []string{"/w/src/**/*.go", "/etc/passwd"}},
		"grep_search":     {base + `"tool_name":"grep_search","tool_input":{"pattern":"key","dir_path":"/home/a/.ssh","include":"*"}}`, []string{"/home/a/.ssh"}, []string{"/home/a/.ssh/**/*"}},
		"glob":            {base + `"tool_name":"glob","tool_input":{"pattern":"**/.env*"}}`, nil, []string{"/w/**/.env*"}},
		"list_directory":  {base + `"tool_name":"list_directory","tool_input":{"dir_path":"/w"}}`, nil, nil},
	} {
		c, err := Gemini{}.Parse([]byte(tc.in))
		if err != nil || !c.Pass || !reflect.DeepEqual(c.Reads, tc.paths) || !reflect.DeepEqual(c.ReadGlobs, tc.globs) {
			t.Errorf("%s: %+v, %v; want reads %q globs %q", name, c, err, tc.paths, tc.globs)
		}
	}
	for name, in := range map[string]string{
		"another event": `{"session_id":"s","cwd":"/w","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"ls"}}`,
		"no command":    base + `"tool_name":"run_shell_command","tool_input":{}}`,
		"no file":       base + `"tool_name":"write_file","tool_input":{"content":"x"}}`,
		"no session":    `{"cwd":"/w","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls"}}`,
		"input a list":  base + `"tool_name":"run_shell_command","tool_input":["ls"]}`,
	} {
		if _, err := (Gemini{}).Parse([]byte(in)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

// TestRenderAgents: what each agent's protocol prints for each answer.
// Codex honours deny only; Gemini CLI has no ask: an ask is a deny that
// says why, never an allow.
func TestRenderAgents(t *testing.T) {
	approved := Answer{Verdict: Allow, Rule: "human", RequestID: "01Q", Vouched: true}
	ask := Answer{Verdict: Ask, Rule: "human", Reason: "shell command `git push -f` — git force push [git.force_push]"}
	deny := Answer{Verdict: Deny, Rule: "floor.hardline", Reason: "blocked: rm -rf /. Do not retry it."}
	failed := Answer{Verdict: Deny, Rule: "error", Reason: "warden blocked this action: it could not be checked"}
	tests := []struct {
		name   string
		p      Protocol
		a      Answer
		stdout string
		exit   int
	}{
		{"claude pass", ClaudeCode{}, Answer{Verdict: Pass}, "", 0},
		{"claude approved", ClaudeCode{}, approved, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"warden: approved on the console (request 01Q)"}}`, 0},
		{"claude ask", ClaudeCode{}, ask, `"permissionDecision":"ask"`, 0},
		{"codex pass", Codex{}, Answer{Verdict: Pass}, "", 0},
		{"codex approved", Codex{}, approved, "", 0},
		{"codex ask is a deny", Codex{}, ask, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"warden blocked this: it needs a human's approval (shell command ` + "`git push -f`" + ` — git force push [git.force_push]), and Codex's hooks cannot ask one.`, 0},
		{"codex deny", Codex{}, deny, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"blocked: rm -rf /. Do not retry it."}}`, 0},
		{"codex failed", Codex{}, failed, "", 2},
		{"gemini pass", Gemini{}, Answer{Verdict: Pass}, `{}`, 0},
		{"gemini approved", Gemini{}, approved, `{"decision":"allow","reason":"warden: approved on the console (request 01Q)"}`, 0},
		{"gemini ask is a deny", Gemini{}, ask, `{"decision":"deny","reason":"warden blocked this: it needs a human's approval (`, 0},
		{"gemini deny", Gemini{}, deny, `{"decision":"deny","reason":"blocked: rm -rf /. Do not retry it."}`, 0},
		{"gemini failed", Gemini{}, failed, "", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.p.Render(tt.a)
			out := strings.TrimSpace(string(r.Stdout))
			if r.Exit != tt.exit || !strings.Contains(out, tt.stdout) || (tt.stdout == "" && out != "") {
				t.Errorf("got exit %d stdout %s stderr %q; want exit %d, stdout with %s", r.Exit, out, r.Stderr, tt.exit, tt.stdout)
			}
			if tt.exit == 2 && !strings.Contains(r.Stderr, "could not be checked") {
				t.Errorf("a failure must say why on stderr: %q", r.Stderr)
			}
			if out != "" && !json.Valid([]byte(out)) {
				t.Errorf("stdout is not JSON: %s", out)
			}
		})
	}
}

// TestHandleDefersSafe: for an agent with its own permission rules, an
// allow no human stands behind is no decision (the agent's own rules
// apply) unless AllowSafe; a vouched allow stays allow; the generic
// protocol, for agents without rules of their own, always gets the
// allow.
func TestHandleDefersSafe(t *testing.T) {
	safe := Answer{Verdict: Allow, Rule: "safe", Reason: "shell command `ls`"}
	vouched := Answer{Verdict: Allow, Rule: "grant.prefix", Vouched: true}
	payloads := map[string][]byte{
		"claude": testdata(t, "bash_safe.json"),
		"codex":  testdata(t, "codex_bash.json"),
		"gemini": testdata(t, "gemini_shell.json"),
	}
	protos := map[string]Protocol{"claude": ClaudeCode{}, "codex": Codex{}, "gemini": Gemini{}}
	for name, p := range protos {
		noDecision := ""
		if name == "gemini" {
			noDecision = "{}"
		}
		r := Handle(t.Context(), p, bytes.NewReader(payloads[name]), &fakeDecider{answer: safe}, Options{})
		if got := strings.TrimSpace(string(r.Stdout)); got != noDecision || r.Exit != 0 {
			t.Errorf("%s, safe: %q exit %d, want no decision", name, got, r.Exit)
		}
		r = Handle(t.Context(), p, bytes.NewReader(payloads[name]), &fakeDecider{answer: safe}, Options{AllowSafe: true})
		if name != "codex" && !strings.Contains(string(r.Stdout), `allow`) {
			t.Errorf("%s, safe with AllowSafe: %q, want allow", name, r.Stdout)
		}
		r = Handle(t.Context(), p, bytes.NewReader(payloads[name]), &fakeDecider{answer: vouched}, Options{})
		if name != "codex" && !strings.Contains(string(r.Stdout), `allow`) {
			t.Errorf("%s, vouched: %q, want allow", name, r.Stdout)
		}
	}
	generic := []byte(`{"version":1,"agent":"a","session":"s","action":{"kind":"shell","command":"ls"}}`)
	r := Handle(t.Context(), Generic{}, bytes.NewReader(generic), &fakeDecider{answer: safe}, Options{})
	if !strings.Contains(string(r.Stdout), `"decision":"allow"`) || r.Exit != 0 {
		t.Errorf("generic, safe: %s exit %d, want allow", r.Stdout, r.Exit)
	}
}

// perPath answers by the write's path: the worst answer of a multi-file
// patch is the call's.
type perPath map[string]Answer

func (p perPath) Decide(_ context.Context, c Call) (Answer, error) {
	if a, ok := p[c.Action.Path]; ok {
		return a, nil
	}
	return Answer{Verdict: Allow, Rule: "grant.exact", Vouched: true}, nil
}

func TestHandleWorstActionWins(t *testing.T) {
	in := testdata(t, "codex_apply_patch.json")
	d := perPath{"/home/alice/proj/tmp.txt": {Verdict: Deny, Rule: "floor.protected_path", Reason: "tmp.txt is protected"}}
	r := Handle(t.Context(), Codex{}, bytes.NewReader(in), d, Options{})
	if !strings.Contains(string(r.Stdout), `"permissionDecision":"deny"`) || !strings.Contains(string(r.Stdout), "tmp.txt is protected") {
		t.Errorf("one denied file of five: %s", r.Stdout)
	}
	d = perPath{"/home/alice/proj/main.go": {Verdict: Allow, Rule: "safe"}}
	r = Handle(t.Context(), ClaudeCode{}, bytes.NewReader([]byte(`{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`)), d, Options{})
	if len(r.Stdout) == 0 {
		t.Errorf("a vouched single action: no output")
	}
	// Four vouched files and one safe: the safe one is not vouched, so
	// the call gets no decision from Codex's point of view either way;
	// with the generic protocol the combined allow stays an allow.
	if a, err := decide(t.Context(), d, Call{Action: action.NewWrite("/home/alice/proj/x", 0), Extra: []action.Action{action.NewWrite("/home/alice/proj/main.go", 0)}}); err != nil || a.Verdict != Allow || a.Vouched {
		t.Errorf("vouched + safe = %+v, %v; want an allow that is not vouched", a, err)
	}
}
