package gate

import (
	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/shell"
)

// Verdict is what the gate says about an action.
type Verdict string

// Verdicts.
const (
	Allow Verdict = "allow"
	Deny  Verdict = "deny"
	// Ask means a human on the owner's surfaces must answer; the caller
	// hands the action to the broker.
	Ask Verdict = "ask"
)

// Rule ids: stable names of the step that decided. Audit records, grants
// and `warden check --as` show them.
const (
	RuleMalformed       = "floor.malformed"
	RuleHardline        = "floor.hardline"
	RuleDenyRule        = "floor.deny_rule"
	RuleProtectedPath   = "floor.protected_path"
	RuleOutsideRoots    = "floor.outside_safe_roots"
	RuleSafe            = "safe"
	RuleToolAllow       = "rule.allow"
	RuleUnowned         = "unowned"
	RuleContainer       = "bypass.container"
	RuleProcessYolo     = "bypass.process_yolo"
	RuleSessionYolo     = "bypass.session_yolo"
	RuleModeOff         = "bypass.mode_off"
	RuleGrantExact      = "grant.exact"
	RuleGrantPrefix     = "grant.prefix"
	RuleGrantClass      = "grant.class"
	RuleCronMode        = "unattended.cron_mode"
	RuleKanbanMode      = "unattended.kanban_mode"
	RuleSingleQueryMode = "unattended.single_query_mode"
	RuleUnattendedMode  = "unattended.unattended_mode"
	// RuleOpaque denies, for an owner no human answers for, an action
	// the analyser could not see into (invariant 12).
	RuleOpaque          = "unattended.opaque"
	RuleGuardianApprove = "guardian.approve"
	RuleGuardianDeny    = "guardian.deny"
	RuleHuman           = "human"
	RuleError           = "error"
)

// Decision is the gate's answer for one action.
type Decision struct {
	Verdict Verdict `json:"decision"`
	// Rule is the id of the step that decided.
	Rule string `json:"rule"`
	// Classes are the catalogue keys the action matched.
	Classes []string `json:"classes"`
	// AgentMessage is what the agent is told when it is denied: what was
	// blocked and why, and not to retry variations. It never names the
	// setting that would let the action through.
	AgentMessage string `json:"agent_message,omitempty"`
	// HumanMessage explains the decision to a person.
	HumanMessage string `json:"human_message"`
	// Notice, when set, is a message for the human that the caller shows
	// with the question (rule human): under mode smart, why the security
	// reviewer handed the action over instead of deciding (it failed, or
	// the session fell back to manual after repeated failures). It is
	// written by warden, never by a model.
	Notice string `json:"notice,omitempty"`
	// DenyRule is the user deny glob that matched, if any.
	DenyRule string `json:"deny_rule,omitempty"`
	// Grants are the grants that covered the action (rule grant.*).
	Grants []grant.Grant `json:"grants,omitempty"`
	// Steps is the path through the decision table.
	Steps []Step `json:"steps"`
	// Analysis is the shell analysis, for shell and shell-script actions.
	Analysis *shell.Analysis `json:"-"`
}

// Step is one row of the decision table as it applied to an action.
type Step struct {
	// N is the row number in DESIGN.md's decision order.
	N int `json:"n"`
	// Name says what the row checks.
	Name string `json:"name"`
	// Outcome is "pass" (checked, did not decide), "skip" (does not apply
	// to this owner or action) or "decided".
	Outcome string `json:"outcome"`
	Detail  string `json:"detail,omitempty"`
}

// Step outcomes.
const (
	Pass    = "pass"
	Skip    = "skip"
	Decided = "decided"
)
