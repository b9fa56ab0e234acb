package policy

import "fmt"

// DenyRules are the user's approvals.deny globs, compiled once per config
// load. A match is an unconditional block: it is checked before every
// bypass (invariant 6).
//
// A nil *DenyRules has no rules and matches nothing.
type DenyRules struct {
	globs []*Glob
}

// CompileDeny compiles globs in order. The first malformed glob fails the
// whole set, with an error naming it and wrapping ErrMalformedGlob: a
// deny list that silently lost an entry would allow what the operator
// meant to block.
func CompileDeny(globs []string) (*DenyRules, error) {
	r := &DenyRules{globs: make([]*Glob, 0, len(globs))}
	for i, s := range globs {
		g, err := CompileGlob(s)
		if err != nil {
			return nil, fmt.Errorf("compile deny rule %d: %w", i+1, err)
		}
		r.globs = append(r.globs, g)
	}
	return r, nil
}

// Len returns the number of rules.
func (r *DenyRules) Len() int {
	if r == nil {
		return 0
	}
	return len(r.globs)
}

// Globs returns the rules as written, in order.
func (r *DenyRules) Globs() []string {
	if r == nil {
		return nil
	}
	out := make([]string, len(r.globs))
	for i, g := range r.globs {
		out[i] = g.src
	}
	return out
}

// Match reports the first rule, in config order, that matches any of the
// projections, and the rule as written.
//
// Projections are what the shell analyser says a command executes: the
// whole normalised command, then each executed candidate as
// "basename args…" and as "path args…" (shell.Analysis.Projections).
// That is why "sudo *" covers "/usr/bin/sudo -n id" (its basename
// projection is "sudo -n id"), while "/usr/local/bin/foo *" does not
// cover "/usr/bin/foo x" (no projection carries that path). Each
// projection is tried as given and with its white space collapsed, so
// "rm  -rf   /" and "rm -rf /" are the same to a rule, while a rule can
// still name quoted content that holds several spaces.
func (r *DenyRules) Match(projections []string) (glob string, ok bool) {
	if r.Len() == 0 || len(projections) == 0 {
		return "", false
	}
	// Prepare each subject once, not once per rule: the raw projection
	// and, when different, its collapsed form.
	var buf [16]subject
	subjects := buf[:0]
	for _, p := range projections {
		subjects = append(subjects, newSubject(p))
		if c := collapseSpace(p); c != p {
			subjects = append(subjects, newSubject(c))
		}
	}
	for _, g := range r.globs {
		for _, s := range subjects {
			if g.match(s) {
				return g.src, true
			}
		}
	}
	return "", false
}
