package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/internal/action"
)

// ClaudeCodeAgent is the agent name of Claude Code's calls: its owner is
// external:claude-code/SESSION_ID.
const ClaudeCodeAgent = "claude-code"

// preToolUse is the only hook event warden answers.
const preToolUse = "PreToolUse"

// ClaudeCode is Claude Code's PreToolUse command hook protocol: a JSON
// payload on stdin (session_id, transcript_path, cwd, permission_mode,
// hook_event_name, tool_name, tool_input, tool_use_id), and on stdout
//
//	{"hookSpecificOutput":{"hookEventName":"PreToolUse",
//	  "permissionDecision":"allow|deny|ask","permissionDecisionReason":"…"}}
//
// with exit status 0. Tools map to actions as follows:
//
//	Bash                      shell: tool_input.command, in cwd
//	Write                     write: tool_input.file_path, size of content
//	Edit, MultiEdit           write: tool_input.file_path
//	NotebookEdit              write: tool_input.notebook_path
//	mcp__SERVER__TOOL         mcp: SERVER, TOOL, args = tool_input
//	Read, Grep, Glob          Pass, with what they read (Call.Reads)
//	anything else             no decision (Pass)
//
// An allow no human stands behind (a safe command; see Answer.Vouched)
// is no decision unless Options.AllowSafe: Claude Code's own
// permissions then apply, as without a hook, so installing warden never
// skips a prompt Claude Code would have shown.
//
// For Pass, nothing is printed and the exit status is 0: Claude Code
// goes on with its own permission rules, as if no hook had run —
// unless the Decider is a ReadDecider that answers for a read of a
// secret (ask, or deny). WebFetch and the like are Claude Code's to
// judge.
//
// A payload warden cannot read or map (bad JSON, a missing field, a
// relative path, an event other than PreToolUse) and any failure to
// decide exit with status 2 and the reason on stderr: Claude Code
// blocks the call with that reason whatever it makes of stdout. (Any
// other non-zero status would let the call go ahead.)
//
// permission_mode is recorded nowhere and changes nothing: the agent
// says it, so it cannot widen what warden allows.
type ClaudeCode struct{}

// Guarded implements Guarded: Claude Code has permission rules of its
// own.
func (ClaudeCode) Guarded() {}

// ccPayload is Claude Code's hook input.
type ccPayload struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
}

// ccInput holds the tool_input fields warden reads. Unknown fields are
// the tool's own business and ignored.
type ccInput struct {
	Command      *string `json:"command"`
	FilePath     *string `json:"file_path"`
	NotebookPath *string `json:"notebook_path"`
	Content      *string `json:"content"`
}

// Parse implements Protocol.
func (ClaudeCode) Parse(payload []byte) (Call, error) {
	p, err := readPreToolUse(payload, "claude-code")
	if err != nil {
		return Call{}, err
	}
	c := Call{Agent: ClaudeCodeAgent, Session: p.SessionID, Tool: p.ToolName}
	server, tool, isMCP := mcpTool(p.ToolName)
	if !isMCP && !decided(p.ToolName) {
		c.Pass = true
		c.Reads, c.ReadGlobs = readsOf(p.ToolName, p.ToolInput, p.Cwd)
		c.Dir = p.Cwd
		return c, nil
	}
	args, err := objectArgs(p.ToolName, p.ToolInput)
	if err != nil {
		return Call{}, err
	}
	if isMCP {
		c.Action = action.NewMCP(server, tool, args, false).In(p.Cwd)
		return c, validate(c)
	}
	var in ccInput
	if err := decodeArgs(p.ToolName, args, &in); err != nil {
		return Call{}, err
	}
	switch p.ToolName {
	case "Bash":
		if in.Command == nil {
			return Call{}, fmt.Errorf("%w: Bash: no tool_input.command", ErrMalformed)
		}
		c.Action = action.NewShell(*in.Command).In(p.Cwd)
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		field, path := "file_path", in.FilePath
		if p.ToolName == "NotebookEdit" {
			field, path = "notebook_path", in.NotebookPath
		}
		if path == nil || *path == "" {
			return Call{}, fmt.Errorf("%w: %s: no tool_input.%s", ErrMalformed, p.ToolName, field)
		}
		abs, err := absPath(p.ToolName, *path, p.Cwd)
		if err != nil {
			return Call{}, err
		}
		var size int64
		if p.ToolName == "Write" && in.Content != nil {
			size = int64(len(*in.Content))
		}
		c.Action = action.NewWrite(abs, size).In(p.Cwd)
	}
	return c, validate(c)
}

// readsOf returns what Claude Code's Read, Grep and Glob read: a file,
// a directory searched (with its glob filter), a pattern matched. A
// tool_input warden cannot read names nothing: the tool is the agent's
// to judge, as before.
func readsOf(tool string, input json.RawMessage, cwd string) (paths, globs []string) {
	var in struct {
		FilePath *string `json:"file_path"`
		Path     *string `json:"path"`
		Pattern  *string `json:"pattern"`
		Glob     *string `json:"glob"`
	}
	if json.Unmarshal(input, &in) != nil {
		return nil, nil
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	dir := str(in.Path)
	if dir == "" {
		dir = cwd
	}
	switch tool {
	case "Read":
		if f := str(in.FilePath); f != "" {
			paths = append(paths, f)
		}
	case "Grep":
		if dir != "" {
			paths = append(paths, dir)
			if g := str(in.Glob); g != "" {
				globs = append(globs, strings.TrimSuffix(dir, "/")+"/**/"+g)
			}
		}
	case "Glob":
		if pat := str(in.Pattern); pat != "" {
			if !filepath.IsAbs(pat) && dir != "" {
				pat = strings.TrimSuffix(dir, "/") + "/" + pat
			}
			globs = append(globs, pat)
		}
	}
	return paths, globs
}

// decided reports whether warden decides Claude Code's built-in tool.
func decided(tool string) bool {
	switch tool {
	case "Bash", "Write", "Edit", "MultiEdit", "NotebookEdit":
		return true
	}
	return false
}

// mcpTool splits Claude Code's name for an MCP tool, mcp__SERVER__TOOL.
// The server name ends at the first "__" after the prefix; the tool name
// is the rest.
func mcpTool(name string) (server, tool string, ok bool) {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return "", "", false
	}
	server, tool, ok = strings.Cut(rest, "__")
	if !ok || server == "" || tool == "" {
		return "", "", false
	}
	return server, tool, true
}

// absPath makes tool's path absolute against cwd; a relative path
// without a cwd cannot be placed, so it is refused (malformed). It is
// not cleaned: "link/../x" is where the kernel goes through link, which
// only the gate's resolution (following symlinks) knows.
func absPath(tool, path, cwd string) (string, error) {
	if filepath.IsAbs(path) {
		return path, nil
	}
	if cwd == "" {
		return "", fmt.Errorf("%w: %s: path %q is relative and there is no cwd", ErrMalformed, tool, path)
	}
	return strings.TrimSuffix(cwd, "/") + "/" + path, nil
}

// objectArgs returns tool's tool_input, which must be a JSON object:
// an MCP call's arguments, or what decodeArgs reads a built-in tool's
// fields from.
func objectArgs(tool string, input json.RawMessage) ([]byte, error) {
	args := bytes.TrimSpace(input)
	if len(args) == 0 || args[0] != '{' {
		return nil, fmt.Errorf("%w: %s: tool_input is not a JSON object", ErrMalformed, tool)
	}
	return args, nil
}

// decodeArgs reads the fields in holds from tool's arguments.
func decodeArgs(tool string, args []byte, in any) error {
	if err := json.Unmarshal(args, in); err != nil {
		return fmt.Errorf("%w: %s: tool_input: %w", ErrMalformed, tool, err)
	}
	return nil
}

// readPreToolUse decodes a PreToolUse payload of Claude Code's shape
// (Claude Code's, and Codex's, which adds fields warden does not read)
// and checks its base fields.
func readPreToolUse(payload []byte, protocol string) (ccPayload, error) {
	var p ccPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return p, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return p, checkBase(protocol, preToolUse, p.HookEventName, p.SessionID, p.ToolName, p.Cwd)
}

// checkBase refuses a payload of another event than want, or without a
// session id or tool name, or with a relative cwd: the fields every
// agent's hook payload carries.
func checkBase(protocol, want, event, session, tool, cwd string) error {
	switch {
	case event != want:
		return fmt.Errorf("%w: hook_event_name %q: warden hook %s answers %s only", ErrMalformed, event, protocol, want)
	case session == "":
		return fmt.Errorf("%w: no session_id", ErrMalformed)
	case tool == "":
		return fmt.Errorf("%w: no tool_name", ErrMalformed)
	case cwd != "" && !filepath.IsAbs(cwd):
		return fmt.Errorf("%w: cwd %q is not absolute", ErrMalformed, cwd)
	}
	return nil
}

// validate checks the mapped action; an invalid one is malformed input.
func validate(c Call) error {
	if err := c.Action.Validate(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrMalformed, c.Tool, err)
	}
	return nil
}

// ccOutput is Claude Code's PreToolUse hook output.
type ccOutput struct {
	HookSpecificOutput ccDecision `json:"hookSpecificOutput"`
}

type ccDecision struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
}

// Render implements Protocol. Allow, deny and ask are JSON on stdout
// with exit status 0; Pass prints nothing; a deny warden could not
// decide (rule "error") exits 2 with the reason on stderr, so it blocks
// even if Claude Code cannot read stdout.
func (ClaudeCode) Render(a Answer) Response {
	switch a.Verdict {
	case Pass:
		return Response{}
	case Allow, Ask:
	case Deny:
		if a.Rule == "error" {
			return Response{Stderr: a.Reason + "\n", Exit: 2}
		}
	default:
		return Response{Stderr: fmt.Sprintf("warden blocked this action: no verdict (%q). Do not retry it.\n", a.Verdict), Exit: 2}
	}
	out, err := json.Marshal(ccOutput{HookSpecificOutput: ccDecision{
		HookEventName: preToolUse, PermissionDecision: string(a.Verdict), PermissionDecisionReason: ccReason(a),
	}})
	if err != nil { // cannot happen for strings; fail closed anyway
		return Response{Stderr: "warden blocked this action: " + err.Error() + "\n", Exit: 2}
	}
	return Response{Stdout: append(out, '\n')}
}

// ccReason is the permissionDecisionReason: for allow and ask Claude
// Code shows it to the user, for deny to the model.
func ccReason(a Answer) string {
	switch a.Verdict {
	case Allow:
		if a.RequestID != "" {
			return "warden: approved on the console (request " + a.RequestID + ")"
		}
		return "warden: allowed (" + a.Rule + ")"
	case Ask:
		return "warden: needs your approval — " + a.Reason
	}
	return a.Reason
}
