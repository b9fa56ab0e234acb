package chat

import (
	"context"
	"errors"
	"slices"

	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface"
)

// Click implements Handler: a button of a request's message, of a form
// question, or of a private "continue" message.
func (c *Core) Click(ctx context.Context, k Click) {
	a, ok := parseID(k.Data)
	if !ok {
		c.private(ctx, k.Respond, "That button is not warden's, or is from an older version; nothing was done.")
		return
	}
	req, ok := c.clicked(ctx, k.Respond, k.Conv, k.From, a.request)
	if !ok {
		return
	}
	switch a.verb {
	case verbValue, verbSkip:
		c.questionClick(ctx, k, req, a)
		return
	}
	rights, ok := c.answerable(ctx, k.Respond, k.Conv, k.From, req)
	if !ok {
		return
	}
	by := c.identity(k.From)
	switch a.verb {
	case verbOnce, verbSession, verbAlways:
		scope := map[string]store.Scope{verbOnce: store.Once, verbSession: store.Session, verbAlways: store.Always}[a.verb]
		if scope == store.Always && !rights.mayAdmin(k.From) {
			c.refuse(ctx, k.Respond, req, k.From, "an always grant changes policy and takes an admin")
			return
		}
		if why := c.mayGrant(req, scope, rights, k.From); why != "" {
			c.private(ctx, k.Respond, "Not answered: "+why+".")
			return
		}
		c.answer(ctx, k.Respond, req, surface.Answer{Approve: true, Scope: scope, By: by}, true)
	case verbDeny:
		c.answer(ctx, k.Respond, req, surface.Answer{By: by}, true)
	case verbReason:
		err := k.Respond.Form(ctx, Form{ID: makeID(verbReason, req.ID), Title: "Deny request", Submit: "Deny",
			Inputs: []Input{{ID: "reason", Kind: InputText, Label: "Reason (optional)", Help: "Given to the agent with the denial.", Multiline: true, MaxLen: maxReason}}})
		if errors.Is(err, ErrNoForm) {
			c.private(ctx, k.Respond, "Type /deny REASON in this conversation to deny with a reason.")
		} else if err != nil {
			c.log.WarnContext(ctx, "open reason form", "id", req.ID, "err", err)
		}
	case verbDecline:
		if req.Elicit == nil {
			c.private(ctx, k.Respond, "Request "+req.ID+" is an approval: use Deny.")
			return
		}
		c.answer(ctx, k.Respond, req, surface.Answer{By: by}, true)
	case verbDone:
		if req.Elicit == nil || req.Elicit.URL == "" {
			c.private(ctx, k.Respond, "Request "+req.ID+" has no link to open.")
			return
		}
		c.answer(ctx, k.Respond, req, surface.Answer{Approve: true, Scope: store.Once, By: by, Content: nil}, true)
	case verbFill, verbPage:
		if req.Elicit == nil {
			c.private(ctx, k.Respond, "Request "+req.ID+" asks to approve an action, not to fill in a form.")
			return
		}
		c.fill(ctx, k.Respond, k.Conv, k.From, req, a.arg)
	default:
		c.private(ctx, k.Respond, "That button does nothing here.")
	}
}

// clicked reads the request a button or form is about and checks it
// belongs to the conversation it was used in: a request is answered only
// from its own session's conversation (invariant 4), and bots never
// answer. It has told the user and audited when it returns false.
func (c *Core) clicked(ctx context.Context, resp Responder, conv Conv, u User, id string) (store.Request, bool) {
	req, err := c.o.Host.Request(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		c.private(ctx, resp, "Nothing pending — there is no request "+id+".")
		return req, false
	case err != nil:
		c.log.ErrorContext(ctx, "read request", "id", id, "err", err)
		c.private(ctx, resp, "Not answered (store error); nothing was approved. Try again.")
		return req, false
	}
	if u.Bot {
		c.refuse(ctx, resp, req, u, "bots and webhooks cannot answer")
		return req, false
	}
	if home, ok := c.convOf(req); !ok || home != conv {
		c.refuse(ctx, resp, req, u, "the request belongs to another conversation")
		return req, false
	}
	return req, true
}

// stale edits a message whose buttons outlived its request: the pressed
// one (which may be a copy the Core never learnt the id of — a post the
// platform took though its answer was lost, then posted again), and the
// request's recorded post at the next reconciliation.
func (c *Core) stale(ctx context.Context, resp Responder, req store.Request) {
	if err := resp.Update(ctx, endedMessage(req, c.caps, c.o.Now())); err != nil {
		c.log.DebugContext(ctx, "edit a stale message", "id", req.ID, "err", err)
	}
	c.kick()
}

// mayGrant says why scope cannot be given to req by u ("" if it can).
func (c *Core) mayGrant(req store.Request, scope store.Scope, rights Rights, u User) string {
	if req.Elicit != nil {
		return "request " + req.ID + " is a question from an MCP server: fill it in or decline it"
	}
	if !slices.Contains(scopes(req), scope) {
		return "warden cannot see everything request " + req.ID + " would run, so it can only be approved once"
	}
	if v := describe(req, c.caps.MaxText-900, c.o.Now()); !v.full {
		return "request " + req.ID + " is too long to show here; answer it in the console"
	}
	if scope == store.Always && !rights.mayAdmin(u) {
		return "an always grant changes policy and takes an admin"
	}
	return ""
}

// answer gives the host one answer and tells the user how it went. With
// update, a counted answer replaces the clicked message (the request's
// own) with how it ended.
func (c *Core) answer(ctx context.Context, resp Responder, req store.Request, ans surface.Answer, update bool) {
	r, err := c.o.Host.Answer(ctx, req.ID, ans)
	switch {
	case errors.Is(err, surface.ErrNotPending):
		c.private(ctx, resp, lateText(r))
		c.kick()
	case errors.Is(err, broker.ErrContent):
		c.private(ctx, resp, "Not answered: "+err.Error()+".")
	case err != nil:
		c.log.ErrorContext(ctx, "answer", "id", req.ID, "err", err)
		c.private(ctx, resp, "Not answered (store error); nothing was approved. Try again.")
	default:
		c.log.InfoContext(ctx, "answered", "id", r.ID, "state", r.State, "scope", r.Scope, "by", ans.By.String())
		if update {
			if uerr := resp.Update(ctx, endedMessage(r, c.caps, c.o.Now())); uerr == nil {
				_ = c.o.Posts.DropChatPost(context.WithoutCancel(ctx), c.name, r.ID)
				return
			}
		}
		c.private(ctx, resp, answeredText(r))
	}
}

// answerable returns u's rights in conv if u may answer req there now:
// u approves in the chat and req is still pending. If not, u is told
// why (a refusal is audited) and a late press sees the ended request.
func (c *Core) answerable(ctx context.Context, resp Responder, conv Conv, u User, req store.Request) (Rights, bool) {
	rights := c.access(conv.Chat)
	if !rights.mayApprove(u) {
		c.refuse(ctx, resp, req, u, "not an approver in this chat")
		return rights, false
	}
	if req.State != store.Pending {
		c.private(ctx, resp, lateText(req))
		c.stale(ctx, resp, req)
		return rights, false
	}
	return rights, true
}

// refuse tells u privately that their answer was not taken, and audits
// it with who tried.
func (c *Core) refuse(ctx context.Context, resp Responder, req store.Request, u User, why string) {
	if err := c.o.Host.Refused(ctx, req, c.identity(u), why); err != nil {
		c.log.ErrorContext(ctx, "audit refused answer", "id", req.ID, "err", err)
	}
	c.private(ctx, resp, "You cannot answer request "+req.ID+" here: "+why+". Nothing was changed.")
}

// private tells the user alone.
func (c *Core) private(ctx context.Context, resp Responder, text string) {
	if err := resp.Private(ctx, Say(text)); err != nil {
		c.log.WarnContext(ctx, "private reply", "err", err)
	}
}
