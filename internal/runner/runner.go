// Package runner is the one path an action takes in the host: the gate
// decides as the owner in the context; the decision is audited; if a
// human must answer, the broker asks on the owner's surfaces and the
// answer is audited too; only then does the action run. Nothing runs
// whose decision was not written first (invariant 8).
//
// The runner is the only writer of decisions to the audit log (a test in
// internal/archtest holds every other package to that): tools' actions
// (Authorize), advice for agents warden only judges (Advise) and MCP
// servers' questions (Elicit) alike. The records of a question's life —
// asked, answered, expired, withdrawn — are written by the store in the
// same transaction as each change of the request (store.AskRecord,
// store.EndRecord), so an answer can never be given, nor an approved
// action run, without its record.
package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/audit"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/sandbox"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/tools"
)

// Options configure a Runner.
type Options struct {
	Gate *gate.Gate
	// Broker asks humans; nil means nobody can be asked, so an ask is a
	// deny.
	Broker   *broker.Broker
	Audit    store.Audit
	Terminal tools.Terminal
	// Sessions, if set, runs the commands of owners with a session key
	// with that session's shell state (shellstate); others still run
	// through Terminal. The state is keyed by the owner's session key
	// only and never changes the owner or what the gate decides.
	Sessions Sessions
	Now      func() time.Time
	Logger   *slog.Logger
}

// Sessions gives a session's calls their shell state (implemented by
// *shellstate.Manager through SessionsOf).
type Sessions interface {
	// Begin starts a call of session key.
	Begin(ctx context.Context, key string) SessionCall
}

// SessionCall is one call of a session.
type SessionCall interface {
	// Dir is the directory the call runs in, given the one requested.
	Dir(requested string) string
	// Definitions is the shell text of the session's functions and
	// aliases command may call, as Run restores them; "" if none.
	Definitions(command string) string
	// Run runs command in dir with the session's state and saves what
	// it left; calls of one session's Run do not interleave.
	Run(ctx context.Context, command, dir string, stdout, stderr io.Writer) (int, error)
	// End ends the call.
	End()
}

// Runner authorises and runs actions.
type Runner struct {
	o   Options
	log *slog.Logger
}

// New returns a Runner.
func New(o Options) *Runner {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Runner{o: o, log: o.Logger.With("component", "runner")}
}

// Outcome is the end of authorisation.
type Outcome struct {
	// Decision is the gate's. When a human was asked its Analysis is
	// nil: the request carries the analysis (Request.Analysis), and a
	// question that waits keeps no copy of the tree.
	Decision gate.Decision
	// Request is the question a human answered (or that expired or was
	// withdrawn), if one was asked.
	Request *store.Request
	Allowed bool
	// Message tells a denied agent what happened; for a human's denial it
	// carries the human's reason.
	Message string
}

// Authorize decides act as the owner bound to ctx, asks a human when the
// gate says so, and audits every decision before returning. It runs
// nothing. An asker that wants to hear of its question makes the owner
// in ctx broker.Notifying.
//
// An allow or deny is recorded here. An ask is recorded with its request
// (the store writes the ask when it creates the request, and the answer
// when it ends it, each in the same transaction); an asker that joins an
// identical pending request records its own ask with that request's id;
// an ask that could not be put to anyone is recorded here, with why.
func (r *Runner) Authorize(ctx context.Context, act action.Action) (Outcome, error) {
	out, p, err := r.Begin(ctx, act)
	if p == nil {
		return out, err
	}
	return p.Wait(ctx)
}

// Pending is an authorisation whose question waits for a human (Begin).
type Pending struct {
	r    *Runner
	o    owner.Owner
	act  action.Action
	d    gate.Decision // without its Analysis (see Outcome)
	what string        // the analysed command, for humanMessage
	pend *broker.Pending
}

// Begin is Authorize up to its question: it decides and audits act,
// and when a human must be asked it puts the question and returns a
// Pending whose Wait waits for the answer (with ctx or one carrying the
// same values) and gives Authorize's outcome. Otherwise the Pending is
// nil and the outcome final. Splitting the two lets a host that holds
// many questions wait for each in a goroutine whose stack never held
// the gate's work (broker.Put).
func (r *Runner) Begin(ctx context.Context, act action.Action) (Outcome, *Pending, error) {
	o, _ := owner.From(ctx)
	d, derr := r.o.Gate.Decide(ctx, act)
	if derr != nil {
		r.log.WarnContext(ctx, "gate failed closed", "err", derr)
	}
	out := Outcome{Decision: d}
	if d.Verdict != gate.Ask {
		if err := r.record(ctx, audit.Record(r.o.Now(), o, act, d, nil)); err != nil {
			return denied(out, err), nil, err
		}
	}
	switch d.Verdict {
	case gate.Allow:
		out.Allowed = true
		return out, nil, nil
	case gate.Deny:
		out.Message = d.AgentMessage
		return out, nil, nil
	}
	notAsked := func(err error) (Outcome, *Pending, error) {
		rec := audit.Record(r.o.Now(), o, act, d, nil)
		rec.Reason = "not asked: " + err.Error()
		if rerr := r.record(ctx, rec); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return denied(out, err), nil, err
	}
	if r.o.Broker == nil {
		return notAsked(fmt.Errorf("ask %s: %w", o, broker.ErrNoChannel))
	}
	// The question (and p, which its follower's ask record reads) lives
	// as long as it waits: it keeps the verdict, not the analysis tree.
	p := &Pending{r: r, o: o, act: act, d: d, what: "this action"}
	if d.Analysis != nil {
		p.what = "`" + d.Analysis.Input + "`"
		p.d.Analysis = nil
	}
	joined := func(req store.Request) error {
		rec := audit.Record(r.o.Now(), p.o, p.act, p.d, nil)
		rec.RequestID = req.ID
		return r.record(ctx, rec)
	}
	// The broker keeps the analysis as JSON (for display and for
	// checking a prefix grant); it never imports the analyser's types.
	var analysis json.RawMessage
	if d.Analysis != nil {
		var err error
		if analysis, err = json.Marshal(d.Analysis); err != nil {
			return notAsked(err)
		}
	}
	pend, req, err := r.o.Broker.Put(ctx, broker.Question{Owner: o, Action: act, Classes: d.Classes, Rule: d.Rule, Analysis: analysis,
		Timeout: r.o.Gate.Policy().Timeout, Notice: d.Notice, Joined: joined})
	if err != nil {
		return notAsked(err)
	}
	p.pend = pend
	if pend == nil {
		return p.outcome(req), nil, nil
	}
	return Outcome{Decision: p.d}, p, nil
}

// Await waits for the human's answer without building the outcome (see
// broker.Pending.Await); Wait then returns at once.
func (p *Pending) Await(ctx context.Context) { p.pend.Await(ctx) }

// Wait waits for the human's answer and returns the outcome Authorize
// would have.
func (p *Pending) Wait(ctx context.Context) (Outcome, error) {
	req, err := p.pend.Wait(ctx)
	if err != nil {
		// Only a follower asking again can fail here: record it as
		// Authorize records an ask it could not put.
		rec := audit.Record(p.r.o.Now(), p.o, p.act, p.d, nil)
		rec.Reason = "not asked: " + err.Error()
		if rerr := p.r.record(ctx, rec); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return denied(Outcome{Decision: p.d}, err), err
	}
	return p.outcome(req), nil
}

// outcome is the authorisation's outcome once its question ended as req.
func (p *Pending) outcome(req store.Request) Outcome {
	out := Outcome{Decision: p.d, Request: &req}
	out.Allowed = broker.Approved(req)
	if out.Allowed {
		p.r.o.Gate.HumanApproved(p.o.SessionKey())
	} else {
		out.Message = humanMessage(req, p.what)
	}
	return out
}

// Refused audits an answer that was not taken: by (on surface) was not
// allowed to answer req, or answered from the wrong place, for why. The
// request is left as it was; the record keeps who tried.
func (r *Runner) Refused(ctx context.Context, req store.Request, by, surface, why string) error {
	if err := r.record(ctx, audit.Refusal(r.o.Now(), req, by, surface, why)); err != nil {
		return fmt.Errorf("refused answer to %s: %w", req.ID, err)
	}
	return nil
}

// Advise decides act as the owner bound to ctx and audits the decision,
// without asking anyone and without running anything: an ask is returned
// for the caller to put to its own human (warden hook with no host
// running). The decision is written before it is returned; if it cannot
// be, the answer is an error (deny).
func (r *Runner) Advise(ctx context.Context, act action.Action) (gate.Decision, error) {
	o, _ := owner.From(ctx)
	d, derr := r.o.Gate.Decide(ctx, act)
	if err := r.record(ctx, audit.Record(r.o.Now(), o, act, d, nil)); err != nil {
		return gate.Decision{}, fmt.Errorf("advise: %w", err)
	}
	if derr != nil {
		return gate.Decision{}, fmt.Errorf("advise: %w", derr)
	}
	return d, nil
}

// Elicit puts an MCP server's question (q.Elicit set) to the human of
// q.Owner and waits for how it ends. The question and its end are
// audited by the store with the request (rules mcp.elicitation and
// mcp.elicitation.accept, .decline or .cancel), so the server can only
// hear an answer that is on record. broker.ErrNoChannel: nobody can be
// asked.
func (r *Runner) Elicit(ctx context.Context, q broker.Question) (store.Request, error) {
	if q.Elicit == nil {
		return store.Request{}, errors.New("elicit: not an elicitation")
	}
	if r.o.Broker == nil {
		return store.Request{}, fmt.Errorf("elicit: %w", broker.ErrNoChannel)
	}
	q.Rule = store.RuleElicitation
	return r.o.Broker.Ask(ctx, q)
}

// record writes an audit record; a failure blocks the action.
func (r *Runner) record(ctx context.Context, rec store.Decision) error {
	if r.o.Audit == nil {
		return errors.New("no audit log")
	}
	if rec.Sandbox == "" {
		rec.Sandbox = sandbox.Label(r.o.Terminal.Sandbox)
	}
	if _, err := r.o.Audit.AppendDecision(context.WithoutCancel(ctx), rec); err != nil {
		return fmt.Errorf("audit decision: %w", err)
	}
	return nil
}

func denied(out Outcome, err error) Outcome {
	out.Allowed = false
	out.Message = "warden blocked this action: it could not be authorised (" + err.Error() + "). Do not retry it or variations of it; tell the user."
	return out
}

// humanMessage tells the agent how a question ended without approval.
// A timeout or withdrawal is never reported as the user's denial.
func humanMessage(req store.Request, what string) string {
	switch req.State {
	case store.Denied:
		msg := "The user denied " + what + "."
		if req.Reason != "" {
			msg += " Their reason: " + req.Reason + "."
		}
		return msg + " Do not retry it or variations of it."
	case store.Expired:
		return "Nobody answered the approval request for " + what + " in time, so it was not run; silence is not consent. Do not retry it or variations of it; tell the user it needs their approval."
	}
	return "The approval request for " + what + " was withdrawn (" + req.Reason + "); the user did not answer it. It was not run. Do not retry it automatically."
}

// Shell authorises a shell command as the owner in ctx and, if allowed,
// runs it, streaming its output. It returns the command's exit code, or
// -1 when it did not run.
//
// For an owner with a session key and a runner with Sessions, the
// command runs with that session's shell state. The gate decides the raw
// command in the directory it will really run in (the session's saved
// directory, read before the decision and used for the run whatever
// happens meanwhile): restored state never changes the owner or the
// decision.
func (r *Runner) Shell(ctx context.Context, command, dir string, stdout, stderr io.Writer) (Outcome, int, error) {
	_, rest := r.ShellStart(ctx, command, dir, stdout, stderr)
	return rest()
}

// ShellStart is Shell up to its question: it returns the question if
// one was put (nil if none; Await it to wait under few frames) and the
// rest of Shell, which waits for the human if one was asked, then runs
// the command, all under ctx. The rest must be called once; another
// goroutine may call it (see Begin).
func (r *Runner) ShellStart(ctx context.Context, command, dir string, stdout, stderr io.Writer) (*Pending, func() (Outcome, int, error)) {
	// The directory asked for is the call's writable workspace, even
	// where the session's shell has moved with cd.
	ctx = withWorkspace(ctx, dir)
	var call SessionCall
	if o, _ := owner.From(ctx); r.o.Sessions != nil && o.SessionKey() != "" {
		call = r.o.Sessions.Begin(ctx, o.SessionKey())
		dir = call.Dir(dir)
	}
	out, p, err := r.Begin(ctx, action.NewShell(command).In(dir))
	return p, func() (Outcome, int, error) {
		if call != nil {
			defer call.End()
		}
		if p != nil {
			out, err = p.Wait(ctx)
		}
		return r.shellRun(ctx, call, out, err, command, dir, stdout, stderr)
	}
}

// shellRun is the rest of Shell once the command was authorised (out,
// err).
func (r *Runner) shellRun(ctx context.Context, call SessionCall, out Outcome, err error, command, dir string, stdout, stderr io.Writer) (Outcome, int, error) {
	if err != nil || !out.Allowed {
		return out, -1, err
	}
	if call != nil {
		// The command may call the session's functions and aliases, whose
		// bodies the raw command does not show: the gate also decides the
		// command as bash will run it, definitions first.
		if defs := call.Definitions(command); defs != "" {
			if out, err = r.Authorize(ctx, action.NewShell(defs+command).In(dir)); err != nil || !out.Allowed {
				return out, -1, err
			}
		}
	}
	var code int
	if call != nil {
		code, err = call.Run(ctx, command, dir, stdout, stderr)
	} else {
		code, err = r.o.Terminal.Run(ctx, command, dir, stdout, stderr)
	}
	return out, code, err
}

// Code authorises source as a code action and, if allowed, runs it with
// the execute_code tool.
func (r *Runner) Code(ctx context.Context, language, source, dir string, stdout, stderr io.Writer) (Outcome, int, error) {
	ctx = withWorkspace(ctx, dir)
	out, err := r.Authorize(ctx, action.NewCode(language, source).In(dir))
	if err != nil || !out.Allowed {
		return out, -1, err
	}
	code, err := tools.Code{Terminal: r.o.Terminal}.Run(ctx, language, source, dir, stdout, stderr)
	return out, code, err
}

// withWorkspace binds dir (the host's working directory when empty) as
// the workspace of the commands run under ctx, unless the caller bound
// one already (an external agent's project directory, where its cwd is
// elsewhere).
func withWorkspace(ctx context.Context, dir string) context.Context {
	if sandbox.WorkspaceFrom(ctx) != "" {
		return ctx
	}
	if dir == "" {
		if wd, err := os.Getwd(); err == nil {
			dir = wd
		}
	}
	return sandbox.WithWorkspace(ctx, dir)
}

// WriteFile authorises a write of path (inside files' root) and, if
// allowed, writes data.
func (r *Runner) WriteFile(ctx context.Context, files tools.Files, path string, data []byte) (Outcome, error) {
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(files.Root, path)
	}
	out, err := r.Authorize(ctx, action.NewWrite(abs, int64(len(data))).In(files.Root))
	if err != nil || !out.Allowed {
		return out, err
	}
	return out, files.WriteFile(abs, data)
}
