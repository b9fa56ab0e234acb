// Package hook maps other agents' tool calls to warden actions and
// warden's decisions back to those agents' hook protocols: Claude Code's
// PreToolUse hook (ClaudeCode), Codex's PreToolUse hook (Codex), Gemini
// CLI's BeforeTool hook (Gemini) and warden's own generic JSON protocol
// (Generic). It is pure mapping: it reads no environment, opens no
// socket and runs nothing. Who decides — a running host's gate, or a
// local one when no host runs — is a Decider the caller supplies.
//
// A hook never weakens the agent's own guard: for an agent with a
// permission system of its own (a Guarded protocol), an allow that no
// human stands behind (a safe command, a bypass mode) is answered with
// no decision, so the agent's own rules still apply, unless
// Options.AllowSafe says otherwise.
//
// Every failure fails closed: input that cannot be read or mapped, and
// a Decider that errs, become a deny with the reason, rendered the way
// the protocol blocks most reliably (for Claude Code, exit status 2
// with the reason on stderr, which blocks even when stdout is not read).
package hook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wardenhq/warden/internal/action"
)

// MaxInput bounds a hook payload. A Claude Code Write carries the whole
// file in tool_input.content, so the cap is generous; a payload beyond
// it is denied, never truncated and decided on.
const MaxInput = 8 << 20

// ErrMalformed is wrapped by every parse error: the payload could not
// be read or mapped to an action.
var ErrMalformed = errors.New("malformed hook payload")

// Call is one tool call another agent asks warden about.
type Call struct {
	// Agent names the agent ("claude-code"), and Session is its session
	// id: together they are the owner external:AGENT/SESSION.
	Agent   string
	Session string
	// Tool is the agent's name for the tool ("Bash", "mcp__github__x").
	Tool string
	// Action is what the call does. It is zero when Pass is set.
	Action action.Action
	// Extra are further actions of the same call (a Codex patch that
	// touches several files): each is decided, and the worst answer is
	// the call's.
	Extra []action.Action
	// Pass is set for tools warden does not decide (Claude Code's Read,
	// Glob, Grep, WebFetch…): the agent goes on with its own rules.
	Pass bool
	// Reads and ReadGlobs are what a passed call reads (Claude Code's
	// Read, Grep and Glob): paths, absolute or relative to Dir, and
	// patterns. A ReadDecider may still answer for them: reading a
	// secret is not the agent's own business.
	Reads, ReadGlobs []string
	Dir              string
}

// ReadDecider judges the reads of a passed call. A Decider that is one
// gets the calls with Reads or ReadGlobs; Pass lets them through.
type ReadDecider interface {
	DecideRead(ctx context.Context, c Call) (Answer, error)
}

// Verdict is a hook answer's verdict.
type Verdict string

// Verdicts. Pass is no verdict: the agent applies its own rules.
const (
	Allow Verdict = "allow"
	Deny  Verdict = "deny"
	// Ask means the agent must ask its own human (no warden host was
	// running to ask one on the console).
	Ask  Verdict = "ask"
	Pass Verdict = "pass"
)

// Answer is warden's answer to a Call.
type Answer struct {
	Verdict Verdict
	// Reason says why, for the agent (a deny: what was blocked and not
	// to retry) or its human (an ask).
	Reason string
	// Rule is the gate's deciding rule; RequestID the question a human
	// answered on the console, if one was asked.
	Rule      string
	RequestID string
	Classes   []string
	// Vouched is set on an allow a person stands behind: a human
	// answered it, or a grant or rule the operator made covers it. An
	// allow that is not vouched (a safe command, a bypass mode, a
	// reviewer model) is answered with no decision by a Guarded
	// protocol unless Options.AllowSafe.
	Vouched bool
}

// Guarded is implemented by the protocols of agents with a permission
// system of their own, which a hook's allow would skip.
type Guarded interface {
	Protocol
	// Guarded is a marker.
	Guarded()
}

// Options tune Handle.
type Options struct {
	// AllowSafe answers allow, for a Guarded protocol, to every call
	// warden allows, as if a human had vouched for it (config
	// hook.allow_safe); by default such calls get no decision and the
	// agent's own permission rules apply.
	AllowSafe bool
}

// Decider decides a call. An error fails closed (Handle turns it into a
// deny).
type Decider interface {
	Decide(ctx context.Context, c Call) (Answer, error)
}

// Protocol is one agent's hook protocol.
type Protocol interface {
	// Parse maps a payload to a Call; errors wrap ErrMalformed.
	Parse(payload []byte) (Call, error)
	// Render returns what to print on stdout and stderr and the exit
	// status for an answer.
	Render(a Answer) Response
}

// Response is what a hook process prints and how it exits.
type Response struct {
	Stdout []byte
	Stderr string
	Exit   int
}

// Read reads a payload, at most MaxInput bytes.
func Read(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: read: %w", ErrMalformed, err)
	case len(b) > MaxInput:
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrMalformed, MaxInput)
	}
	return b, nil
}

// Handle reads one payload from in, decides it with d and returns what
// to answer. It never returns an allow it did not get from d: unreadable
// input, a payload it cannot map and a failing Decider all deny.
func Handle(ctx context.Context, p Protocol, in io.Reader, d Decider, o Options) Response {
	payload, err := Read(in)
	if err != nil {
		return p.Render(failed(err))
	}
	c, err := p.Parse(payload)
	if err != nil {
		return p.Render(failed(err))
	}
	if c.Pass {
		if rd, ok := d.(ReadDecider); ok && len(c.Reads)+len(c.ReadGlobs) > 0 {
			a, err := rd.DecideRead(ctx, c)
			if err != nil {
				return p.Render(failed(err))
			}
			switch a.Verdict {
			case Pass, Allow:
				return p.Render(Answer{Verdict: Pass})
			case Deny, Ask:
				return p.Render(a)
			}
			return p.Render(failed(fmt.Errorf("the decider gave no verdict for a read (%q)", a.Verdict)))
		}
		return p.Render(Answer{Verdict: Pass})
	}
	a, err := decide(ctx, d, c)
	if err != nil {
		return p.Render(failed(err))
	}
	if _, guarded := p.(Guarded); guarded && a.Verdict == Allow && !a.Vouched && !o.AllowSafe {
		// No human stands behind this allow: the agent's own rules
		// decide, as if no hook had run.
		a = Answer{Verdict: Pass, Rule: a.Rule, Classes: a.Classes}
	}
	if a.Verdict == Deny && strings.TrimSpace(a.Reason) == "" {
		a.Reason = "warden blocked this action. Do not retry it or variations of it."
	}
	return p.Render(a)
}

// decide decides c's action and each of its extra actions; the worst
// answer wins (deny, then ask, then no decision, then allow), and an
// allow is vouched only when every action's is.
func decide(ctx context.Context, d Decider, c Call) (Answer, error) {
	var worst Answer
	for i, act := range append([]action.Action{c.Action}, c.Extra...) {
		one := c
		one.Action, one.Extra = act, nil
		a, err := d.Decide(ctx, one)
		if err != nil {
			return Answer{}, err
		}
		if severity(a.Verdict) < 0 {
			return Answer{}, fmt.Errorf("the decider gave no verdict (%q)", a.Verdict)
		}
		switch {
		case i == 0 || severity(a.Verdict) > severity(worst.Verdict):
			worst = a
		case a.Verdict == Allow && worst.Verdict == Allow:
			worst.Vouched = worst.Vouched && a.Vouched
		}
	}
	return worst, nil
}

// severity orders verdicts from allow (0) to deny (3); -1 is none.
func severity(v Verdict) int {
	switch v {
	case Allow:
		return 0
	case Pass:
		return 1
	case Ask:
		return 2
	case Deny:
		return 3
	}
	return -1
}

// failed is the deny for a call warden could not decide.
func failed(err error) Answer {
	return Answer{
		Verdict: Deny, Rule: "error",
		Reason: "warden blocked this action: it could not be checked (" + err.Error() + "). Do not retry it or variations of it; tell the user.",
	}
}
