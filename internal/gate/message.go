package gate

import "strings"

// agentMessage is what a denied agent reads. It says what was blocked and
// why, tells it not to retry variations, and never names the setting or
// command that would let the action through (invariant 11).
func agentMessage(rule, why string, as *assessment) string {
	var reason string
	switch rule {
	case RuleMalformed:
		reason = "it could not be analysed (" + why + "), and what cannot be analysed is not run"
	case RuleHardline:
		reason = "it is on warden's hardline blocklist (" + why + "), which nothing overrides"
	case RuleDenyRule:
		reason = "the operator has forbidden it"
	case RuleProtectedPath:
		reason = "it writes a protected file (" + why + ")"
	case RuleOutsideRoots:
		reason = "it writes outside the directories this agent may write"
	case RuleUnowned:
		reason = "it has no owner, and only plainly safe actions run without one"
	case RuleGuardianDeny:
		reason = "the security reviewer refused it"
		if why != "" {
			reason += ": " + why
		}
	case RuleOpaque:
		reason = "warden could not see what it would run (" + why + "), and nobody is here to look at it"
	case RuleCronMode, RuleKanbanMode, RuleSingleQueryMode, RuleUnattendedMode:
		reason = why
	default:
		reason = why
	}
	var b strings.Builder
	b.WriteString("warden blocked this ")
	b.WriteString(as.what)
	if len(as.classes) > 0 {
		b.WriteString(" [")
		b.WriteString(strings.Join(as.classes, ", "))
		b.WriteString("]")
	}
	b.WriteString(": ")
	b.WriteString(reason)
	b.WriteString(". Do not retry it or variations of it. If it is needed, tell the user what you wanted to do and why.")
	return b.String()
}
