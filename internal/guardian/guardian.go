// Package guardian is the security reviewer of approvals.mode smart: a
// model that looks at a dangerous action of an attended owner and
// answers approve, deny or escalate (ask the human), implementing
// gate.Guardian over an llm.Client.
//
// The action is untrusted data: it is sent as a JSON block the model is
// told never to obey, and the rules and the operator's smart_policy live
// in the system prompt only. The guardian fails towards the human: an
// error, a timeout, an empty, truncated or malformed reply, or data it
// will not show the model is an escalation, never an approval. After
// FailureThreshold failures in a row a session is in manual mode for a
// cool-down: the model is not called for it, every review escalates with
// a notice saying so, and the first real verdict after the cool-down
// ends it.
//
// A guardian approval is a one-off Allow: it records no grant (the gate
// writes none for rule guardian.approve), so the next action is
// reviewed again. The gate's circuit breaker counts guardian denials
// only; the failures counted here never reach it.
package guardian

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/llm"
)

// Defaults of Options.
const (
	// DefaultCooldown is how long a session stays in manual mode.
	DefaultCooldown = 5 * time.Minute
	// DefaultMaxSessions bounds the failure tally.
	DefaultMaxSessions = 256
)

// Options configure a Guardian.
type Options struct {
	// Client is the model; required.
	Client llm.Client
	// Model overrides the client's model (llm.guardian_model); "" keeps
	// it.
	Model string
	// MaxTokens is the completion budget (llm.guardian_max_tokens),
	// large enough that a reasoning model does not spend it all
	// thinking; 0 means config.DefaultGuardianMaxTokens.
	MaxTokens int
	// Timeout bounds one review (llm.guardian_timeout); 0 means
	// config.DefaultGuardianTimeout.
	Timeout time.Duration
	// Policy is the operator's approvals.smart_policy, added to the
	// system prompt.
	Policy string
	// FailureThreshold is approvals.smart_failure_threshold; 0 means
	// config.DefaultSmartFailureThreshold.
	FailureThreshold int
	// Cooldown is how long a session stays in manual mode; 0 means
	// DefaultCooldown.
	Cooldown time.Duration
	// MaxSessions bounds the failure tally; 0 means DefaultMaxSessions.
	MaxSessions int
	// Now is the clock of the cool-down; nil means time.Now.
	Now func() time.Time
	// Logger receives a warning per failure and per fall-back; nil
	// discards.
	Logger *slog.Logger
}

// Guardian reviews actions with a model. It is safe for concurrent use.
type Guardian struct {
	client    llm.Client
	model     string
	maxTokens int
	timeout   time.Duration
	system    string
	threshold int
	cooldown  time.Duration
	now       func() time.Time
	log       *slog.Logger
	tally     *tally
}

var _ gate.Guardian = (*Guardian)(nil)

// New returns a Guardian.
func New(o Options) (*Guardian, error) {
	if o.Client == nil {
		return nil, fmt.Errorf("guardian: %w", llm.ErrNotConfigured)
	}
	if o.MaxTokens < 0 || o.Timeout < 0 || o.FailureThreshold < 0 || o.Cooldown < 0 || o.MaxSessions < 0 {
		return nil, errors.New("guardian: negative option")
	}
	g := &Guardian{
		client: o.Client, model: o.Model, system: systemPrompt(o.Policy),
		maxTokens: or(o.MaxTokens, config.DefaultGuardianMaxTokens),
		timeout:   or(o.Timeout, config.DefaultGuardianTimeout),
		threshold: or(o.FailureThreshold, config.DefaultSmartFailureThreshold),
		cooldown:  or(o.Cooldown, DefaultCooldown),
		tally:     newTally(or(o.MaxSessions, DefaultMaxSessions)),
		now:       o.Now,
		log:       o.Logger,
	}
	if g.now == nil {
		g.now = time.Now
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	g.log = g.log.With("component", "guardian")
	return g, nil
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Review asks the model about one action. It never returns an error:
// every failure is an escalation whose Notice tells the human why they
// are being asked.
func (g *Guardian) Review(ctx context.Context, r gate.Review) (gate.GuardianResult, error) {
	session := r.Owner.SessionKey()
	if session == "" {
		session = r.Owner.String()
	}
	if n, manual := g.tally.manual(session, g.now()); manual {
		return g.manualResult(n), nil
	}
	prompt, err := userPrompt(r)
	if err != nil {
		// The action itself is the problem, not the reviewer: escalate
		// without counting a failure.
		g.log.WarnContext(ctx, "action not sent to the security reviewer", "session", session, "classes", r.Classes, "err", err)
		return gate.GuardianResult{Verdict: gate.GuardianEscalate, Reason: "not reviewed: " + err.Error(),
			Notice: "The security reviewer was not asked (" + err.Error() + "), so you are asked instead. Nothing was auto-approved."}, nil
	}
	v, reason, err := g.ask(ctx, prompt)
	if err != nil {
		return g.failed(ctx, session, r, err), nil
	}
	if g.tally.succeed(session) {
		g.log.InfoContext(ctx, "security reviewer answered again; manual fall-back ended", "session", session)
	}
	return gate.GuardianResult{Verdict: v, Reason: reason}, nil
}

// ask runs one model call within the review timeout and parses its
// verdict.
func (g *Guardian) ask(ctx context.Context, prompt string) (gate.GuardianVerdict, string, error) {
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	temp := 0.0
	resp, err := g.client.Complete(ctx, llm.Request{
		Model: g.model,
		Messages: []llm.Message{
			{Role: llm.System, Content: g.system},
			{Role: llm.User, Content: prompt},
		},
		MaxTokens:   g.maxTokens,
		Temperature: &temp,
		JSONSchema:  verdictSchema,
		SchemaName:  "guardian_verdict",
	})
	switch {
	case err != nil:
		return "", "", err
	case len(resp.Message.ToolCalls) > 0:
		return "", "", fmt.Errorf("%w: the reply called a tool", errReply)
	case resp.FinishReason == "length":
		return "", "", fmt.Errorf("%w: the reply was cut off at %d tokens", errReply, g.maxTokens)
	}
	return parseVerdict(resp.Message.Content)
}

// failed records a failure and returns the escalation.
func (g *Guardian) failed(ctx context.Context, session string, r gate.Review, err error) gate.GuardianResult {
	why := describe(err)
	// The caller giving up (the agent run was cancelled) says nothing
	// about the reviewer; only the reviewer's own failures count.
	if ctx.Err() != nil {
		return gate.GuardianResult{Verdict: gate.GuardianEscalate, Reason: "reviewer failed: " + why,
			Notice: "The security reviewer could not decide (" + why + "), so you are asked instead. Nothing was auto-approved."}
	}
	n, manual := g.tally.fail(session, g.now(), g.threshold, g.cooldown)
	g.log.WarnContext(ctx, "security reviewer failed", "session", session, "classes", r.Classes, "streak", n, "err", err)
	if manual {
		g.log.WarnContext(ctx, "security reviewer failing; session falls back to manual approval", "session", session, "streak", n, "cooldown", g.cooldown)
		res := g.manualResult(n)
		res.Reason += " (last: " + why + ")"
		return res
	}
	return gate.GuardianResult{Verdict: gate.GuardianEscalate, Reason: "reviewer failed: " + why,
		Notice: "The security reviewer could not decide (" + why + "), so you are asked instead. Nothing was auto-approved."}
}

func (g *Guardian) manualResult(n int) gate.GuardianResult {
	return gate.GuardianResult{
		Verdict: gate.GuardianEscalate,
		Reason:  fmt.Sprintf("reviewer in manual fall-back after %d failures", n),
		Notice: fmt.Sprintf("The security reviewer failed %d times in a row; this session is in manual mode for %s and you decide each dangerous action. Nothing was auto-approved.",
			n, g.cooldown),
	}
}

// describe is a short, key-free account of a failure for the human.
func describe(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "it timed out"
	case errors.Is(err, errReply):
		return "its reply was not a valid verdict: " + err.Error()
	case errors.Is(err, llm.ErrUnavailable), errors.Is(err, llm.ErrRefused):
		return "the model could not be used: " + clip(err.Error(), 200)
	}
	return clip(err.Error(), 200)
}
