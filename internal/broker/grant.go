package broker

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/shell"
	"github.com/wardenhq/warden/internal/store"
)

// grantFor turns a session or always approval into the grant the human
// chose: this exact action, an argv prefix, or the request's classes.
func grantFor(r store.Request, pattern string) ([]grant.Grant, bool) {
	base := grant.Grant{Scope: grant.Permanent, By: r.By, Surface: r.Surface, Created: r.Resolved}
	if r.Scope == store.Session {
		base.Scope, base.Session = grant.Session, r.Session
	}
	one := func(g grant.Grain, p string) grant.Grant {
		out := base
		out.Grain, out.Pattern = g, p
		out.ID = r.ID + ":" + string(g) + ":" + p
		return out
	}
	switch r.Grain {
	case grant.Prefix:
		if r.Action.Kind != action.Shell {
			return nil, false
		}
		if pattern == "" {
			pattern = DefaultPrefix(r)
		}
		if pattern == "" {
			return nil, false
		}
		if !strings.HasSuffix(pattern, " *") {
			pattern += " *"
		}
		return []grant.Grant{one(grant.Prefix, pattern)}, true
	case grant.Class:
		out := make([]grant.Grant, 0, len(r.Classes))
		for _, c := range r.Classes {
			out = append(out, one(grant.Class, c))
		}
		return out, len(out) > 0
	}
	return []grant.Grant{one(grant.Exact, grant.ExactKey(r.Action))}, true
}

// DefaultPrefix proposes an argv prefix for a shell request; see
// DefaultPrefixOf.
func DefaultPrefix(r store.Request) string {
	var a shell.Analysis
	if len(r.Analysis) == 0 || json.Unmarshal(r.Analysis, &a) != nil {
		return ""
	}
	return DefaultPrefixOf(&a)
}

// subcommandTools take a verb as their first operand.
var subcommandTools = map[string]bool{"git": true, "docker": true, "podman": true, "kubectl": true, "helm": true, "npm": true, "pnpm": true, "yarn": true,
	"pip": true, "pip3": true, "apt": true, "apt-get": true, "systemctl": true, "terraform": true, "cargo": true, "go": true, "brew": true, "gh": true}

// DefaultPrefixOf proposes an argv prefix for the first flagged command:
// its name, the verb of tools that have one, and the options before the
// first operand, so one click grants `systemctl restart *`, not every
// systemctl. It proposes none (and no prefix grain is offered) unless
// every finding's class is shell.Prefixable: a prefix of a delete, a
// disk write or a history rewrite would grant the next, worse one.
func DefaultPrefixOf(a *shell.Analysis) string {
	if !PrefixOffered(a) {
		return ""
	}
	for _, f := range a.Findings {
		if f.Command < 0 || f.Command >= len(a.Commands) {
			continue
		}
		words := a.Commands[f.Command].Words()
		if len(words) == 0 {
			continue
		}
		p := []string{words[0]}
		rest := words[1:]
		if len(rest) > 0 && subcommandTools[path.Base(words[0])] && !strings.HasPrefix(rest[0], "-") {
			p, rest = append(p, rest[0]), rest[1:]
		}
		for _, w := range rest {
			if !strings.HasPrefix(w, "-") || len(p) >= 5 {
				break
			}
			p = append(p, w)
		}
		return strings.Join(p, " ")
	}
	return ""
}

// PrefixOffered reports whether a prefix grant may be chosen for a
// command with analysis a: it was flagged, and only for prefixable
// classes.
func PrefixOffered(a *shell.Analysis) bool {
	if len(a.Findings) == 0 {
		return false
	}
	for _, f := range a.Findings {
		if !shell.Prefixable(f.Class) {
			return false
		}
	}
	return true
}

// ErrPattern: a prefix pattern a human chose does not cover the action
// being approved, so recording it would grant something else.
var ErrPattern = errors.New("prefix pattern does not cover this command")

// checkPattern refuses a prefix grant for a command whose classes are
// not prefixable, and a pattern that would not cover the request's own
// command ("" is the default prefix, which covers it).
func checkPattern(r store.Request, pattern string) error {
	var a shell.Analysis
	if len(r.Analysis) == 0 || json.Unmarshal(r.Analysis, &a) != nil {
		return fmt.Errorf("%w: %q (the request has no analysis)", ErrPattern, pattern)
	}
	if !PrefixOffered(&a) {
		return fmt.Errorf("%w: a prefix grant is not offered for %s (it is destructive, or warden cannot see what runs): approve this exact command instead", ErrPattern, strings.Join(findingClasses(&a), ", "))
	}
	if pattern == "" {
		return nil
	}
	if !strings.HasSuffix(pattern, " *") {
		pattern += " *"
	}
	g, err := grant.Parse(pattern)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPattern, err)
	}
	g.Scope = grant.Permanent
	if _, ok := grant.Cover([]grant.Grant{g}, &a, "", time.Now()); !ok {
		return fmt.Errorf("%w: %q", ErrPattern, pattern)
	}
	return nil
}

// findingClasses lists the classes of a's findings, each once.
func findingClasses(a *shell.Analysis) []string {
	var out []string
	for _, f := range a.Findings {
		if !slices.Contains(out, f.Class) {
			out = append(out, f.Class)
		}
	}
	return out
}
