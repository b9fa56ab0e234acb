package chat

import (
	"context"
	"fmt"
	"strings"

	"github.com/wardenhq/warden/internal/store"
)

// Question by question: where the platform has no forms (Telegram), an
// elicitation's fields are asked one at a time in the conversation, to
// the user who pressed Fill in; their next messages there are the
// answers (/skip leaves an optional one empty, /cancel stops), and
// choices and yes/no can be pressed as buttons.

// ask posts the current question of fr, or sends the form when every
// field is answered.
func (c *Core) ask(ctx context.Context, fr *formRun) {
	c.mu.Lock()
	idx, n := fr.idx, len(fr.fields)
	c.mu.Unlock()
	if idx >= n {
		c.sendForm(ctx, convResponder{c, fr.conv}, fr, c.identity(fr.user))
		c.mu.Lock()
		delete(c.forms, formKey{fr.req.ID, fr.user.ID})
		c.mu.Unlock()
		return
	}
	f := fr.fields[idx]
	m := Message{Blocks: []Block{Title(fmt.Sprintf("Question %d of %d for %s — %s", idx+1, n, clean(fr.user.Name, 64), f.Label))}}
	if f.Description != "" {
		m.Blocks = append(m.Blocks, Text(f.Description))
	}
	if h := hintOf(f); h != "" {
		m.Blocks = append(m.Blocks, Field("Answer", h))
	}
	switch {
	case f.Type == "boolean":
		m.Buttons = []Button{
			{ID: makeID(verbValue, fr.req.ID, idx*256), Label: "Yes", Style: StylePrimary},
			{ID: makeID(verbValue, fr.req.ID, idx*256+1), Label: "No", Style: StyleSecondary},
		}
	case f.Input == "select" && len(f.Options) <= maxChoiceButtons:
		for i, o := range f.Options {
			m.Buttons = append(m.Buttons, Button{ID: makeID(verbValue, fr.req.ID, idx*256+i), Label: o.Label, Style: StyleSecondary})
		}
	}
	tail := "Reply with your answer"
	if !f.Required {
		tail += "; /skip leaves it empty"
		m.Buttons = append(m.Buttons, Button{ID: makeID(verbSkip, fr.req.ID), Label: "Skip", Style: StyleSecondary})
	}
	m.Blocks = append(m.Blocks, Text(tail+"; /cancel stops (the question stays pending)."))
	if _, err := c.p.Post(ctx, fr.conv, m); err != nil {
		c.log.WarnContext(ctx, "post question", "id", fr.req.ID, "err", err)
	}
}

// questionFor returns the question-by-question form u is filling in in
// conv, if any.
func (c *Core) questionFor(conv Conv, u User) *formRun {
	if c.caps.ModalFields > 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, fr := range c.forms {
		if k.user == u.ID && fr.conv == conv {
			return fr
		}
	}
	return nil
}

// questionText takes a typed answer to fr's current question.
func (c *Core) questionText(ctx context.Context, fr *formRun, text string) {
	say := func(s string) { c.say(ctx, fr.conv, s) }
	cmd := strings.ToLower(strings.TrimSpace(text))
	if i := strings.IndexByte(cmd, '@'); strings.HasPrefix(cmd, "/") && i > 0 {
		cmd = cmd[:i] // /cancel@bot
	}
	switch cmd {
	case "/cancel":
		c.mu.Lock()
		delete(c.forms, formKey{fr.req.ID, fr.user.ID})
		c.mu.Unlock()
		say("Stopped. Request " + fr.req.ID + " is still pending: Fill in again, or Decline.")
		return
	case "/skip":
		c.takeAnswer(ctx, fr, "", true)
		return
	}
	c.takeAnswer(ctx, fr, text, false)
}

// questionClick takes a pressed choice (or Skip) for the question the
// button belongs to.
func (c *Core) questionClick(ctx context.Context, k Click, req store.Request, a parsed) {
	c.mu.Lock()
	fr := c.forms[formKey{req.ID, k.From.ID}]
	c.mu.Unlock()
	if fr == nil || fr.conv != k.Conv {
		c.private(ctx, k.Respond, "This question is not waiting for you: it is someone else's, or was already answered.")
		return
	}
	if req.State != store.Pending {
		c.private(ctx, k.Respond, lateText(req))
		return
	}
	c.mu.Lock()
	idx := fr.idx
	c.mu.Unlock()
	if a.verb == verbSkip {
		c.private(ctx, k.Respond, "Skipped.")
		c.takeAnswer(ctx, fr, "", true)
		return
	}
	field, opt := a.arg/256, a.arg%256
	if field != idx {
		c.private(ctx, k.Respond, "That question was already answered.")
		return
	}
	f := fr.fields[idx]
	var raw string
	switch {
	case f.Type == "boolean" && opt <= 1:
		raw = map[int]string{0: "yes", 1: "no"}[opt]
	case f.Input == "select" && opt < len(f.Options):
		raw = f.Options[opt].Value
	default:
		c.private(ctx, k.Respond, "That is not one of the choices.")
		return
	}
	c.private(ctx, k.Respond, "Got it.")
	c.takeAnswer(ctx, fr, raw, false)
}

// takeAnswer checks one answer and moves to the next question, or asks
// again with what was wrong.
func (c *Core) takeAnswer(ctx context.Context, fr *formRun, raw string, skip bool) {
	c.mu.Lock()
	f := fr.fields[fr.idx]
	c.mu.Unlock()
	if skip && f.Required {
		c.say(ctx, fr.conv, f.Label+" is required; it cannot be skipped.")
		c.ask(ctx, fr)
		return
	}
	v, set, err := value(f, raw)
	if skip {
		v, set, err = nil, false, nil
	}
	if err != nil {
		c.say(ctx, fr.conv, "Not taken: "+err.Error()+".")
		c.ask(ctx, fr)
		return
	}
	c.mu.Lock()
	if set {
		fr.values[f.Name] = v
	} else {
		delete(fr.values, f.Name)
	}
	fr.idx++
	c.mu.Unlock()
	c.ask(ctx, fr)
}

// say posts plain text to conv.
func (c *Core) say(ctx context.Context, conv Conv, s string) {
	if _, err := c.p.Post(ctx, conv, Say(s)); err != nil {
		c.log.WarnContext(ctx, "post", "err", err)
	}
}

// convResponder answers in the conversation, for answers given outside
// an interaction (a typed command, the last typed answer of a form).
type convResponder struct {
	c    *Core
	conv Conv
}

func (r convResponder) Private(ctx context.Context, m Message) error {
	_, err := r.c.p.Post(ctx, r.conv, m)
	return err
}

func (r convResponder) Update(context.Context, Message) error { return ErrNoForm }

func (r convResponder) Form(context.Context, Form) error { return ErrNoForm }

func (r convResponder) Invalid(ctx context.Context, _ map[string]string, retry Message) error {
	return r.Private(ctx, retry)
}
