// Package gate is warden's one decision table (DESIGN.md, "Decision
// order") for every action kind: shell commands, code runs, file writes,
// MCP tool calls and plugin actions. It learns who is asking only from
// the owner bound to the context, reads no environment and no
// package-level state, and turns every internal failure into a deny with
// a reason.
package gate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/policy"
	"github.com/wardenhq/warden/internal/shell"
)

// Grants supplies the grants that apply to a session: permanent ones and
// that session's own. The config allowlist is added by the gate.
type Grants interface {
	Grants(ctx context.Context, session string) ([]grant.Grant, error)
}

// Sessions answers per-session switches.
type Sessions interface {
	// SessionYolo reports whether the human turned on yolo for this
	// session key.
	SessionYolo(ctx context.Context, session string) (bool, error)
}

// Options configure a Gate.
type Options struct {
	// Policy is the compiled configuration; nil means the defaults.
	Policy *Policy
	// Grants supplies session and "always" grants; nil means only the
	// config allowlist.
	Grants Grants
	// Sessions supplies session yolo; nil means none.
	Sessions Sessions
	// Guardian reviews dangerous actions under mode smart; nil makes
	// smart act as manual.
	Guardian Guardian
	// ProcessYolo is fixed when the process starts (a CLI flag). It is
	// never read from the environment.
	ProcessYolo bool
	// Now is the clock for grant expiry; nil means time.Now.
	Now func() time.Time
}

// Gate decides actions. It is safe for concurrent use.
type Gate struct {
	policy      atomic.Pointer[Policy]
	grants      Grants
	sessions    Sessions
	guardian    Guardian
	processYolo bool
	now         func() time.Time
	breaker     *breaker
}

// New returns a Gate.
func New(o Options) (*Gate, error) {
	if o.Policy == nil {
		p, err := Compile(nil, Paths{})
		if err != nil {
			return nil, err
		}
		o.Policy = p
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	g := &Gate{grants: o.Grants, sessions: o.Sessions, guardian: o.Guardian, processYolo: o.ProcessYolo, now: o.Now, breaker: newBreaker(256)}
	g.policy.Store(o.Policy)
	return g, nil
}

// SetPolicy swaps in a new compiled policy (hot reload).
func (g *Gate) SetPolicy(p *Policy) {
	if p != nil {
		g.policy.Store(p)
	}
}

// Policy returns the policy in force.
func (g *Gate) Policy() *Policy { return g.policy.Load() }

// ErrInternal is wrapped by errors the gate turned into a deny.
var ErrInternal = errors.New("gate failure")

// Decide runs the decision table for one action, as the owner bound to
// ctx. A failure anywhere is a deny (rule "error") with the error
// returned beside it for logging; callers must not run the action unless
// the verdict is Allow.
func (g *Gate) Decide(ctx context.Context, act action.Action) (d Decision, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: panic: %v", ErrInternal, r)
			d = failed(d, err)
		}
	}()
	p := g.policy.Load()
	t := &table{steps: make([]Step, 0, len(rows))}
	as, err := g.assess(p, act, t)
	if err != nil {
		return failed(t.decision(), err), err
	}
	d = t.decision()
	d.Classes, d.Analysis = as.classes, as.analysis
	if as.floor != "" {
		return t.finish(d, Deny, as.floor, as.detail, as), nil
	}
	if !as.dangerous {
		rule := as.safeRule
		if rule == "" {
			rule = RuleSafe
		}
		t.add(4, "not dangerous", Decided, "")
		return t.finish(d, Allow, rule, "", as), nil
	}
	t.add(4, "not dangerous", Pass, strings.Join(as.classes, ", "))
	o, ok := owner.From(ctx)
	if !ok || !o.Valid() {
		return t.finish(d, Deny, RuleUnowned, "no owner is bound to this action", as), nil
	}
	return g.decideOwned(ctx, p, o, act, as, t, d)
}

// decideOwned runs rows 5 to 10 for a dangerous action with an owner.
func (g *Gate) decideOwned(ctx context.Context, p *Policy, o owner.Owner, act action.Action, as *assessment, t *table, d Decision) (Decision, error) {
	attended := p.attended(o)
	kanban := attended && inKanban(o)
	// Row 5: bypasses. The container is the boundary for every owner;
	// yolo and mode off are an attended human's choices and never reach
	// an unattended lineage, nor a kanban run put to the console
	// (kanban_mode ask turns row 7's deny into a human's answer, and
	// nothing else). What the analyser could not see into passes no
	// bypass and no grant (invariant 12): a human decides, or, for an
	// unattended owner, it is denied.
	opaque := as.opaque != ""
	switch {
	case opaque:
		t.add(5, "bypasses", Skip, "the analyser could not see into it ("+as.opaque+"): no bypass applies")
	case act.Isolated():
		t.add(5, "bypasses", Decided, "backend "+act.Backend)
		return t.finish(d, Allow, RuleContainer, "", as), nil
	case !attended:
		t.add(5, "bypasses", Skip, "unattended lineage: yolo and mode off do not apply")
	case kanban:
		t.add(5, "bypasses", Skip, "a kanban run: yolo and mode off do not apply")
	case g.processYolo:
		t.add(5, "bypasses", Decided, "process started with --yolo")
		return t.finish(d, Allow, RuleProcessYolo, "", as), nil
	default:
		yolo, err := g.sessionYolo(ctx, o.SessionKey())
		if err != nil {
			return failed(t.decision(), err), err
		}
		if yolo {
			t.add(5, "bypasses", Decided, "session yolo")
			return t.finish(d, Allow, RuleSessionYolo, "", as), nil
		}
		if p.Mode == policy.ModeOff {
			t.add(5, "bypasses", Decided, "approvals.mode off")
			return t.finish(d, Allow, RuleModeOff, "", as), nil
		}
		t.add(5, "bypasses", Pass, "")
	}
	// Row 6: grants. The exact key is only needed here, off the safe path.
	if opaque {
		t.add(6, "grants", Skip, "no grant covers what the analyser could not see into")
		return g.decideOpaque(ctx, p, o, attended, as, t, d)
	}
	as.exact = grant.ExactKey(act)
	grants, err := g.grantsFor(ctx, p, o.SessionKey())
	if err != nil {
		return failed(t.decision(), err), err
	}
	if used, ok := as.covered(grants, o.SessionKey(), g.now()); ok {
		d.Grants = used
		t.add(6, "grants", Decided, grantList(used))
		return t.finish(d, Allow, grantRule(used), "", as), nil
	}
	t.add(6, "grants", Pass, "")
	// Row 7: unattended owners resolve from their modes at once.
	if !attended {
		mode, rule, why := p.unattended(o)
		t.add(7, "unattended mode", Decided, why)
		if mode.Approves() {
			return t.finish(d, Allow, rule, "", as), nil
		}
		return t.finish(d, Deny, rule, why, as), nil
	}
	surface := surfaceOf(o)
	t.add(7, "unattended mode", Skip, "attended: "+surface)
	// Row 8: the guardian.
	if kanban {
		t.add(8, "guardian", Skip, "a kanban run put to a human: the human decides")
	} else if p.Mode == policy.ModeSmart {
		if g.guardian == nil {
			t.add(8, "guardian", Skip, "mode smart without a guardian acts as manual")
		} else {
			r := g.review(ctx, p, o, act, as)
			switch r.Verdict {
			case GuardianApprove:
				g.breaker.reset(o.SessionKey())
				t.add(8, "guardian", Decided, "approved: "+r.Reason)
				return t.finish(d, Allow, RuleGuardianApprove, "", as), nil
			case GuardianDeny:
				n := g.breaker.deny(o.SessionKey())
				t.add(8, "guardian", Decided, "denied: "+r.Reason)
				d = t.finish(d, Deny, RuleGuardianDeny, r.Reason, as)
				if p.DenialBreakerThreshold > 0 && n >= p.DenialBreakerThreshold {
					d.AgentMessage += fmt.Sprintf(" CIRCUIT BREAKER: %d actions in a row were blocked by the security reviewer. Stop attempting variations; tell the user what you need and let them decide.", n)
				}
				return d, nil
			default:
				t.add(8, "guardian", Pass, "escalated: "+r.Reason)
				d.Notice = r.Notice
			}
		}
	} else {
		t.add(8, "guardian", Skip, modeDetail(p.Mode))
	}
	// Row 9: ask the human on the owner's own surfaces.
	t.add(9, "ask a human", Decided, surface)
	return t.finish(d, Ask, RuleHuman, "", as), nil
}

// decideOpaque runs rows 7 to 9 for an action the analyser could not see
// into: an unattended owner is denied whatever its mode; an attended one
// is asked (the guardian does not decide it).
func (g *Gate) decideOpaque(ctx context.Context, p *Policy, o owner.Owner, attended bool, as *assessment, t *table, d Decision) (Decision, error) {
	if !attended {
		why := "no human can look at what warden could not see into (" + as.opaque + ")"
		t.add(7, "unattended mode", Decided, why)
		return t.finish(d, Deny, RuleOpaque, why, as), nil
	}
	t.add(7, "unattended mode", Skip, "attended: "+surfaceOf(o))
	t.add(8, "guardian", Skip, "what warden could not see into goes to a human")
	t.add(9, "ask a human", Decided, surfaceOf(o))
	return t.finish(d, Ask, RuleHuman, "", as), nil
}

// HumanApproved tells the gate a human approved an action of session:
// the guardian's denial streak ends.
func (g *Gate) HumanApproved(session string) { g.breaker.reset(session) }

func (g *Gate) sessionYolo(ctx context.Context, session string) (bool, error) {
	if g.sessions == nil || session == "" {
		return false, nil
	}
	y, err := g.sessions.SessionYolo(ctx, session)
	if err != nil {
		return false, fmt.Errorf("%w: session yolo of %q: %w", ErrInternal, session, err)
	}
	return y, nil
}

func (g *Gate) grantsFor(ctx context.Context, p *Policy, session string) ([]grant.Grant, error) {
	if g.grants == nil {
		return p.allowlist, nil
	}
	gs, err := g.grants.Grants(ctx, session)
	if err != nil {
		return nil, fmt.Errorf("%w: load grants: %w", ErrInternal, err)
	}
	if len(gs) == 0 {
		return p.allowlist, nil // read only: nothing appends to or writes into it
	}
	return append(gs, p.allowlist...), nil
}

// attended reports whether a human may be asked for o under p: o is
// attended (owner.Attended: a channel on o, nothing unattended along its
// lineage), and if a kanban run is along it, kanban_mode is still ask —
// a console the host attached does not outlive a reload to deny or
// approve.
func (p *Policy) attended(o owner.Owner) bool {
	if !o.Attended() {
		return false
	}
	return !inKanban(o) || p.KanbanMode == policy.UnattendedAsk
}

// inKanban reports whether a kanban run is along o's lineage. It walks
// the parents rather than building the lineage: no allocation.
func inKanban(o owner.Owner) bool {
	for ok := o.Valid(); ok; o, ok = o.Parent() {
		if o.Kind() == owner.KindKanban {
			return true
		}
	}
	return false
}

// unattended combines the modes along the owner's lineage: a deny
// anywhere wins (invariant 5). It returns the deciding rule and why.
func (p *Policy) unattended(o owner.Owner) (policy.UnattendedMode, string, string) {
	lineage := o.Lineage()
	approveRule, approveWhy := "", ""
	for i := len(lineage) - 1; i >= 0; i-- { // nearest first
		ow := lineage[i]
		self := i == len(lineage)-1
		// An owner counts when nobody can answer for it: its kind is
		// unattended, or it is the asker and has no channel. A kanban
		// run always counts, console or not: kanban_mode is what its
		// operator chose for everything it does, and ask is no approval
		// for the unattended runs it starts (a cron run), nobody being
		// there to ask for them.
		if !ow.Unattended() && ow.Kind() != owner.KindKanban && !(self && !ow.CanAnswer()) {
			continue
		}
		mode, rule, what := p.modeOf(ow)
		switch {
		case mode == policy.UnattendedAsk && self:
			return mode, rule, what + " has no console to ask a human on"
		case mode == policy.UnattendedAsk:
			return mode, rule, "nobody can be asked for what " + what + " started: only its own steps go to a human"
		case !mode.Approves():
			return mode, rule, what + " runs without a human to approve dangerous actions"
		}
		if approveRule == "" {
			approveRule, approveWhy = rule, what+" is allowed to run dangerous actions unattended"
		}
	}
	if approveRule == "" {
		return policy.UnattendedDeny, RuleUnattendedMode, "no human can answer for this run"
	}
	return policy.UnattendedApprove, approveRule, approveWhy
}

// modeOf returns the unattended mode that governs one owner of a
// lineage.
func (p *Policy) modeOf(o owner.Owner) (policy.UnattendedMode, string, string) {
	switch o.Kind() {
	case owner.KindCron:
		return p.CronMode, RuleCronMode, "a cron job (" + o.String() + ")"
	case owner.KindKanban:
		return p.KanbanMode, RuleKanbanMode, "a kanban worker (" + o.String() + ")"
	case owner.KindSingleQuery:
		return p.SingleQueryMode, RuleSingleQueryMode, "a single-query run"
	}
	return p.UnattendedMode, RuleUnattendedMode, "an unattended " + string(o.Kind()) + " caller (" + o.String() + ")"
}

func surfaceOf(o owner.Owner) string {
	k := o.SessionKey()
	ch, onChannel := o.Channel()
	switch {
	case k != "" && onChannel:
		return "on " + ch.Surface() + " for session " + k
	case k != "":
		return "session " + k
	case onChannel:
		return "on " + ch.Surface() + " for " + o.String()
	}
	return o.String()
}

// modeDetail is row 8's detail for a mode, a constant for the known ones.
func modeDetail(m policy.Mode) string {
	switch m {
	case policy.ModeManual:
		return "mode manual"
	case policy.ModeSmart:
		return "mode smart"
	case policy.ModeOff:
		return "mode off"
	}
	return "mode " + m.String()
}

func grantRule(used []grant.Grant) string {
	rule := RuleGrantExact
	for _, g := range used {
		switch g.Grain {
		case grant.Prefix:
			rule = RuleGrantPrefix
		case grant.Class:
			if rule != RuleGrantPrefix {
				rule = RuleGrantClass
			}
		}
	}
	return rule
}

func grantList(used []grant.Grant) string {
	s := make([]string, len(used))
	for i, g := range used {
		s[i] = string(g.Scope) + " " + g.String()
	}
	return strings.Join(s, ", ")
}

// failed turns an internal error into a deny (invariant 7).
func failed(d Decision, err error) Decision {
	d.Verdict, d.Rule = Deny, RuleError
	d.AgentMessage = "warden blocked this action: it could not be checked (" + err.Error() + "). Do not retry it or variations of it; tell the user."
	d.HumanMessage = "deny (" + RuleError + "): " + err.Error()
	for n := len(d.Steps) + 1; n < 10; n++ {
		d.Steps = append(d.Steps, Step{N: n, Name: rows[n], Outcome: NotReached})
	}
	d.Steps = append(d.Steps, Step{N: 10, Name: "deny", Outcome: Decided, Detail: err.Error()})
	return d
}

// Analyse exposes the policy's analyser for callers that show findings.
func (g *Gate) Analyse(cmd string) *shell.Analysis { return g.policy.Load().Analyse(cmd) }
