// Package hookconf reads and edits other agents' hook settings — Claude
// Code's settings.json, Codex's hooks.json, Gemini CLI's settings.json —
// so that warden hook runs before their tool calls: warden hook install
// and warden hook doctor. All three files share one shape:
//
//	{"hooks": {"EVENT": [{"matcher": "REGEX",
//	   "hooks": [{"type": "command", "command": "…", "timeout": N}]}]}}
//
// An edit keeps everything else in the file as it was (other keys in
// their order, the user's other hooks), refuses a file that is not a
// JSON object, is idempotent (installing twice changes nothing the
// second time), and keeps a backup of the file it replaces.
package hookconf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"mvdan.cc/sh/v3/shell"

	"github.com/wardenhq/warden/internal/backup"
)

// Scope says which of an agent's settings files is meant.
type Scope string

// Scopes.
const (
	// User is the file in the user's home directory (every project).
	User Scope = "user"
	// Project is the file in a project directory.
	Project Scope = "project"
)

// Agent describes where one agent keeps its hooks and how warden is
// wired into them.
type Agent struct {
	// Name is the agent's name and warden hook's protocol argument
	// ("claude-code").
	Name string
	// Title is the agent's name for people ("Claude Code").
	Title string
	// Event is the hook event warden answers ("PreToolUse").
	Event string
	// Matcher is the tool-name regex of warden's entry.
	Matcher string
	// Millis says the timeout is in milliseconds (Gemini CLI), not
	// seconds.
	Millis bool
	// user and project are the settings file, relative to the home or
	// project directory.
	user, project string
}

// Agents are the agents warden installs into, by Name.
var Agents = map[string]Agent{
	"claude-code": {
		Name: "claude-code", Title: "Claude Code", Event: "PreToolUse",
		Matcher: "Bash|Write|Edit|MultiEdit|NotebookEdit|Read|Grep|Glob|mcp__.*",
		user:    ".claude/settings.json", project: ".claude/settings.json",
	},
	"codex": {
		Name: "codex", Title: "Codex", Event: "PreToolUse",
		Matcher: "Bash|apply_patch|mcp__.*",
		user:    ".codex/hooks.json", project: ".codex/hooks.json",
	},
	"gemini": {
		Name: "gemini", Title: "Gemini CLI", Event: "BeforeTool",
		// Every tool: warden answers {} for those it does not judge, and
		// MCP tool names have changed form between releases.
		Matcher: ".*", Millis: true,
		user: ".gemini/settings.json", project: ".gemini/settings.json",
	},
}

// Path returns the agent's settings file for scope: under home for
// User, under dir for Project.
func (a Agent) Path(scope Scope, home, dir string) (string, error) {
	switch scope {
	case User:
		if home == "" {
			return "", errors.New("no home directory")
		}
		return filepath.Join(home, a.user), nil
	case Project:
		if dir == "" {
			return "", errors.New("no project directory")
		}
		return filepath.Join(dir, a.project), nil
	}
	return "", fmt.Errorf("unknown scope %q (user or project)", scope)
}

// Entry is warden's hook entry: the command that runs warden hook and
// how long the agent lets it run.
type Entry struct {
	Command string
	// Timeout is how long the agent waits for the hook; it must outlast
	// approvals.timeout, so that warden, not the agent, ends a wait for
	// the console.
	Timeout time.Duration
}

// group renders e as the agent's hook group.
func (a Agent) group(e Entry) map[string]any {
	timeout := int64(e.Timeout / time.Second)
	if a.Millis {
		timeout = e.Timeout.Milliseconds()
	}
	h := map[string]any{"type": "command", "command": e.Command, "timeout": timeout}
	if a.Millis {
		h["name"] = "warden"
	}
	return map[string]any{"matcher": a.Matcher, "hooks": []any{h}}
}

// IsWarden reports whether a hook command runs warden hook for this
// agent: its first word names a program called warden (any directory),
// and "hook NAME" follows.
func (a Agent) IsWarden(command string) bool {
	f, err := shell.Fields(command, func(string) string { return "" })
	if err != nil || len(f) < 3 {
		return false
	}
	prog := f[0]
	if base := filepath.Base(prog); base != "warden" && !strings.HasPrefix(base, "warden-") && !strings.HasPrefix(base, "warden.") {
		return false
	}
	for i := 1; i+1 < len(f); i++ {
		if f[i] == "hook" && f[i+1] == a.Name {
			return true
		}
	}
	return false
}

// ErrNotObject: the settings file is not a JSON object; warden does not
// touch it.
var ErrNotObject = errors.New("not a JSON object")

// Found is warden's entry as a settings file holds it.
type Found struct {
	// Path is the file; Exists is false when there is none.
	Path   string
	Exists bool
	// Matcher, Command and Timeout are warden's entry (Command "" when
	// there is none). Timeout is as written (seconds, or milliseconds
	// for Gemini CLI).
	Matcher string
	Command string
	Timeout float64
	// Entries is how many warden entries the file holds for the event.
	Entries int
}

// Find reads path and returns warden's entry for a.
func (a Agent) Find(path string) (Found, error) {
	f := Found{Path: path}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f, nil
	case err != nil:
		return f, err
	}
	f.Exists = true
	var doc struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string  `json:"type"`
				Command string  `json:"command"`
				Timeout float64 `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return f, fmt.Errorf("%s: %w", path, err)
	}
	for _, g := range doc.Hooks[a.Event] {
		for _, h := range g.Hooks {
			if h.Type == "command" && a.IsWarden(h.Command) {
				if f.Entries == 0 {
					f.Matcher, f.Command, f.Timeout = g.Matcher, h.Command, h.Timeout
				}
				f.Entries++
			}
		}
	}
	return f, nil
}

// Result says what Install did.
type Result struct {
	// Changed is false when the file already held exactly this entry:
	// nothing was written.
	Changed bool
	// Backup is the copy of the file as it was before, "" when there
	// was no file (or nothing changed).
	Backup string
}

// Install puts warden's entry into the agent's settings file at path:
// it replaces warden's earlier entries for the event (whatever their
// command), keeps the user's other hooks and keys, and writes the file
// only when it changes, with a backup of the old one beside it.
func (a Agent) Install(path string, e Entry, now time.Time) (Result, error) {
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		old = nil
	case err != nil:
		return Result{}, err
	}
	out, changed, err := a.merge(old, e)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", path, err)
	}
	if !changed {
		return Result{}, nil
	}
	saved, err := backup.Replace(path, out, 0o644, now)
	if err != nil {
		return Result{}, err
	}
	return Result{Changed: true, Backup: saved}, nil
}

// merge returns the settings text with warden's entry in place, and
// whether it differs from old.
func (a Agent) merge(old []byte, e Entry) ([]byte, bool, error) {
	var root object
	if len(bytes.TrimSpace(old)) > 0 {
		if err := root.UnmarshalJSON(old); err != nil {
			return nil, false, err
		}
	}
	var hooks object
	if raw, ok := root.get("hooks"); ok {
		if err := hooks.UnmarshalJSON(raw); err != nil {
			return nil, false, fmt.Errorf("hooks: %w", err)
		}
	}
	var groups []json.RawMessage
	if raw, ok := hooks.get(a.Event); ok {
		if err := json.Unmarshal(raw, &groups); err != nil {
			return nil, false, fmt.Errorf("hooks.%s: want a list of hook groups: %w", a.Event, err)
		}
	}
	want, err := json.Marshal(a.group(e))
	if err != nil {
		return nil, false, err
	}
	var wantV any
	_ = json.Unmarshal(want, &wantV)

	// Untouched groups stay as the user wrote them (raw); only groups
	// holding warden's hook are rewritten.
	var kept []json.RawMessage
	placed, same, dirty := false, false, false
	for _, raw := range groups {
		var g map[string]any
		if json.Unmarshal(raw, &g) != nil {
			kept = append(kept, raw) // not a group warden reads; leave it
			continue
		}
		hs, _ := g["hooks"].([]any)
		var others []any
		mine := 0
		for _, h := range hs {
			if m, ok := h.(map[string]any); ok && m["type"] == "command" {
				if cmd, _ := m["command"].(string); a.IsWarden(cmd) {
					mine++
					continue
				}
			}
			others = append(others, h)
		}
		switch {
		case mine == 0:
			kept = append(kept, raw)
		case len(others) > 0:
			// The user put warden in a group with hooks of their own:
			// keep theirs there, warden gets a group of its own.
			g["hooks"] = others
			dirty = true
			b, err := json.Marshal(g)
			if err != nil {
				return nil, false, err
			}
			kept = append(kept, b)
		case !placed:
			placed = true
			var v any
			_ = json.Unmarshal(raw, &v)
			same = reflect.DeepEqual(v, wantV)
			kept = append(kept, want)
		default:
			dirty = true // a second warden group: dropped
		}
	}
	if !placed {
		kept = append(kept, want)
	}
	if placed && same && !dirty {
		return old, false, nil
	}
	gb, err := json.Marshal(kept)
	if err != nil {
		return nil, false, err
	}
	hooks.set(a.Event, gb)
	hb, err := hooks.MarshalJSON()
	if err != nil {
		return nil, false, err
	}
	root.set("hooks", hb)
	rb, err := root.MarshalJSON()
	if err != nil {
		return nil, false, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, rb, "", "  "); err != nil {
		return nil, false, err
	}
	out.WriteByte('\n')
	return out.Bytes(), true, nil
}
