package broker

import (
	"encoding/json"
	"strings"

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

// DefaultPrefix proposes an argv prefix for a shell request: the first
// flagged command's name and its first word that is not an option
// (`git push` from `git push -f origin main`).
func DefaultPrefix(r store.Request) string {
	var a shell.Analysis
	if len(r.Analysis) == 0 || json.Unmarshal(r.Analysis, &a) != nil {
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
		if len(words) > 1 && !strings.HasPrefix(words[1], "-") {
			p = append(p, words[1])
		}
		return strings.Join(p, " ")
	}
	return ""
}
