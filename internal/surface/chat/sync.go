package chat

import (
	"context"
	"errors"
	"time"

	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/store"
)

// syncLoop shows this platform's requests: it posts each pending one
// once and edits its message when it ends. It alone posts and edits
// from events, so two posts of one request never race in this process;
// the store's claim keeps other processes out.
func (c *Core) syncLoop(ctx context.Context) {
	events := c.o.Host.Watch(ctx, "")
	tick := time.NewTicker(c.o.Resync)
	defer tick.Stop()
	c.reconcile(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-events:
			if !ok {
				// The broker closed (the host is stopping): what it
				// withdrew is edited by the next reconciliation (Settle).
				events = nil
				continue
			}
			c.onEvent(ctx, e)
		case <-c.resync:
			c.reconcile(ctx)
		case done := <-c.settle:
			c.reconcile(ctx)
			close(done)
		case <-tick.C:
			c.reconcile(ctx)
		}
	}
}

// Settle reconciles once and waits for it (or ctx): the host calls it
// after withdrawing its requests at shutdown, so their messages say so
// before the connection closes.
func (c *Core) Settle(ctx context.Context) {
	done := make(chan struct{})
	select {
	case c.settle <- done:
	case <-ctx.Done():
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func (c *Core) onEvent(ctx context.Context, e broker.Event) {
	conv, ok := c.convOf(e.Request)
	if !ok {
		return
	}
	switch e.Type {
	case broker.Created:
		c.post(ctx, conv, e.Request)
	case broker.Ended:
		c.dropForms(e.Request.ID)
		c.finish(ctx, e.Request)
	}
}

// reconcile edits the posts whose requests ended and posts the pending
// requests not shown yet: after a restart, a reconnection or missed
// events.
func (c *Core) reconcile(ctx context.Context) {
	posts, err := c.o.Posts.ChatPostsOf(ctx, c.name)
	if err != nil {
		c.log.ErrorContext(ctx, "list posts", "err", err)
		return
	}
	posted := map[string]bool{}
	for _, p := range posts {
		posted[p.Request] = true
		r, err := c.o.Host.Request(ctx, p.Request)
		switch {
		case errors.Is(err, store.ErrNotFound):
			_ = c.o.Posts.DropChatPost(ctx, c.name, p.Request)
		case err != nil:
			c.log.ErrorContext(ctx, "read request", "id", p.Request, "err", err)
		case r.State != store.Pending:
			c.dropForms(r.ID)
			c.finishPost(ctx, p, r)
		case p.Message == "":
			// Claimed, never sent (a crash or a failure between the two):
			// send it now.
			if conv, ok := c.convOf(r); ok {
				c.send(ctx, p, conv, r)
			}
		}
	}
	pending, err := c.o.Host.Pending(ctx, "")
	if err != nil {
		c.log.ErrorContext(ctx, "list pending", "err", err)
		return
	}
	for _, r := range pending {
		if posted[r.ID] {
			continue
		}
		if conv, ok := c.convOf(r); ok {
			c.post(ctx, conv, r)
		}
	}
}

// post shows a pending request once: claim, send, record the message.
func (c *Core) post(ctx context.Context, conv Conv, r store.Request) {
	c.mu.Lock()
	gone := c.gaveUp[r.ID]
	c.mu.Unlock()
	if gone || r.State != store.Pending {
		return
	}
	p := store.ChatPost{Platform: c.name, Request: r.ID, Chat: conv.Chat, Thread: conv.Thread, Posted: c.o.Now()}
	claimed, err := c.o.Posts.ClaimChatPost(ctx, p)
	if err != nil {
		c.log.ErrorContext(ctx, "claim post", "id", r.ID, "err", err)
		return
	}
	if !claimed {
		return // already shown (or being shown by another process)
	}
	c.send(ctx, p, conv, r)
}

// send sends a claimed post's message. On failure the claim is dropped,
// so the next reconciliation tries again; a message that can never be
// sent (the bot left the chat) is given up.
func (c *Core) send(ctx context.Context, p store.ChatPost, conv Conv, r store.Request) {
	id, err := c.p.Post(ctx, conv, pendingMessage(r, c.caps, c.o.Host.Link(r.ID), c.o.Now()))
	if err != nil {
		if errors.Is(err, ErrGone) {
			c.mu.Lock()
			c.gaveUp[r.ID] = true
			c.mu.Unlock()
		}
		c.log.WarnContext(ctx, "post request", "id", r.ID, "session", r.Session, "err", err)
		if derr := c.o.Posts.DropChatPost(context.WithoutCancel(ctx), c.name, r.ID); derr != nil {
			c.log.ErrorContext(ctx, "drop post", "id", r.ID, "err", derr)
		}
		return
	}
	switch err := c.o.Posts.SetChatMessage(context.WithoutCancel(ctx), c.name, r.ID, id); {
	case errors.Is(err, store.ErrNotFound):
		// Answered by a press on the message before its id was recorded:
		// the press's response already showed how it ended.
	case err != nil:
		c.log.ErrorContext(ctx, "record post", "id", r.ID, "err", err)
	}
	c.log.InfoContext(ctx, "posted request", "id", r.ID, "session", r.Session, "message", id)
}

// finish edits an ended request's message, if it has one.
func (c *Core) finish(ctx context.Context, r store.Request) {
	p, err := c.o.Posts.GetChatPost(ctx, c.name, r.ID)
	if errors.Is(err, store.ErrNotFound) {
		return
	}
	if err != nil {
		c.log.ErrorContext(ctx, "read post", "id", r.ID, "err", err)
		return
	}
	c.finishPost(ctx, p, r)
}

// finishPost edits the message to show how the request ended and drops
// the post; a failed edit keeps it for the next reconciliation.
func (c *Core) finishPost(ctx context.Context, p store.ChatPost, r store.Request) {
	if p.Message != "" {
		err := c.p.Edit(ctx, Conv{Chat: p.Chat, Thread: p.Thread}, p.Message, endedMessage(r, c.caps, c.o.Now()))
		if err != nil && !errors.Is(err, ErrGone) {
			c.log.WarnContext(ctx, "edit ended request", "id", r.ID, "err", err)
			return
		}
	}
	if err := c.o.Posts.DropChatPost(context.WithoutCancel(ctx), c.name, r.ID); err != nil {
		c.log.ErrorContext(ctx, "drop post", "id", r.ID, "err", err)
	}
}
