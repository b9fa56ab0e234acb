// Package grant holds approvals a human gave beyond one action ("for this
// session", "always") and the one matcher that decides whether they cover
// an action. The runtime gate, `warden check --as` and later `approvals
// suggest` all use Cover, so a test and the real run cannot disagree.
//
// A grant is recorded at the grain the human chose: this exact command,
// an argv prefix (`git push *`), or, explicitly, a whole class
// (`class:delete.recursive`). One click never implies a class.
package grant

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/shell"
)

// Grain is how much one grant covers.
type Grain string

// Grains.
const (
	// Exact covers one normalised command line (white space collapsed).
	Exact Grain = "exact"
	// Prefix covers each executed command whose argv starts with the
	// pattern's words; it never covers a compound line as a whole.
	Prefix Grain = "prefix"
	// Class covers every finding of one catalogue class.
	Class Grain = "class"
)

// Scope is how long a grant lives.
type Scope string

// Scopes.
const (
	// Session grants belong to one session key.
	Session Scope = "session"
	// Permanent grants apply to every owner (command_allowlist, "always").
	Permanent Scope = "permanent"
)

// ErrPattern is wrapped by Parse errors.
var ErrPattern = errors.New("bad grant pattern")

// Grant is one recorded approval.
type Grant struct {
	ID      string    `json:"id"`
	Scope   Scope     `json:"scope"`
	Session string    `json:"session,omitempty"`
	Grain   Grain     `json:"grain"`
	Pattern string    `json:"pattern"`
	By      string    `json:"by,omitempty"`
	Surface string    `json:"surface,omitempty"`
	Created time.Time `json:"created"`
	// Expires is zero for no expiry.
	Expires time.Time `json:"expires,omitzero"`
}

// Parse reads an allowlist entry: "class:KEY" is a class grant, a line
// ending in " *" is an argv prefix, anything else an exact command.
func Parse(entry string) (Grant, error) {
	s := strings.Join(strings.Fields(entry), " ")
	switch {
	case s == "" || s == "*":
		return Grant{}, fmt.Errorf("%w: %q would match everything", ErrPattern, entry)
	case strings.HasPrefix(s, "class:"):
		key := strings.TrimPrefix(s, "class:")
		if _, ok := shell.Lookup(key); !ok && !extraClass(key) {
			return Grant{}, fmt.Errorf("%w: unknown class %q", ErrPattern, key)
		}
		return Grant{Grain: Class, Pattern: key}, nil
	case strings.HasSuffix(s, " *"):
		if strings.Contains(strings.TrimSuffix(s, " *"), "*") {
			return Grant{}, fmt.Errorf("%w: %q: only a final \" *\" is a wildcard", ErrPattern, entry)
		}
		return Grant{Grain: Prefix, Pattern: s}, nil
	}
	return Grant{Grain: Exact, Pattern: s}, nil
}

// extraClass reports class keys the gate adds for non-shell actions.
func extraClass(key string) bool {
	return key == "code.exec" || strings.HasPrefix(key, "mcp.") || strings.HasPrefix(key, "plugin.") || strings.HasPrefix(key, "write.")
}

// String renders the grant as an allowlist entry.
func (g Grant) String() string {
	if g.Grain == Class {
		return "class:" + g.Pattern
	}
	return g.Pattern
}

// live reports whether g applies to session at now.
func (g Grant) live(session string, now time.Time) bool {
	if !g.Expires.IsZero() && !now.Before(g.Expires) {
		return false
	}
	return g.Scope == Permanent || (g.Scope == Session && session != "" && g.Session == session)
}

// Normalize is the exact-grain form of a command line.
func Normalize(cmd string) string { return shell.CollapseFields(cmd) }

// Cover reports whether the live grants cover every finding of a shell
// analysis, and the grants that did. An analysis with no findings is not
// "covered": there is nothing to grant. Hardline and malformed analyses
// are never covered.
func Cover(grants []Grant, a *shell.Analysis, session string, now time.Time) ([]Grant, bool) {
	if a == nil || len(a.Findings) == 0 || a.Verdict == shell.Hardline || a.Verdict == shell.Malformed {
		return nil, false
	}
	whole := Normalize(a.Input)
	for _, g := range grants {
		if g.Grain == Exact && g.live(session, now) && g.Pattern == whole {
			return []Grant{g}, true
		}
	}
	var used []Grant
	for _, f := range a.Findings {
		g, ok := coverFinding(grants, a, f, session, now)
		if !ok {
			return nil, false
		}
		if !contains(used, g) {
			used = append(used, g)
		}
	}
	return used, true
}

// CoverClasses reports whether class grants cover every key (for actions
// that are not shell commands: code, writes, MCP tools).
func CoverClasses(grants []Grant, keys []string, session string, now time.Time) ([]Grant, bool) {
	if len(keys) == 0 {
		return nil, false
	}
	var used []Grant
	for _, k := range keys {
		found := false
		for _, g := range grants {
			if g.Grain == Class && g.Pattern == k && g.live(session, now) {
				found = true
				if !contains(used, g) {
					used = append(used, g)
				}
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return used, true
}

func coverFinding(grants []Grant, a *shell.Analysis, f shell.Finding, session string, now time.Time) (Grant, bool) {
	for _, g := range grants {
		if !g.live(session, now) {
			continue
		}
		switch g.Grain {
		case Class:
			if g.Pattern == f.Class {
				return g, true
			}
		case Prefix:
			if f.Command >= 0 && f.Command < len(a.Commands) && prefixMatch(g.Pattern, a.Commands[f.Command].Argv) {
				return g, true
			}
		}
	}
	return Grant{}, false
}

// prefixMatch reports whether argv starts with the pattern's words. The
// first word matches by basename unless the pattern names a path.
func prefixMatch(pattern string, argv []shell.Arg) bool {
	i := 0
	for w := range strings.FieldsSeq(strings.TrimSuffix(pattern, " *")) {
		if i >= len(argv) {
			return false
		}
		a := argv[i].Value
		if i == 0 && !strings.Contains(w, "/") {
			a = path.Base(a)
		}
		if a != w {
			return false
		}
		i++
	}
	return i > 0
}

func contains(list []Grant, g Grant) bool {
	for _, x := range list {
		if x.ID == g.ID && x.Pattern == g.Pattern && x.Grain == g.Grain && x.Scope == g.Scope {
			return true
		}
	}
	return false
}

// ExactKey is the exact-grain pattern of an action: the normalised
// command line for shell, and a kind-qualified key for the others, so an
// "exact" approval of an MCP tool or a write covers that one thing.
func ExactKey(a action.Action) string {
	switch a.Kind {
	case action.Shell:
		return Normalize(a.Command)
	case action.MCP:
		return "mcp:" + a.Server + "/" + a.Tool
	case action.Plugin:
		return "plugin:" + a.Plugin + "/" + a.RuleKey
	case action.Write:
		return "write:" + a.Path
	}
	return string(a.Kind) + ":" + a.Digest()
}

// CoverExact reports a live exact grant for key.
func CoverExact(grants []Grant, key, session string, now time.Time) (Grant, bool) {
	for _, g := range grants {
		if g.Grain == Exact && g.Pattern == key && g.live(session, now) {
			return g, true
		}
	}
	return Grant{}, false
}
