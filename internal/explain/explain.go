// Package explain says why an action gets its verdict: what would run
// (the commands the analyser found and how each is reached), how it was
// read (each program's option parse), the classes and findings that
// matched, the user deny rule that applies, and — when the gate decided
// for an owner — every row of the decision table and the rule that
// decided. warden check prints it; the console and the chat surfaces
// describe a pending request's classes with it.
//
// It decides nothing itself: the analysis is the analyser's, the
// decision the gate's, and a deny rule match is the policy's. Rendering
// is the surface's job (internal/surface/terminal for a terminal, the
// Report shapes for JSON).
package explain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/shell"
)

// VerdictDenied is the verdict when a user deny rule matches. It is not
// a shell verdict: the analysis knows nothing about user rules.
const VerdictDenied = "denied"

// DenyMatcher is what an explanation needs from compiled user deny rules
// (policy.CompileDeny's result).
type DenyMatcher interface {
	Match(projections []string) (glob string, ok bool)
}

// Explanation is one analysed command line with the user's deny rules
// applied, and the gate's decision for an owner when one was asked for.
type Explanation struct {
	// Cmd is the line as given; Analysis.Input is its normalised text,
	// which spans index.
	Cmd      string
	Analysis *shell.Analysis
	// Verdict is the analysis verdict, or VerdictDenied.
	Verdict string
	// DenyRule is the deny glob that matched, or "" when none did. It is
	// reported even when a hardline or malformed verdict takes
	// precedence.
	DenyRule string
	// Decision is set when the gate decided the line for an owner.
	Decision *Decision
	// Reading asks a renderer to show how the line was read: each
	// command's argv, what reached it, its option parse, and what
	// decided. The analysis must have been made with shell.Options
	// Explain for the parses to be there.
	Reading bool
}

// Decision is the gate's decision for one owner.
type Decision struct {
	Owner owner.Owner
	gate.Decision
	// Simulated says the owner's answer channel is a stand-in (warden
	// check has no human to ask): attendance says so.
	Simulated bool
}

// Line analyses line with the default options and applies deny (which
// may be nil).
func Line(line string, deny DenyMatcher) Explanation {
	return Of(line, shell.Analyze(line), deny)
}

// Of applies deny (which may be nil) to a, the analysis of line.
//
// A deny match makes the verdict "denied" unless the analysis is
// malformed or hardline: those are already blocked and their verdict
// says more about why, and a user rule must never turn a hardline into
// something weaker.
func Of(line string, a *shell.Analysis, deny DenyMatcher) Explanation {
	e := Explanation{Cmd: line, Analysis: a, Verdict: string(a.Verdict)}
	if deny != nil {
		if glob, ok := deny.Match(a.Projections()); ok {
			e.DenyRule = glob
			if a.Verdict != shell.Malformed && a.Verdict != shell.Hardline {
				e.Verdict = VerdictDenied
			}
		}
	}
	return e
}

// Decide runs g's decision table for line as o, and applies deny to the
// analysis as Of does. The analysis is the gate's own, so the
// explanation shows what was decided on.
//
// A gate failure is returned beside an explanation that holds the deny
// it became (rule "error"), so the caller can show both.
func Decide(ctx context.Context, g *gate.Gate, deny DenyMatcher, o owner.Owner, line string) (Explanation, error) {
	if g == nil {
		return Explanation{}, errors.New("decide: no policy loaded")
	}
	d, err := g.Decide(owner.With(ctx, o), action.NewShell(line))
	a := d.Analysis
	if a == nil { // the gate failed before it analysed the command
		a = g.Analyse(line)
	}
	e := Of(line, a, deny)
	e.Decision = &Decision{Owner: o, Decision: d}
	if err != nil {
		return e, fmt.Errorf("decide: %w", err)
	}
	return e, nil
}

// Classes returns the key, tier and description of every distinct class
// of the analysis, in first-seen order.
func (e Explanation) Classes() []shell.Class {
	return Classes(e.Analysis.Classes(), e.Analysis.Findings)
}

// Classes describes class keys from the catalogue; a key the catalogue
// does not list takes the tier and description of its finding, if any
// of findings has it, else only its key.
func Classes(keys []string, findings []shell.Finding) []shell.Class {
	out := make([]shell.Class, 0, len(keys))
	for _, k := range keys {
		c, ok := shell.Lookup(k)
		if !ok {
			c = shell.Class{Key: k}
			// A finding carries its own tier and description; use them
			// rather than drop a class the catalogue does not list.
			for _, f := range findings {
				if f.Class == k {
					c = shell.Class{Key: k, Tier: f.Tier, Description: f.Description}
					break
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// DecidedBy names what decided: the gate's rule when it decided, else
// the deny rule, the parse error, or the most severe findings. The text
// is as the rule and the analysis give it: a renderer escapes it.
func (e Explanation) DecidedBy() string {
	if e.Decision != nil {
		return e.Decision.Rule
	}
	a := e.Analysis
	switch {
	case e.Verdict == VerdictDenied:
		return "deny rule " + e.DenyRule
	case a.Verdict == shell.Malformed:
		return "malformed: " + a.Error
	case len(a.Findings) == 0:
		return "nothing in the catalogue matched"
	}
	rank := map[shell.Tier]int{shell.TierHardline: 3, shell.TierFloor: 2, shell.TierDangerous: 1}
	best := 0
	for _, f := range a.Findings {
		best = max(best, rank[f.Tier])
	}
	var keys []string
	for _, f := range a.Findings {
		if rank[f.Tier] == best && !slices.Contains(keys, f.Class) {
			keys = append(keys, f.Class)
		}
	}
	return strings.Join(keys, ", ")
}

// Attendance says in words whether a human can be asked for the owner.
func (d *Decision) Attendance() string {
	o := d.Owner
	switch {
	case o.Attended():
		ch, _ := o.Channel()
		what := "answer channel"
		if d.Simulated {
			what = "simulated " + what
		}
		return fmt.Sprintf("attended: %s on surface %q", what, ch.Surface())
	case o.CanAnswer():
		return "unattended: an owner along its lineage runs without a human"
	}
	return "unattended: no answer channel"
}
