package hook

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wardenhq/warden/internal/action"
)

// CodexAgent is the agent name of Codex's calls: its owner is
// external:codex/SESSION_ID.
const CodexAgent = "codex"

// Codex is the Codex CLI's PreToolUse command hook protocol. Its input
// is Claude Code's shape (session_id, turn_id, transcript_path, cwd,
// hook_event_name, model, permission_mode, tool_name, tool_input,
// tool_use_id); tools map to actions as follows:
//
//	Bash                 shell: tool_input.command, in cwd
//	apply_patch          a write of every file the patch in
//	                     tool_input.command adds, updates, moves to or
//	                     deletes (paths relative to cwd)
//	mcp__SERVER__TOOL    mcp: SERVER, TOOL, args = tool_input
//	anything else        no decision
//
// Codex's PreToolUse honours one decision only, deny: it reads allow
// and ask as a hook failure and goes on with its own approval policy.
// So warden answers deny as
//
//	{"hookSpecificOutput":{"hookEventName":"PreToolUse",
//	  "permissionDecision":"deny","permissionDecisionReason":"…"}}
//
// and everything else with no output (Codex's own approval policy
// applies). An ask — a call that needs a human when no host runs to ask
// one — cannot be put to Codex's user through its hook, so it is a deny
// that tells the user to start the host (fail closed). Input warden
// cannot read, and any failure to decide, exit 2 with the reason on
// stderr, which Codex treats as a block.
type Codex struct{}

// Guarded implements Guarded: Codex has an approval policy of its own.
func (Codex) Guarded() {}

// Parse implements Protocol.
func (Codex) Parse(payload []byte) (Call, error) {
	p, err := readPreToolUse(payload, "codex")
	if err != nil {
		return Call{}, err
	}
	c := Call{Agent: CodexAgent, Session: p.SessionID, Tool: p.ToolName}
	server, tool, isMCP := mcpTool(p.ToolName)
	if !isMCP && p.ToolName != "Bash" && p.ToolName != "apply_patch" {
		c.Pass = true
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
	var in struct {
		Command *string `json:"command"`
	}
	if err := decodeArgs(p.ToolName, args, &in); err != nil {
		return Call{}, err
	}
	if in.Command == nil {
		return Call{}, fmt.Errorf("%w: %s: no tool_input.command", ErrMalformed, p.ToolName)
	}
	if p.ToolName == "Bash" {
		c.Action = action.NewShell(*in.Command).In(p.Cwd)
		return c, validate(c)
	}
	paths, err := patchPaths(*in.Command)
	if err != nil {
		return Call{}, fmt.Errorf("%w: apply_patch: %w", ErrMalformed, err)
	}
	for i, path := range paths {
		abs, err := absPath(p.ToolName, path, p.Cwd)
		if err != nil {
			return Call{}, err
		}
		act := action.NewWrite(abs, 0).In(p.Cwd)
		if i == 0 {
			c.Action = act
		} else {
			c.Extra = append(c.Extra, act)
		}
		one := c
		one.Action = act
		if err := validate(one); err != nil {
			return Call{}, err
		}
	}
	return c, nil
}

// maxPatchFiles bounds the files of one patch warden decides; a patch
// touching more is refused rather than put to a human file by file.
const maxPatchFiles = 64

// patchPaths returns the files a Codex patch writes, in order, each
// once: those it adds, updates, moves to, or deletes. A patch without
// its envelope, or naming no file, is refused: what warden cannot read
// it does not pass.
func patchPaths(patch string) ([]string, error) {
	lines := strings.Split(strings.ReplaceAll(patch, "\r\n", "\n"), "\n")
	var begin, end bool
	var out []string
	seen := map[string]bool{}
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		switch {
		case l == "*** Begin Patch":
			begin = true
			continue
		case l == "*** End Patch":
			end = true
			continue
		}
		for _, marker := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if rest, ok := strings.CutPrefix(l, marker); ok {
				path := strings.TrimSpace(rest)
				if path == "" {
					return nil, fmt.Errorf("%q names no file", strings.TrimSpace(marker))
				}
				if !seen[path] {
					seen[path] = true
					out = append(out, path)
				}
			}
		}
	}
	switch {
	case !begin || !end:
		return nil, fmt.Errorf("not a patch (no *** Begin Patch … *** End Patch)")
	case len(out) == 0:
		return nil, fmt.Errorf("the patch names no file")
	case len(out) > maxPatchFiles:
		return nil, fmt.Errorf("the patch touches %d files (at most %d are decided)", len(out), maxPatchFiles)
	}
	return out, nil
}

// Render implements Protocol.
func (Codex) Render(a Answer) Response {
	switch a.Verdict {
	case Pass, Allow:
		// Codex reads an allow as a failed hook; no output lets its own
		// approval policy decide.
		return Response{}
	case Ask:
		return denyJSON(noAsk("Codex", a))
	case Deny:
		if a.Rule == "error" {
			return Response{Stderr: a.Reason + "\n", Exit: 2}
		}
		return denyJSON(a.Reason)
	}
	return Response{Stderr: fmt.Sprintf("warden blocked this action: no verdict (%q). Do not retry it.\n", a.Verdict), Exit: 2}
}

// denyJSON is a PreToolUse deny in the shape Claude Code and Codex read.
func denyJSON(reason string) Response {
	out, err := json.Marshal(ccOutput{HookSpecificOutput: ccDecision{
		HookEventName: preToolUse, PermissionDecision: string(Deny), PermissionDecisionReason: reason,
	}})
	if err != nil { // cannot happen for strings; fail closed anyway
		return Response{Stderr: "warden blocked this action: " + err.Error() + "\n", Exit: 2}
	}
	return Response{Stdout: append(out, '\n')}
}

// noAsk is the deny reason for an ask an agent's hook cannot put to its
// user: nobody can answer, so it is blocked (invariant 9), and the
// reason says how to get the question asked.
func noAsk(agent string, a Answer) string {
	what := strings.TrimSpace(a.Reason)
	if what == "" {
		what = "this action"
	}
	return "warden blocked this: it needs a human's approval (" + what + "), and " + agent +
		"'s hooks cannot ask one. Do not retry it or variations of it. Tell the user: run `warden serve` so warden can ask on its console, then try again."
}
