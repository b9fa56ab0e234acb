// Package action describes what an agent wants to do: run a shell
// command, run code, write a file, call an MCP tool, or take a plugin
// action. An Action is a plain value with no behaviour beyond
// description and validation; the gate decides on it and the tools carry
// it out. The package depends on nothing but the standard library so
// every layer can import it.
package action

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by Validate errors. The gate denies an invalid
// action rather than guessing what it meant.
var ErrInvalid = errors.New("invalid action")

// Kind is what sort of action it is.
type Kind string

// Kinds of action.
const (
	// Shell runs Command in a shell.
	Shell Kind = "shell"
	// Code runs Source in Language's interpreter.
	Code Kind = "code"
	// Write writes to the file at Path.
	Write Kind = "write"
	// MCP calls Tool on MCP Server with Args.
	MCP Kind = "mcp"
	// Plugin is a plugin asking for approval of its own action.
	Plugin Kind = "plugin"
)

// Valid reports whether k is one of the documented kinds.
func (k Kind) Valid() bool {
	switch k {
	case Shell, Code, Write, MCP, Plugin:
		return true
	}
	return false
}

// Local is the backend name for running on the host itself. An empty
// Backend means Local too, so an action that forgot to say where it runs
// is never treated as isolated.
const Local = "local"

// Action is one thing an agent wants to do. Only the fields of its Kind
// are meaningful; the constructors set exactly those.
type Action struct {
	// Kind says which of the fields below apply.
	Kind Kind `json:"kind"`
	// Dir is the working directory the action runs in, if any.
	Dir string `json:"dir,omitempty"`
	// Backend is where the action runs: "" or Local for the host, or the
	// name of an isolated backend ("docker", "ssh", …). Only an
	// explicitly named isolated backend counts as the boundary that lets
	// the gate skip asking.
	Backend string `json:"backend,omitempty"`

	// Command is the shell command line (Shell).
	Command string `json:"command,omitempty"`

	// Language names the interpreter ("python", "node", "bash"…) and
	// Source is the program text (Code).
	Language string `json:"language,omitempty"`
	Source   string `json:"source,omitempty"`

	// Path is the file written (Write). Size is the content length in
	// bytes when the tool knows it, else 0; it is shown to humans and
	// never decides anything.
	Path string `json:"path,omitempty"`
	Size int64  `json:"size,omitempty"`

	// Server and Tool name the MCP tool, Args are its arguments as a JSON
	// object, and ReadOnly is the server's read-only hint (MCP). The hint
	// comes from the server, so it can relax a default but never a rule.
	Server   string          `json:"server,omitempty"`
	Tool     string          `json:"tool,omitempty"`
	Args     json.RawMessage `json:"args,omitempty"`
	ReadOnly bool            `json:"read_only,omitempty"`

	// Plugin names the plugin, RuleKey the plugin's rule that asked
	// (grants are recorded per rule key), and Reason the plugin's
	// explanation for a human (Plugin).
	Plugin  string `json:"plugin,omitempty"`
	RuleKey string `json:"rule_key,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// NewShell returns a shell action for command.
func NewShell(command string) Action { return Action{Kind: Shell, Command: command} }

// NewCode returns a code action running source in language.
func NewCode(language, source string) Action {
	return Action{Kind: Code, Language: language, Source: source}
}

// NewWrite returns a write action for path; size is the content length
// if known, else 0.
func NewWrite(path string, size int64) Action { return Action{Kind: Write, Path: path, Size: size} }

// NewMCP returns an MCP tool call. args is copied, so the caller may
// reuse its buffer.
func NewMCP(server, tool string, args json.RawMessage, readOnly bool) Action {
	return Action{Kind: MCP, Server: server, Tool: tool, Args: bytes.Clone(args), ReadOnly: readOnly}
}

// NewPlugin returns a plugin's request for approval.
func NewPlugin(name, ruleKey, reason string) Action {
	return Action{Kind: Plugin, Plugin: name, RuleKey: ruleKey, Reason: reason}
}

// In returns a copy of a running in dir.
func (a Action) In(dir string) Action { a.Dir = dir; return a }

// On returns a copy of a running on backend.
func (a Action) On(backend string) Action { a.Backend = backend; return a }

// Isolated reports whether a runs on a named backend other than the
// host. An empty backend is local: isolation must be stated, not
// assumed.
func (a Action) Isolated() bool { return a.Backend != "" && a.Backend != Local }

// Validate reports what is missing or malformed: an unknown kind, an
// empty required field, MCP arguments that are not a JSON object, or a
// backend name outside [a-z0-9._-]. Errors wrap ErrInvalid.
func (a Action) Validate() error {
	var errs []error
	req := func(field, v string) {
		if v == "" {
			errs = append(errs, fmt.Errorf("%s action needs %s: %w", a.Kind, field, ErrInvalid))
		}
	}
	switch a.Kind {
	case Shell:
		req("a command", a.Command)
	case Code:
		req("a language", a.Language)
		req("source", a.Source)
	case Write:
		req("a path", a.Path)
		if a.Size < 0 {
			errs = append(errs, fmt.Errorf("write action has negative size %d: %w", a.Size, ErrInvalid))
		}
	case MCP:
		req("a server", a.Server)
		req("a tool", a.Tool)
		if len(a.Args) > 0 {
			trimmed := bytes.TrimSpace(a.Args)
			if !json.Valid(trimmed) || len(trimmed) == 0 || (trimmed[0] != '{' && !bytes.Equal(trimmed, []byte("null"))) {
				errs = append(errs, fmt.Errorf("mcp action args are not a JSON object: %w", ErrInvalid))
			}
		}
	case Plugin:
		req("a plugin name", a.Plugin)
	default:
		errs = append(errs, fmt.Errorf("unknown action kind %q: %w", a.Kind, ErrInvalid))
	}
	if !validBackend(a.Backend) {
		errs = append(errs, fmt.Errorf("backend %q: want lower-case letters, digits, '.', '_' or '-': %w", a.Backend, ErrInvalid))
	}
	return errors.Join(errs...)
}

func validBackend(s string) bool {
	if len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Payload returns the text that identifies what a does, for display and
// as input to hashing:
//
//	shell    the command
//	code     the source
//	write    the path
//	mcp      "server/tool" and, if there are arguments, a space and the
//	         compacted JSON arguments
//	plugin   "name/rule_key", or "name" without a rule key
//
// Payload alone does not say which kind it came from (a shell command and
// a bash script can read the same); hash Digest for identity.
func (a Action) Payload() string {
	switch a.Kind {
	case Shell:
		return a.Command
	case Code:
		return a.Source
	case Write:
		return a.Path
	case MCP:
		s := a.Server + "/" + a.Tool
		if len(a.Args) > 0 {
			var b bytes.Buffer
			if err := json.Compact(&b, a.Args); err != nil {
				return s + " " + string(a.Args)
			}
			s += " " + b.String()
		}
		return s
	case Plugin:
		if a.RuleKey == "" {
			return a.Plugin
		}
		return a.Plugin + "/" + a.RuleKey
	}
	return ""
}

// Digest returns a hex SHA-256 that identifies what a does: its kind and
// the fields of that kind that say what runs (command; language and
// source; path; server, tool and compacted arguments; plugin and rule
// key). Dir, Backend, Size, ReadOnly and Reason are left out, since they
// describe where or why, not what. Each field is length-prefixed, so no
// two different actions share an encoding.
func (a Action) Digest() string {
	var parts []string
	switch a.Kind {
	case Shell:
		parts = []string{a.Command}
	case Code:
		parts = []string{a.Language, a.Source}
	case Write:
		parts = []string{a.Path}
	case MCP:
		args := a.Args
		var b bytes.Buffer
		if json.Compact(&b, a.Args) == nil {
			args = b.Bytes()
		}
		parts = []string{a.Server, a.Tool, string(args)}
	case Plugin:
		parts = []string{a.Plugin, a.RuleKey}
	}
	h := sha256.New()
	for _, part := range append([]string{string(a.Kind)}, parts...) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	return hex.EncodeToString(h.Sum(nil))
}
