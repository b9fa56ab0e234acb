package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/hook"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/protect"
	"github.com/wardenhq/warden/internal/store"
)

// ExternalDecider decides other agents' tool calls for warden hook. With
// a host running, the host's gate decides as the attended owner
// external:AGENT/SESSION and a question goes to the console, where a
// human answers (or it expires: deny). With no host running, a local
// gate on the same config and store decides, audits its decision, and
// answers ask for what needs a human: the agent then asks its own human
// in its own prompt, the only answer channel there is.
type ExternalDecider struct {
	// Client talks to the host's admin socket.
	Client *localapi.Client
	// Local configures the local gate used when no host answers.
	Local LocalConfig
	// Pending, if set, hears about a question pending on the console.
	Pending func(localapi.Event)
}

var _ hook.Decider = ExternalDecider{}

// Decide implements hook.Decider.
func (d ExternalDecider) Decide(ctx context.Context, c hook.Call) (hook.Answer, error) {
	dec, err := d.Client.Decide(ctx, localapi.ExternalRequest{Agent: c.Agent, Session: c.Session, Action: c.Action}, d.Pending)
	switch {
	case errors.Is(err, localapi.ErrNotRunning):
		return d.local(ctx, c)
	case err != nil:
		return hook.Answer{}, err
	}
	a := hook.Answer{Verdict: hook.Allow, Rule: dec.Rule, RequestID: dec.RequestID, Classes: dec.Classes, Reason: why(dec.Reason, dec.Verdict, dec.Rule),
		Vouched: vouched(dec.Rule, dec.RequestID)}
	if !dec.Allowed {
		a.Verdict, a.Reason = hook.Deny, dec.Message
	}
	return a, nil
}

var _ hook.ReadDecider = ExternalDecider{}

// DecideRead implements hook.ReadDecider: Claude Code's Read, Grep and
// Glob of a secret (an SSH key, cloud or registry credentials, a .env
// file, a token: the protected-path table's read entries) get ask, so
// the agent's own prompt asks the user before the secret reaches the
// model; warden's own state and config, and paths a user deny rule
// names ("read PATH" subjects in approvals.deny), get deny. Anything
// else passes to the agent's own rules. The config is the one the local
// gate uses; no host is needed.
func (d ExternalDecider) DecideRead(ctx context.Context, c hook.Call) (hook.Answer, error) {
	logger := d.Local.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	paths := d.Local.Paths
	paths.Protected = append([]string(nil), paths.Protected...)
	if d.Local.StateDir != "" {
		paths.Protected = append(paths.Protected, d.Local.StateDir)
	}
	if d.Local.ConfigPath != "" {
		paths.Protected = append(paths.Protected, d.Local.ConfigPath)
	}
	pol, _, _, err := loadOnce(d.Local.ConfigPath, paths, logger)
	if err != nil {
		return hook.Answer{}, err
	}
	j := pol.JudgeRead(c.Dir, c.Reads, c.ReadGlobs)
	what := strings.ToLower(c.Tool) + " of " + j.Path
	switch {
	case j.DenyRule != "":
		return hook.Answer{Verdict: hook.Deny, Rule: gate.RuleDenyRule, Reason: "warden blocked this " + strings.ToLower(c.Tool) + ": a deny rule of the user covers it. Do not retry it or variations of it."}, nil
	case j.Match.Tier == protect.Hardline:
		return hook.Answer{Verdict: hook.Deny, Rule: gate.RuleHardline, Classes: []string{j.Match.Class},
			Reason: "warden blocked this " + what + ": " + j.Match.Why + " is out of the agent's reach. Do not retry it or variations of it."}, nil
	case j.Match.Protected():
		return hook.Answer{Verdict: hook.Ask, Rule: RuleSecretRead, Classes: []string{j.Match.Class},
			Reason: what + " reads " + j.Match.Why + " [" + j.Match.Class + "]: what the agent reads can leave in its next message"}, nil
	}
	return hook.Answer{Verdict: hook.Pass}, nil
}

// vouched reports whether a person stands behind an allow: a human
// answered the question (requestID, rule human), or a grant a human
// made or an mcp.rules allow the operator wrote covers it. A safe
// command, a bypass (mode off, yolo, a container backend) and a
// reviewer model's approval are not: a hook answers those with no
// decision (hook.Answer.Vouched), so the agent's own guard still
// applies.
func vouched(rule, requestID string) bool {
	switch rule {
	case gate.RuleHuman, gate.RuleToolAllow, gate.RuleGrantExact, gate.RuleGrantPrefix, gate.RuleGrantClass:
		return true
	}
	return requestID != ""
}

// RuleSecretRead is the rule of a hook's ask for a read of a secret.
const RuleSecretRead = "hook.secret_read"

// why is the gate's explanation for a person without its "VERDICT
// (RULE): " prefix, which the hook answer carries in fields of its own:
// "shell command `git push -f` — git force push [git.force_push]".
func why(human, verdict, rule string) string {
	return strings.TrimPrefix(human, fmt.Sprintf("%s (%s): ", verdict, rule))
}

// agentPrompt is the answer channel of an external agent when no host
// runs: the agent's own permission prompt, which warden reaches only by
// answering ask.
type agentPrompt string

// Surface implements owner.AnswerChannel.
func (p agentPrompt) Surface() string { return string(p) }

// local decides c with a local gate.
func (d ExternalDecider) local(ctx context.Context, c hook.Call) (hook.Answer, error) {
	l, err := OpenLocal(ctx, d.Local)
	if err != nil {
		return hook.Answer{}, err
	}
	defer l.Close(context.WithoutCancel(ctx), "hook answered")
	o, err := owner.ExternalSession(c.Agent, c.Session, agentPrompt(c.Agent))
	if err != nil {
		return hook.Answer{}, err
	}
	dec, err := l.Advise(ctx, o, c.Action)
	if err != nil {
		return hook.Answer{}, err
	}
	a := hook.Answer{Verdict: hook.Verdict(dec.Verdict), Rule: dec.Rule, Classes: dec.Classes, Reason: why(dec.HumanMessage, string(dec.Verdict), dec.Rule),
		Vouched: dec.Verdict == gate.Allow && vouched(dec.Rule, "")}
	if dec.Verdict == gate.Deny {
		a.Reason = dec.AgentMessage
	}
	return a, nil
}

// Advise decides act as o and audits the decision, without asking
// anyone: an ask is returned for the caller to put to its own human
// (warden hook with no host running). The decision is written before it
// is returned; if it cannot be, the answer is an error (deny).
func (l *Local) Advise(ctx context.Context, o owner.Owner, act action.Action) (gate.Decision, error) {
	ownerJSON, err := json.Marshal(o)
	if err != nil {
		return gate.Decision{}, fmt.Errorf("advise: %w", err)
	}
	if err := l.Store.UpsertSession(ctx, store.SessionRow{Key: o.SessionKey(), Owner: ownerJSON, OwnerText: o.String(), Created: time.Now()}); err != nil {
		return gate.Decision{}, fmt.Errorf("advise: %w", err)
	}
	return l.Runner.Advise(owner.With(ctx, o), act)
}
