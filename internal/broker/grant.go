package broker

import (
	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/grant"
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
		return []grant.Grant{one(grant.Prefix, grant.PrefixPattern(pattern))}, true
	case grant.Class:
		out := make([]grant.Grant, 0, len(r.Classes))
		for _, c := range r.Classes {
			out = append(out, one(grant.Class, c))
		}
		return out, len(out) > 0
	}
	return []grant.Grant{one(grant.Exact, grant.ExactKey(r.Action))}, true
}

// DefaultPrefix proposes an argv prefix for a shell request from its
// stored analysis (grant.DefaultPrefix); "" offers no prefix grain.
func DefaultPrefix(r store.Request) string { return grant.DefaultPrefixJSON(r.Analysis) }

// ErrPattern: a prefix pattern a human chose does not cover the action
// being approved, so recording it would grant something else.
var ErrPattern = grant.ErrNotCovered

// checkPattern refuses a prefix grant for a command whose classes are
// not prefixable, and a pattern that would not cover the request's own
// command ("" is the default prefix, which covers it).
func checkPattern(r store.Request, pattern string) error {
	return grant.CheckPrefixJSON(r.Analysis, pattern)
}
