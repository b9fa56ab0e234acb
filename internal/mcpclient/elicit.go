package mcpclient

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/internal/owner"
)

// Elicitation modes.
const (
	// ModeForm asks the human to fill in a flat form (Question.Schema).
	ModeForm = "form"
	// ModeURL asks the human to open Question.URL themselves.
	ModeURL = "url"
)

// Elicitation actions, as the MCP protocol names them.
const (
	// ActionAccept: the human answered; Answer.Content holds the form.
	ActionAccept = "accept"
	// ActionDecline: the human (or warden, for an owner nobody can answer
	// for) said no.
	ActionDecline = "decline"
	// ActionCancel: no answer — dismissed, timed out, or failed.
	ActionCancel = "cancel"
)

// Question is what an MCP server asks the human during a tool call.
type Question struct {
	// Server is the configured name of the server asking.
	Server string
	// Message is the server's text for the human.
	Message string
	// Mode is ModeForm or ModeURL.
	Mode string
	// URL is the page to show as a link, for ModeURL.
	URL string
	// Schema is the requested form schema (a flat JSON object schema),
	// for ModeForm; nil if the server sent none.
	Schema json.RawMessage
}

// Answer is the human's reply to a Question.
type Answer struct {
	// Action is ActionAccept, ActionDecline or ActionCancel.
	Action string
	// Content is the form the human filled in, for ActionAccept.
	Content map[string]any
}

// Elicitor asks the human of owner o. The host implements it with the
// broker, which shows the question on o's surfaces only, applies the
// approvals deadline, and maps no answer to cancel.
//
// Elicit must return when ctx ends; the Manager stops waiting then
// anyway and answers cancel.
type Elicitor interface {
	Elicit(ctx context.Context, o owner.Owner, q Question) (Answer, error)
}

// ElicitorFunc adapts a function to Elicitor.
type ElicitorFunc func(ctx context.Context, o owner.Owner, q Question) (Answer, error)

// Elicit calls f.
func (f ElicitorFunc) Elicit(ctx context.Context, o owner.Owner, q Question) (Answer, error) {
	return f(ctx, o, q)
}

// errCallEnded ends an elicitation whose tool call is over: nobody is
// waiting for its answer any more.
var errCallEnded = errors.New("the tool call that asked has ended")

// handleElicit is the client's ElicitationHandler, for both protocol
// paths: a legacy elicitation/create request (on its own goroutine, its
// ctx not descending from the tool call's) and an InputRequests entry the
// SDK fulfils inside CallTool. Either way req.Session is the session the
// request belongs to, and that alone decides whose human is asked.
func (m *Manager) handleElicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	m.mu.Lock()
	s := m.bySession[req.Session]
	var (
		o        owner.Owner
		inflight int
		idle     chan struct{}
	)
	if s != nil {
		o, inflight, idle = s.owner, s.inflight, s.idle
	}
	m.mu.Unlock()

	p := req.Params
	if p == nil {
		p = &mcp.ElicitParams{}
	}
	mode := p.Mode
	if mode == "" {
		mode = ModeForm
	}
	decline := func(why string) (*mcp.ElicitResult, error) {
		args := []any{"action", ActionDecline, "reason", why}
		if s != nil {
			args = append(args, "server", s.server.Name, "owner", o.String())
		}
		m.log.InfoContext(ctx, "mcp elicitation", args...)
		return &mcp.ElicitResult{Action: ActionDecline}, nil
	}
	switch {
	case s == nil:
		return decline("no owner for this session")
	case inflight == 0:
		// Sessions are per owner, but a question outside any call was
		// caused by no call of that owner's.
		return decline("no tool call in flight")
	case !o.Attended():
		// Invariant 9: cron, kanban, single-query runs and owners without
		// a channel are never parked on a question nobody can answer.
		return decline("owner cannot be asked")
	case m.opts.Elicit == nil:
		return decline("no elicitor")
	case mode == ModeURL && !m.opts.URLMode:
		return decline("url elicitation not enabled")
	case mode != ModeForm && mode != ModeURL:
		return decline("unknown mode " + mode)
	}

	q := Question{Server: s.server.Name, Message: p.Message, Mode: mode, URL: p.URL}
	if p.RequestedSchema != nil {
		b, err := json.Marshal(p.RequestedSchema)
		if err != nil {
			return decline("unreadable schema")
		}
		q.Schema = b
	}

	// Bound the wait: the timeout, the session's end (CloseOwner, Close,
	// idle), the caller's ctx, and the end of the owner's last tool call
	// on this session — on the legacy path ctx does not end with the call.
	ectx, cancel := context.WithTimeoutCause(ctx, m.opts.ElicitTimeout, errors.New("elicitation timed out"))
	defer cancel()
	ectx, cancelCause := context.WithCancelCause(ectx)
	defer cancelCause(nil)
	stop := context.AfterFunc(s.ctx, func() { cancelCause(context.Cause(s.ctx)) })
	defer stop()
	go func() {
		select {
		case <-idle:
			cancelCause(errCallEnded)
		case <-ectx.Done():
		}
	}()

	type reply struct {
		a   Answer
		err error
	}
	ch := make(chan reply, 1)
	go func() {
		a, err := m.opts.Elicit.Elicit(ectx, o, q)
		ch <- reply{a, err}
	}()
	var r reply
	select {
	case r = <-ch:
	case <-ectx.Done():
		r.err = context.Cause(ectx)
	}

	res := &mcp.ElicitResult{Action: ActionCancel}
	switch {
	case r.err != nil:
		m.log.InfoContext(ctx, "mcp elicitation", "server", s.server.Name, "owner", o.String(), "action", ActionCancel, "error", r.err)
		return res, nil
	case r.a.Action == ActionAccept:
		res.Action, res.Content = ActionAccept, r.a.Content
		if res.Content == nil {
			res.Content = map[string]any{}
		}
	case r.a.Action == ActionDecline:
		res.Action = ActionDecline
	}
	// Anything else stays cancel: only the three protocol actions pass.
	m.log.InfoContext(ctx, "mcp elicitation", "server", s.server.Name, "owner", o.String(), "action", res.Action)
	return res, nil
}
