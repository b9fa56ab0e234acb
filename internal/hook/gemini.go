package hook

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/internal/action"
)

// GeminiAgent is the agent name of Gemini CLI's calls: its owner is
// external:gemini-cli/SESSION_ID.
const GeminiAgent = "gemini-cli"

// beforeTool is the Gemini CLI event warden answers.
const beforeTool = "BeforeTool"

// Gemini is Gemini CLI's BeforeTool command hook protocol: a JSON
// payload on stdin (session_id, transcript_path, cwd, hook_event_name,
// timestamp, tool_name, tool_input, mcp_context), and on stdout
//
//	{"decision":"allow|deny","reason":"…"}
//
// with exit status 0. Tools map to actions as follows:
//
//	run_shell_command            shell: tool_input.command, in
//	                             tool_input.dir_path (relative to cwd) or cwd
//	write_file, replace          write: tool_input.file_path
//	read_file                    a read of tool_input.file_path
//	read_many_files              reads of the tool_input.include patterns
//	grep_search (search_file_content)  a read of the directory searched
//	glob                         a read of the pattern
//	MCP tools                    mcp: mcp_context.server_name and
//	                             tool_name (or mcp__SERVER__TOOL), args =
//	                             tool_input
//	anything else                no decision
//
// No decision is "{}": Gemini CLI applies its own confirmation. Gemini
// CLI's hooks have no ask, so an ask — a call that needs a human when no
// host runs to ask one, or a read of a secret — is a deny whose reason
// says so (fail closed). Input warden cannot read, and any failure to
// decide, exit 2 with the reason on stderr, which Gemini CLI treats as
// a block.
type Gemini struct{}

// Guarded implements Guarded: Gemini CLI confirms tool calls itself.
func (Gemini) Guarded() {}

type geminiPayload struct {
	SessionID     string          `json:"session_id"`
	Cwd           string          `json:"cwd"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	MCPContext    *struct {
		ServerName string `json:"server_name"`
		ToolName   string `json:"tool_name"`
	} `json:"mcp_context"`
}

// geminiInput holds the tool_input fields warden reads.
type geminiInput struct {
	Command  *string  `json:"command"`
	DirPath  *string  `json:"dir_path"`
	Dir      *string  `json:"directory"` // older name of dir_path
	FilePath *string  `json:"file_path"`
	AbsPath  *string  `json:"absolute_path"` // older name of file_path
	Path     *string  `json:"path"`
	Pattern  *string  `json:"pattern"`
	Include  any      `json:"include"` // a glob (grep) or a list (read_many_files)
	Paths    []string `json:"paths"`
	Content  *string  `json:"content"`
}

// Parse implements Protocol.
func (Gemini) Parse(payload []byte) (Call, error) {
	var p geminiPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return Call{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if err := checkBase("gemini", beforeTool, p.HookEventName, p.SessionID, p.ToolName, p.Cwd); err != nil {
		return Call{}, err
	}
	c := Call{Agent: GeminiAgent, Session: p.SessionID, Tool: p.ToolName, Dir: p.Cwd}
	args, err := objectArgs(p.ToolName, p.ToolInput)
	if err != nil {
		return Call{}, err
	}
	if server, tool, ok := geminiMCP(p); ok {
		c.Action = action.NewMCP(server, tool, args, false).In(p.Cwd)
		return c, validate(c)
	}
	var in geminiInput
	if err := decodeArgs(p.ToolName, args, &in); err != nil {
		return Call{}, err
	}
	str := firstSet
	switch p.ToolName {
	case "run_shell_command":
		if in.Command == nil {
			return Call{}, fmt.Errorf("%w: %s: no tool_input.command", ErrMalformed, p.ToolName)
		}
		dir := p.Cwd
		if d := str(in.DirPath, in.Dir); d != "" {
			abs, err := absPath(p.ToolName, d, p.Cwd)
			if err != nil {
				return Call{}, err
			}
			dir = abs
		}
		c.Action = action.NewShell(*in.Command).In(dir)
	case "write_file", "replace":
		path := str(in.FilePath, in.AbsPath)
		if path == "" {
			return Call{}, fmt.Errorf("%w: %s: no tool_input.file_path", ErrMalformed, p.ToolName)
		}
		abs, err := absPath(p.ToolName, path, p.Cwd)
		if err != nil {
			return Call{}, err
		}
		var size int64
		if p.ToolName == "write_file" && in.Content != nil {
			size = int64(len(*in.Content))
		}
		c.Action = action.NewWrite(abs, size).In(p.Cwd)
	default:
		c.Pass = true
		c.Reads, c.ReadGlobs = geminiReads(p.ToolName, in, p.Cwd)
		return c, nil
	}
	return c, validate(c)
}

// geminiMCP names an MCP tool call: from mcp_context when Gemini CLI
// sent it, else from the mcp__SERVER__TOOL name.
func geminiMCP(p geminiPayload) (server, tool string, ok bool) {
	if m := p.MCPContext; m != nil && m.ServerName != "" {
		tool := m.ToolName
		if tool == "" {
			tool = p.ToolName
		}
		return m.ServerName, tool, true
	}
	return mcpTool(p.ToolName)
}

// geminiReads returns what Gemini CLI's reading tools read, as
// readsOf does for Claude Code's.
func geminiReads(tool string, in geminiInput, cwd string) (paths, globs []string) {
	str := firstSet
	dir := str(in.DirPath, in.Path, in.Dir)
	if dir == "" {
		dir = cwd
	}
	join := func(pat string) string {
		if filepath.IsAbs(pat) || dir == "" {
			return pat
		}
		return strings.TrimSuffix(dir, "/") + "/" + pat
	}
	switch tool {
	case "read_file":
		if f := str(in.FilePath, in.AbsPath, in.Path); f != "" {
			paths = append(paths, f)
		}
	case "read_many_files":
		var pats []string
		switch v := in.Include.(type) {
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok && s != "" {
					pats = append(pats, s)
				}
			}
		case string:
			pats = append(pats, v)
		}
		pats = append(pats, in.Paths...)
		for _, pat := range pats {
			globs = append(globs, join(pat))
		}
	case "grep_search", "search_file_content":
		if dir != "" {
			paths = append(paths, dir)
			if g, ok := in.Include.(string); ok && g != "" {
				globs = append(globs, strings.TrimSuffix(dir, "/")+"/**/"+g)
			}
		}
	case "glob":
		if pat := str(in.Pattern); pat != "" {
			globs = append(globs, join(pat))
		}
	}
	return paths, globs
}

// firstSet returns the first of ps that is set and not empty.
func firstSet(ps ...*string) string {
	for _, p := range ps {
		if p != nil && *p != "" {
			return *p
		}
	}
	return ""
}

// geminiOutput is Gemini CLI's hook output.
type geminiOutput struct {
	Decision string `json:"decision,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// Render implements Protocol.
func (Gemini) Render(a Answer) Response {
	var out geminiOutput
	switch a.Verdict {
	case Pass:
	case Allow:
		out = geminiOutput{Decision: string(Allow), Reason: ccReason(a)}
	case Ask:
		out = geminiOutput{Decision: string(Deny), Reason: noAsk("Gemini CLI", a)}
	case Deny:
		if a.Rule == "error" {
			return Response{Stderr: a.Reason + "\n", Exit: 2}
		}
		out = geminiOutput{Decision: string(Deny), Reason: a.Reason}
	default:
		return Response{Stderr: fmt.Sprintf("warden blocked this action: no verdict (%q). Do not retry it.\n", a.Verdict), Exit: 2}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return Response{Stderr: "warden blocked this action: " + err.Error() + "\n", Exit: 2}
	}
	return Response{Stdout: append(b, '\n')}
}
