// Package ccperm reads Claude Code's permission rules (the
// permissions.allow, deny and ask lists of a settings.json) and
// translates what warden can express into warden's config:
// command_allowlist entries, approvals.deny globs and mcp.rules. Every
// rule gets a note saying what it became, or why it was not translated:
// nothing is dropped silently. warden import claude-code is its front
// end.
//
// Claude Code's rule syntax: Tool or Tool(specifier). Bash specifiers
// are a command, "prefix:*" (the prefix, alone or followed by
// arguments), or a pattern where * matches any characters (a single
// trailing " *" also matches nothing: "ls *" covers "ls"). Read and Edit
// specifiers are gitignore-style paths: "//abs" absolute, "~/p" in the
// home directory, "/p" relative to the project root (the directory of
// .claude/), "p/q" or "./p" relative to the working directory, and a
// bare name at any depth. MCP tools are mcp__SERVER, mcp__SERVER__* or
// mcp__SERVER__TOOL.
package ccperm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/policy"
)

// List is the permissions list a rule came from.
type List string

// Lists, in the order Claude Code applies them.
const (
	Deny  List = "deny"
	Ask   List = "ask"
	Allow List = "allow"
)

// Rule is one Claude Code permission rule.
type Rule struct {
	List List
	// Text is the rule as written; Tool and Spec its parts (Spec is ""
	// for a bare tool name, and HasSpec false).
	Text, Tool, Spec string
	HasSpec          bool
}

// ErrSettings: the file is not a Claude Code settings object.
var ErrSettings = errors.New("not a Claude Code settings file")

// Parse reads the rules of a settings.json: permissions.deny, ask and
// allow, in that order. A rule that is not a string, or not Tool or
// Tool(specifier), is an error: a settings file warden cannot read
// whole is not translated in part.
func Parse(settings []byte) ([]Rule, error) {
	var doc struct {
		Permissions *struct {
			Allow []json.RawMessage `json:"allow"`
			Deny  []json.RawMessage `json:"deny"`
			Ask   []json.RawMessage `json:"ask"`
		} `json:"permissions"`
	}
	dec := json.NewDecoder(bytes.NewReader(settings))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSettings, err)
	}
	if doc.Permissions == nil {
		return nil, nil
	}
	var out []Rule
	for _, l := range []struct {
		list  List
		items []json.RawMessage
	}{{Deny, doc.Permissions.Deny}, {Ask, doc.Permissions.Ask}, {Allow, doc.Permissions.Allow}} {
		for i, raw := range l.items {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, fmt.Errorf("%w: permissions.%s[%d] is not a string", ErrSettings, l.list, i)
			}
			r, err := parseRule(s)
			if err != nil {
				return nil, fmt.Errorf("%w: permissions.%s[%d]: %w", ErrSettings, l.list, i, err)
			}
			r.List = l.list
			out = append(out, r)
		}
	}
	return out, nil
}

// parseRule splits "Tool" or "Tool(specifier)".
func parseRule(s string) (Rule, error) {
	r := Rule{Text: s}
	open := strings.IndexByte(s, '(')
	if open < 0 {
		r.Tool = strings.TrimSpace(s)
	} else {
		if !strings.HasSuffix(s, ")") {
			return Rule{}, fmt.Errorf("%q: want Tool or Tool(specifier)", s)
		}
		r.Tool, r.Spec, r.HasSpec = strings.TrimSpace(s[:open]), s[open+1:len(s)-1], true
	}
	if r.Tool == "" || strings.ContainsAny(r.Tool, " ()") {
		return Rule{}, fmt.Errorf("%q: want Tool or Tool(specifier)", s)
	}
	return r, nil
}

// Env places Claude Code's relative paths.
type Env struct {
	// Home is the user's home directory (~).
	Home string
	// Project is the project root: the directory holding .claude/. Paths
	// Claude Code reads relative to its working directory are taken
	// relative to it.
	Project string
}

// MCPRule is one mcp.rules entry.
type MCPRule struct {
	Match  string `json:"match"`
	Action string `json:"action"`
}

// Note says what became of one rule.
type Note struct {
	Rule string `json:"rule"`
	List List   `json:"list"`
	// Became lists the config entries the rule turned into ("" when it
	// was not translated); Why says why not, or what to know.
	Became []string `json:"became,omitempty"`
	Why    string   `json:"why,omitempty"`
}

// Translated reports whether the rule became anything.
func (n Note) Translated() bool { return len(n.Became) > 0 }

// Result is a translation.
type Result struct {
	Allowlist []string  `json:"command_allowlist"`
	Deny      []string  `json:"deny"`
	MCPRules  []MCPRule `json:"mcp_rules"`
	Notes     []Note    `json:"notes"`
}

// Empty reports whether nothing was translated.
func (r Result) Empty() bool {
	return len(r.Allowlist)+len(r.Deny)+len(r.MCPRules) == 0
}

// Translate translates rules (deny first, then ask, then allow, as
// Claude Code applies them: mcp.rules are first-match).
func Translate(rules []Rule, env Env) Result {
	var res Result
	seenA, seenD, seenM := map[string]bool{}, map[string]bool{}, map[string]bool{}
	addA := func(n *Note, e string) {
		n.Became = append(n.Became, "command_allowlist: "+e)
		if !seenA[e] {
			seenA[e] = true
			res.Allowlist = append(res.Allowlist, e)
		}
	}
	addD := func(n *Note, g string) {
		if _, err := policy.CompileGlob(g); err != nil {
			n.Why = "not a glob warden reads: " + err.Error()
			return
		}
		n.Became = append(n.Became, "approvals.deny: "+g)
		if !seenD[g] {
			seenD[g] = true
			res.Deny = append(res.Deny, g)
		}
	}
	addM := func(n *Note, match string, l List) {
		n.Became = append(n.Became, "mcp.rules: "+match+" "+string(l))
		if !seenM[match] {
			// The first rule for a match wins, as in Claude Code (deny
			// before ask before allow).
			seenM[match] = true
			res.MCPRules = append(res.MCPRules, MCPRule{Match: match, Action: string(l)})
		}
	}
	for _, l := range []List{Deny, Ask, Allow} {
		for _, r := range rules {
			if r.List != l {
				continue
			}
			n := Note{Rule: r.Text, List: r.List}
			switch {
			case r.Tool == "Bash":
				bash(&n, r, addA, addD)
			case r.Tool == "Read" || r.Tool == "Edit" || r.Tool == "Write" || r.Tool == "MultiEdit" || r.Tool == "NotebookEdit":
				file(&n, r, env, addD)
			case strings.HasPrefix(r.Tool, "mcp__"):
				mcp(&n, r, addM)
			default:
				n.Why = "warden does not judge Claude Code's " + r.Tool + " tool"
			}
			res.Notes = append(res.Notes, n)
		}
	}
	return res
}

// bash translates a Bash rule.
func bash(n *Note, r Rule, addA, addD func(*Note, string)) {
	spec := strings.Join(strings.Fields(r.Spec), " ")
	if !r.HasSpec || spec == "" || strings.Trim(spec, "* :") == "" {
		switch r.List {
		case Allow:
			n.Why = "it allows every command; warden has no such grant (hardline and floors aside, every dangerous command would run unasked)"
		case Deny:
			n.Why = "it blocks every shell command; in warden that would block every owner's commands, not only Claude Code's: take Bash out of Claude Code's tools instead"
		default:
			n.Why = "warden asks by what a command does (its classes), not by tool"
		}
		return
	}
	// "prefix:*" is a prefix at a word boundary; so is one trailing " *".
	prefix, isPrefix := strings.CutSuffix(spec, ":*")
	if !isPrefix {
		if p, ok := strings.CutSuffix(spec, " *"); ok && !strings.Contains(p, "*") {
			prefix, isPrefix = p, true
		}
	}
	prefix = strings.TrimSpace(prefix)
	if r.List == Ask {
		n.Why = "warden asks by what a command does (its classes), not by rule; a command it rates safe runs unasked"
		return
	}
	if r.List == Deny {
		if isPrefix {
			if strings.Contains(prefix, "*") {
				addD(n, prefix+" *")
			} else {
				addD(n, prefix)
				addD(n, prefix+" *")
			}
		} else {
			addD(n, spec)
		}
		if hasGlobClass(spec) {
			n.Why = "\"?\" and \"[…]\" are wildcards in warden's globs"
		}
		return
	}
	// Allow: warden's grants are an exact command or an argv prefix.
	var entry string
	switch {
	case isPrefix && !strings.Contains(prefix, "*") && prefix != "":
		entry = prefix + " *"
	case !strings.Contains(spec, "*"):
		entry = spec
	default:
		n.Why = "a wildcard inside a command has no warden grant (they are an exact command or a prefix followed by \" *\")"
		return
	}
	if _, err := grant.Parse(entry); err != nil {
		n.Why = err.Error()
		return
	}
	addA(n, entry)
}

func hasGlobClass(s string) bool { return strings.ContainsAny(s, "?[") }

// file translates a Read or Edit (Write, MultiEdit, NotebookEdit) rule.
func file(n *Note, r Rule, env Env, addD func(*Note, string)) {
	verb := "write"
	if r.Tool == "Read" {
		verb = "read"
	}
	if r.List != Deny {
		if verb == "read" {
			n.Why = "warden has no read allow or ask rules: it asks for reads of secrets and lets other reads through"
		} else {
			n.Why = "warden has no allow or ask rules for file edits: it judges each write by where it leads"
		}
		return
	}
	if !r.HasSpec || strings.TrimSpace(r.Spec) == "" {
		n.Why = "a rule for every file is not translated: it would block every owner's " + verb + "s"
		return
	}
	globs, why := pathGlobs(r.Spec, env)
	if len(globs) == 0 {
		n.Why = why
		return
	}
	for _, g := range globs {
		if _, err := policy.CompileGlob(verb + " " + g); err != nil {
			n.Became, n.Why = nil, err.Error()
			return
		}
	}
	for _, g := range globs {
		addD(n, verb+" "+g)
	}
	n.Why = why
	if r.Tool == "Write" {
		n.Why = strings.TrimPrefix(n.Why+"; ", "; ") + "Claude Code reads Edit(…) rules for writes, not Write(…); warden takes its intent"
	}
}

// pathGlobs turns a gitignore-style path into warden globs over
// absolute paths, and a note.
func pathGlobs(spec string, env Env) ([]string, string) {
	p := strings.TrimSpace(spec)
	var why string
	switch {
	case strings.HasPrefix(p, "//"):
		p = "/" + strings.TrimLeft(p, "/")
	case p == "~" || strings.HasPrefix(p, "~/"):
		if env.Home == "" {
			return nil, "no home directory to place ~ in"
		}
		p = env.Home + strings.TrimPrefix(p, "~")
	case strings.HasPrefix(p, "/"):
		if env.Project == "" {
			return nil, "no project directory to place it in"
		}
		p = env.Project + p
	case !strings.Contains(strings.TrimSuffix(strings.TrimPrefix(p, "./"), "/"), "/") && !strings.HasPrefix(p, "./"):
		// A bare name matches at any depth, and everything under it.
		name := strings.TrimSuffix(p, "/")
		return []string{"*/" + name, "*/" + name + "/*"}, ""
	default:
		if env.Project == "" {
			return nil, "no project directory to place it in"
		}
		p = env.Project + "/" + strings.TrimPrefix(p, "./")
		why = "Claude Code reads it relative to its working directory; warden takes the project root"
	}
	dir := strings.HasSuffix(p, "/")
	p = path.Clean(p)
	if p == "/" {
		return nil, "a rule for every file is not translated: it would block every owner's access to every file"
	}
	// "a/**/b" is b in a or at any depth below it: two globs, since
	// warden's "*" needs at least the "/" it spans.
	variants := []string{p}
	if strings.Contains(p, "/**/") {
		variants = []string{strings.Replace(p, "/**/", "/", 1), strings.Replace(p, "/**/", "/*/", 1)}
	}
	var out []string
	for _, v := range variants {
		for strings.Contains(v, "**") {
			v = strings.ReplaceAll(v, "**", "*")
		}
		if dir || strings.HasSuffix(v, "/*") {
			base := strings.TrimSuffix(v, "/*")
			out = append(out, base, base+"/*")
			continue
		}
		out = append(out, v)
	}
	return out, why
}

// mcp translates an MCP tool rule.
func mcp(n *Note, r Rule, addM func(*Note, string, List)) {
	rest := strings.TrimPrefix(r.Tool, "mcp__")
	server, tool, hasTool := strings.Cut(rest, "__")
	switch {
	case r.HasSpec:
		n.Why = "MCP rules take no specifier"
		return
	case server == "" || strings.ContainsAny(server, "*?[") || (hasTool && tool == ""):
		n.Why = "not an MCP server or tool name"
		return
	}
	if !hasTool || tool == "*" {
		tool = "*"
	}
	match := server + "/" + tool
	if _, err := policy.CompileGlob(match); err != nil {
		n.Why = err.Error()
		return
	}
	addM(n, match, r.List)
}
