package localapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/hookrun"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/sandbox"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/tools"
)

// ExternalRequest is the body of POST /v1/external/decide and POST
// /v1/external/run: another agent's action, decided as the attended
// owner external:AGENT/SESSION whose human answers on the console (the
// same answer channel web sessions use), with the session key
// owner.ExternalKey(Agent, Session).
type ExternalRequest struct {
	// Agent names the agent ("claude-code", an MCP client's name).
	Agent string `json:"agent"`
	// Session is the agent's own session id.
	Session string `json:"session"`
	// Action is what it wants to do. Action.Dir, when set, must be
	// absolute; run requires it for write actions (the root the path
	// must stay inside).
	Action action.Action `json:"action"`
	// Content is what a write action writes (run only).
	Content string `json:"content,omitempty"`
	// Workspace, when set, is the absolute directory the agent works
	// in: the writable root of its commands (run only), wherever
	// Action.Dir points. Empty means Action.Dir.
	Workspace string `json:"workspace,omitempty"`
}

// EventDecision is the last event of /v1/external/decide: Decision says
// how it ended.
const EventDecision = "decision"

// Decision is how an external agent's action was decided. It is
// hookrun's, which the warden-hook binary reads without linking this
// package.
type Decision = hookrun.Decision

// errExternalGone is the cause of a withdrawal when the external agent's
// client (a hook, warden mcp) hangs up while its question is pending.
var errExternalGone = errors.New("the external agent's client disconnected")

// externalOwner validates req and returns its owner, or a status and
// message for the client.
func (s *Server) externalOwner(ctx context.Context, req ExternalRequest) (owner.Owner, int, error) {
	switch {
	case req.Agent == "":
		return owner.Owner{}, http.StatusBadRequest, errors.New("no agent name")
	case req.Session == "":
		return owner.Owner{}, http.StatusBadRequest, errors.New("no session id")
	case req.Action.Dir != "" && !filepath.IsAbs(req.Action.Dir):
		return owner.Owner{}, http.StatusBadRequest, fmt.Errorf("dir %q is not absolute", req.Action.Dir)
	// The agent must not vouch for its own action: an isolated backend
	// would bypass asking, and a read-only hint is an MCP server's.
	case req.Action.Isolated():
		return owner.Owner{}, http.StatusBadRequest, errors.New("an external agent's action runs on this host; it cannot name a backend")
	case req.Action.ReadOnly:
		return owner.Owner{}, http.StatusBadRequest, errors.New("an external agent cannot mark its own action read-only")
	}
	if err := req.Action.Validate(); err != nil {
		return owner.Owner{}, http.StatusBadRequest, err
	}
	o, err := owner.ExternalSession(req.Agent, req.Session, s.o.Channel)
	if err != nil {
		return owner.Owner{}, http.StatusBadRequest, err
	}
	if status, err := s.session(ctx, o); err != nil {
		return owner.Owner{}, status, err
	}
	return o, 0, nil
}

// streamContext is the context of a streaming request's work: it
// outlives nothing but the client, whose hang-up cancels it with cause
// gone (a pending question is then withdrawn, not denied), and it
// carries o.
func streamContext(r *http.Request, o owner.Owner, gone error) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	stop := context.AfterFunc(r.Context(), func() {
		cause := context.Cause(r.Context())
		if cause == context.Canceled {
			cause = gone // the server's plain cancel: the client hung up
		}
		cancel(cause)
	})
	return owner.With(ctx, o), func() { stop(); cancel(nil) }
}

// readExternal decodes and checks an external request; on failure it
// has answered the client.
func (s *Server) readExternal(w http.ResponseWriter, r *http.Request) (ExternalRequest, owner.Owner, bool) {
	var req ExternalRequest
	if !decode(w, r, &req) {
		return req, owner.Owner{}, false
	}
	o, status, err := s.externalOwner(r.Context(), req)
	if err != nil {
		if status == http.StatusInternalServerError {
			s.fail(w, r, "open session", err)
		} else {
			writeError(w, status, err.Error())
		}
		return req, owner.Owner{}, false
	}
	return req, o, true
}

// externalDecide decides an external agent's action without running it
// (the agent runs it itself: a Claude Code hook) and streams a pending
// event if a human is asked, then the decision. The decision is
// audited before it is sent, like every other.
func (s *Server) externalDecide(w http.ResponseWriter, r *http.Request) {
	req, o, ok := s.readExternal(w, r)
	if !ok {
		return
	}
	peer := mustPeer(r.Context()).String()
	s.serveStream(w, r, o, errExternalGone, func(ctx context.Context, st *stream) (*runner.Pending, func()) {
		s.log.InfoContext(ctx, "external decide", "owner", o.String(), "kind", req.Action.Kind, "peer", peer)
		ctx = broker.WithNotify(ctx, s.pending(st))
		out, p, err := s.o.Runner.Begin(ctx, req.Action)
		return p, func() {
			if p != nil {
				out, err = p.Wait(ctx)
			}
			if err != nil {
				s.log.WarnContext(ctx, "external action not authorised", "owner", o.String(), "err", err)
			}
			st.send(Event{Event: EventDecision, Decision: decisionOf(out, o)})
		}
	})
}

// externalRun decides an external agent's action and, if allowed, runs
// it in the host (warden mcp), streaming output and the exit status as
// exec does. Shell, code and write actions only.
func (s *Server) externalRun(w http.ResponseWriter, r *http.Request) {
	req, o, ok := s.readExternal(w, r)
	if !ok {
		return
	}
	act := req.Action
	switch act.Kind {
	case action.Shell, action.Code:
	case action.Write:
		if act.Dir == "" {
			writeError(w, http.StatusBadRequest, "a write needs dir: the root its path must stay inside")
			return
		}
	default:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("cannot run a %s action in the host", act.Kind))
		return
	}
	if req.Workspace != "" && !filepath.IsAbs(req.Workspace) {
		writeError(w, http.StatusBadRequest, "workspace must be an absolute path")
		return
	}
	peer := mustPeer(r.Context()).String()
	s.serveStream(w, r, o, errExternalGone, func(ctx context.Context, st *stream) (*runner.Pending, func()) {
		if req.Workspace != "" {
			ctx = sandbox.WithWorkspace(ctx, filepath.Clean(req.Workspace))
		}
		s.log.InfoContext(ctx, "external run", "owner", o.String(), "kind", act.Kind, "peer", peer)
		ctx = broker.WithNotify(ctx, s.pending(st))
		stdout, stderr := st.writer(EventStdout), st.writer(EventStderr)
		var (
			p    *runner.Pending
			rest func() (runner.Outcome, int, error)
		)
		switch act.Kind {
		case action.Shell:
			p, rest = s.o.Runner.ShellStart(ctx, act.Command, act.Dir, stdout, stderr)
		case action.Code:
			// Code and writes wait for their human in the rest, under
			// deeper frames than a shell command's.
			rest = func() (runner.Outcome, int, error) {
				return s.o.Runner.Code(ctx, act.Language, act.Source, act.Dir, stdout, stderr)
			}
		case action.Write:
			rest = func() (runner.Outcome, int, error) {
				out, err := s.o.Runner.WriteFile(ctx, tools.Files{Root: act.Dir}, act.Path, []byte(req.Content))
				return out, 0, err
			}
		}
		return p, func() {
			out, code, err := rest()
			if !out.Allowed && err != nil {
				s.log.WarnContext(ctx, "external action not authorised", "owner", o.String(), "err", err)
			}
			st.sendOutcome(out, code, err)
		}
	})
}

// pending returns the callback that streams a pending request.
func (s *Server) pending(st *stream) func(store.Request) {
	return func(p store.Request) {
		st.send(Event{Event: EventPending, ID: p.ID, Console: s.o.Console(p.ID), Deadline: p.Deadline})
	}
}

// decisionOf is an authorisation's outcome as the decide stream reports
// it. A denial always carries a message, so the agent is never told
// "no" without why.
func decisionOf(out runner.Outcome, o owner.Owner) *Decision {
	d := &Decision{
		Allowed: out.Allowed, Verdict: string(out.Decision.Verdict), Rule: out.Decision.Rule,
		Classes: out.Decision.Classes, Reason: out.Decision.HumanMessage, Session: o.SessionKey(),
	}
	if d.Classes == nil {
		d.Classes = []string{}
	}
	if out.Request != nil {
		d.RequestID, d.State = out.Request.ID, string(out.Request.State)
	}
	if !out.Allowed {
		d.Message = strings.TrimSpace(out.Message)
		if d.Message == "" {
			d.Message = "warden blocked this action. Do not retry it or variations of it."
		}
	}
	return d
}
