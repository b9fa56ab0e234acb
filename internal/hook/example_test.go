package hook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/hook"
	"github.com/wardenhq/warden/internal/owner"
)

// gateDecider decides a hook call with a gate, as the external owner
// external:AGENT/SESSION whose human answers in the agent's own prompt
// (host.ExternalDecider, the real hook.Decider, does this on a local
// gate when no host runs, and with its audit).
type gateDecider struct{ g *gate.Gate }

// agentPrompt is the answer channel of an agent's own permission prompt.
type agentPrompt string

func (a agentPrompt) Surface() string { return string(a) }

func (d gateDecider) Decide(ctx context.Context, c hook.Call) (hook.Answer, error) {
	o, err := owner.ExternalSession(c.Agent, c.Session, agentPrompt(c.Agent))
	if err != nil {
		return hook.Answer{}, err
	}
	dec, err := d.g.Decide(owner.With(ctx, o), c.Action)
	if err != nil {
		return hook.Answer{}, err // Handle fails closed: a deny
	}
	a := hook.Answer{Rule: dec.Rule, Classes: dec.Classes, Reason: dec.HumanMessage}
	switch dec.Verdict {
	case gate.Allow:
		a.Verdict = hook.Allow
	case gate.Ask:
		a.Verdict = hook.Ask // no host to ask on: the agent asks its own human
	default:
		a.Verdict, a.Reason = hook.Deny, dec.AgentMessage
	}
	return a, nil
}

// Handle reads one Claude Code PreToolUse payload, decides it and
// renders the answer the way Claude Code reads it: a safe command gets
// no decision (Claude Code's own permission rules apply), a dangerous
// one "ask" (with no host running, Claude Code asks its human), a
// hardline one "deny" with the reason for the model.
func ExampleHandle() {
	g, err := gate.New(gate.Options{})
	if err != nil {
		panic(err)
	}
	for _, cmd := range []string{"ls -la", "rm -rf build/", "rm -rf /"} {
		payload := fmt.Sprintf(`{"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": %q}, "cwd": "/home/u/proj"}`, cmd)
		r := hook.Handle(context.Background(), hook.ClaudeCode{}, strings.NewReader(payload), gateDecider{g}, hook.Options{})
		var out struct {
			HookSpecificOutput struct {
				PermissionDecision       string `json:"permissionDecision"`
				PermissionDecisionReason string `json:"permissionDecisionReason"`
			} `json:"hookSpecificOutput"`
		}
		if len(r.Stdout) > 0 {
			if err := json.Unmarshal(r.Stdout, &out); err != nil {
				panic(err)
			}
		}
		fmt.Printf("%-14s exit %d, decision %q\n", cmd, r.Exit, out.HookSpecificOutput.PermissionDecision)
	}
	// Output:
	// ls -la         exit 0, decision ""
	// rm -rf build/  exit 0, decision "ask"
	// rm -rf /       exit 0, decision "deny"
}
