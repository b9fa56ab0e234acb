package chat

import (
	"context"
	"errors"
	"fmt"
	"github.com/wardenhq/warden/internal/form"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface"
	"strings"
	"sync"
)

// Bounds on what is posted back.
const (
	maxMessage  = 16 << 10 // bytes of a message sent to the agent
	maxListed   = 20       // requests /pending lists
	helpCommand = "Commands: /approve [all] [session|always] · /deny [reason] · /pending · /yolo on|off (admins). “!cmd” runs a command; anything else goes to the agent."
)

// Message implements Handler: a form answer, a command, a "!cmd", or a
// message for the agent. Bots and webhooks are never listened to.
func (c *Core) Message(ctx context.Context, m Incoming) {
	if m.From.Bot || m.From.ID == "" {
		return
	}
	if !validConvPart(m.Conv.Chat) || (m.Conv.Thread != "" && !validConvPart(m.Conv.Thread)) {
		c.log.WarnContext(ctx, "conversation id not usable as a session key", "chat", m.Conv.Chat, "thread", m.Conv.Thread)
		return
	}
	text := strings.TrimSpace(m.Text)
	if fr := c.questionFor(m.Conv, m.From); fr != nil {
		c.questionText(ctx, fr, text)
		return
	}
	if name, args, ok := parseCommand(text); ok {
		c.command(ctx, m, name, args)
		return
	}
	// "!cmd" is addressed to warden by its form, like a command.
	if text == "" || (!m.Addressed && !strings.HasPrefix(text, "!")) {
		return
	}
	rights := c.access(m.Conv.Chat)
	if !rights.mayTalk(m.From) {
		c.log.WarnContext(ctx, "message from someone not allowed to talk to the agent", "user", m.From.ID, "chat", m.Conv.Chat)
		c.whisper(ctx, m.Conv, m.From, "You are not on this chat's list of warden users, so your message was not sent to the agent.")
		return
	}
	o, ok := c.session(ctx, m.Conv, m.From)
	if !ok {
		return
	}
	if cmd, isShell := strings.CutPrefix(text, "!"); isShell {
		cmd = strings.TrimSpace(cmd)
		if cmd == "" {
			c.say(ctx, m.Conv, "Type a command after the !, like !ls -la.")
			return
		}
		if !c.background(func(ctx context.Context) { c.shell(ctx, m.Conv, o, cmd) }) {
			c.say(ctx, m.Conv, "Not started: too many commands and messages are in flight; answer or wait for them first.")
		}
		return
	}
	if len(text) > maxMessage {
		c.say(ctx, m.Conv, fmt.Sprintf("Not sent: the message is longer than %d bytes.", maxMessage))
		return
	}
	if !c.background(func(ctx context.Context) { c.converse(ctx, m.Conv, o, text) }) {
		c.say(ctx, m.Conv, "Not sent: too many commands and messages are in flight; answer or wait for them first.")
	}
}

// session opens the conversation's session as u's owner. A key another
// owner holds (a console session that chose this key) is refused: this
// conversation would otherwise act in, and see, someone else's session.
func (c *Core) session(ctx context.Context, conv Conv, u User) (owner.Owner, bool) {
	o, err := c.ownerOf(conv, u)
	if err != nil {
		c.log.WarnContext(ctx, "owner", "err", err)
		return owner.Owner{}, false
	}
	row, err := c.o.Host.Session(ctx, o)
	switch {
	case errors.Is(err, surface.ErrForeign):
		c.log.WarnContext(ctx, "session key held by another owner", "session", o.SessionKey(), "err", err)
		c.say(ctx, conv, "This conversation cannot be a warden session: its key "+o.SessionKey()+" belongs to another session.")
		return owner.Owner{}, false
	case err != nil:
		c.log.ErrorContext(ctx, "open session", "session", o.SessionKey(), "err", err)
		c.say(ctx, conv, "Not sent: the session could not be opened (store error).")
		return owner.Owner{}, false
	case !row.Ended.IsZero():
		c.say(ctx, conv, "Session "+row.Key+" was ended by the operator; nothing runs in it.")
		return owner.Owner{}, false
	}
	return o, true
}

// shell runs a "!cmd" as the session's owner and posts how it ended.
func (c *Core) shell(ctx context.Context, conv Conv, o owner.Owner, cmd string) {
	out := &surface.Output{}
	res, err := c.o.Host.Shell(ctx, o, cmd, out, out)
	head := "$ " + visible(cmd)
	m := Message{}
	switch {
	case res.Ran:
		m.Blocks = []Block{Title(fmt.Sprintf("Ran (exit %d)", res.Exit)), Code(head + "\n" + clipText(visible(out.String()), c.caps.MaxText-len(head)-200))}
	case err != nil && res.Message == "":
		m.Blocks = []Block{Title("Not run"), Code(head), Text(clean(err.Error(), 500))}
	default:
		m.Blocks = []Block{Title("Not run"), Code(head), Text(form.Clean(res.Message, 1500, true))}
	}
	if _, err := c.p.Post(ctx, conv, m); err != nil {
		c.log.WarnContext(ctx, "post command result", "err", err)
	}
}

// converse sends a message to the agent as the session's owner and
// posts its reply.
func (c *Core) converse(ctx context.Context, conv Conv, o owner.Owner, text string) {
	var (
		mu      sync.Mutex
		blocked []string
	)
	emit := func(s surface.Step) {
		if s.Kind == surface.StepBlocked {
			mu.Lock()
			blocked = append(blocked, form.Clean(s.Text, 300, false))
			mu.Unlock()
		}
	}
	reply, err := c.o.Host.Converse(ctx, o, o.SessionKey(), text, emit)
	var m Message
	switch {
	case errors.Is(err, surface.ErrBusy):
		m = Say("Not sent: the agent is still working on the previous message. Answer its question or wait for it.")
	case errors.Is(err, surface.ErrNoModel):
		m = Say("No model is configured (llm.base_url and llm.model in warden's config). Lines starting with ! run as commands.")
	case err != nil:
		m = Say("The agent stopped: " + clean(err.Error(), 500))
	default:
		t := strings.TrimSpace(reply.Text)
		if t == "" {
			t = "(no reply)"
		}
		m = Message{Blocks: []Block{Text(clipText(form.Clean(t, 2*c.caps.MaxText, true), c.caps.MaxText-300))}}
		if reply.Blocked > 0 {
			m.Blocks = append(m.Blocks, Field("Refused", fmt.Sprintf("%d of %d tool calls", reply.Blocked, reply.Calls)))
		}
	}
	if _, err := c.p.Post(ctx, conv, m); err != nil {
		c.log.WarnContext(ctx, "post reply", "err", err)
	}
}

// parseCommand reads "/name args" (a Telegram "/name@bot" too) for the
// Core's commands; other text is not a command.
func parseCommand(text string) (name, args string, ok bool) {
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	word, rest, _ := strings.Cut(text[1:], " ")
	word, _, _ = strings.Cut(word, "@")
	word = strings.ToLower(word)
	switch word {
	case "approve", "deny", "pending", "yolo", "help", "start":
		return word, strings.TrimSpace(rest), true
	}
	return "", "", false
}

// command runs one text command.
func (c *Core) command(ctx context.Context, m Incoming, name, args string) {
	rights := c.access(m.Conv.Chat)
	session := SessionKey(c.name, m.Conv)
	switch name {
	case "help", "start":
		c.say(ctx, m.Conv, "warden answers here for session "+session+". "+helpCommand)
	case "pending":
		if !rights.mayTalk(m.From) {
			c.whisper(ctx, m.Conv, m.From, "You are not on this chat's list of warden users.")
			return
		}
		c.listPending(ctx, m.Conv, session)
	case "approve", "deny":
		c.answerCommand(ctx, m, rights, session, name, args)
	case "yolo":
		c.yolo(ctx, m, rights, args)
	}
}

// listPending posts the session's pending requests.
func (c *Core) listPending(ctx context.Context, conv Conv, session string) {
	reqs, err := c.mine(ctx, session)
	if err != nil {
		c.say(ctx, conv, "Could not list the pending requests (store error).")
		return
	}
	if len(reqs) == 0 {
		c.say(ctx, conv, "Nothing pending in this conversation.")
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d pending:", len(reqs))
	for i, r := range reqs {
		if i == maxListed {
			fmt.Fprintf(&b, "\n… and %d more", len(reqs)-i)
			break
		}
		fmt.Fprintf(&b, "\n%d. %s — %s, until %s", i+1, r.ID, short(r), r.Deadline.UTC().Format("15:04:05 UTC"))
	}
	c.say(ctx, conv, b.String())
}

// mine lists the pending requests of session that this Core shows.
func (c *Core) mine(ctx context.Context, session string) ([]store.Request, error) {
	reqs, err := c.o.Host.Pending(ctx, session)
	if err != nil {
		return nil, err
	}
	out := reqs[:0]
	for _, r := range reqs {
		if _, ok := c.convOf(r); ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// answerCommand is /approve [all] [session|always] and /deny [reason]:
// the oldest pending request of the conversation's session (or, with
// all, every approval), as the user who typed it.
func (c *Core) answerCommand(ctx context.Context, m Incoming, rights Rights, session, name, args string) {
	reqs, err := c.mine(ctx, session)
	if err != nil {
		c.say(ctx, m.Conv, "Not answered (store error); nothing was approved.")
		return
	}
	if len(reqs) == 0 {
		c.say(ctx, m.Conv, "Nothing pending in this conversation.")
		return
	}
	if !rights.mayApprove(m.From) {
		resp := whisperResponder{c, m.Conv, m.From}
		c.refuse(ctx, resp, reqs[0], m.From, "not an approver in this chat")
		return
	}
	by := c.identity(m.From)
	resp := convResponder{c, m.Conv}
	if name == "deny" {
		c.answer(ctx, resp, reqs[0], surface.Answer{By: by, Reason: cleanReason(args)}, false)
		return
	}
	all, scope, err := approveArgs(args)
	if err != nil {
		c.say(ctx, m.Conv, "Not answered: "+err.Error()+".")
		return
	}
	if scope == store.Always && !rights.mayAdmin(m.From) {
		c.refuse(ctx, whisperResponder{c, m.Conv, m.From}, reqs[0], m.From, "an always grant changes policy and takes an admin")
		return
	}
	done := 0
	for _, r := range reqs {
		if r.Elicit != nil {
			continue // a form is filled in, not approved
		}
		if why := c.mayGrant(r, scope, rights, m.From); why != "" {
			c.say(ctx, m.Conv, "Not answered: "+why+".")
		} else {
			c.answer(ctx, resp, r, surface.Answer{Approve: true, Scope: scope, By: by}, false)
			done++
		}
		if !all {
			break
		}
	}
	if done == 0 && !all && reqs[0].Elicit != nil {
		c.say(ctx, m.Conv, "The oldest pending request is a question from an MCP server: press Fill in or Decline on its message.")
	}
}

// approveArgs reads "[all] [session|always]".
func approveArgs(args string) (all bool, scope store.Scope, err error) {
	scope = store.Once
	for _, w := range strings.Fields(strings.ToLower(args)) {
		switch w {
		case "all":
			all = true
		case "once":
			scope = store.Once
		case "session":
			scope = store.Session
		case "always":
			scope = store.Always
		default:
			return false, "", fmt.Errorf("/approve takes [all] [once|session|always], not %q", clean(w, 40))
		}
	}
	return all, scope, nil
}

// yolo is /yolo on|off, for admins.
func (c *Core) yolo(ctx context.Context, m Incoming, rights Rights, args string) {
	if !rights.mayAdmin(m.From) {
		c.log.WarnContext(ctx, "yolo refused", "user", m.From.ID, "chat", m.Conv.Chat)
		c.whisper(ctx, m.Conv, m.From, "Only this chat's warden admins can switch yolo.")
		return
	}
	var on bool
	switch strings.ToLower(strings.TrimSpace(args)) {
	case "on":
		on = true
	case "off":
	default:
		c.say(ctx, m.Conv, "Use /yolo on or /yolo off.")
		return
	}
	o, ok := c.session(ctx, m.Conv, m.From)
	if !ok {
		return
	}
	if err := c.o.Host.SetYolo(ctx, o.SessionKey(), on, c.identity(m.From)); err != nil {
		c.log.ErrorContext(ctx, "set yolo", "err", err)
		c.say(ctx, m.Conv, "Yolo was not changed (store error).")
		return
	}
	if on {
		c.say(ctx, m.Conv, "Yolo is ON for this session: dangerous commands run without asking (hardline and deny rules still apply).")
	} else {
		c.say(ctx, m.Conv, "Yolo is off for this session: dangerous commands ask again.")
	}
}

// whisper tells u alone; if the platform cannot, nothing is said in the
// conversation (the refusal is still logged or audited by the caller).
func (c *Core) whisper(ctx context.Context, conv Conv, u User, text string) {
	if err := c.p.Whisper(ctx, conv, u.ID, Say(text)); err != nil {
		c.log.InfoContext(ctx, "private notice not delivered", "user", u.ID, "err", err)
	}
}

// whisperResponder answers privately outside an interaction.
type whisperResponder struct {
	c    *Core
	conv Conv
	u    User
}

func (r whisperResponder) Private(ctx context.Context, m Message) error {
	return r.c.p.Whisper(ctx, r.conv, r.u.ID, m)
}

func (r whisperResponder) Update(context.Context, Message) error { return ErrNoForm }

func (r whisperResponder) Form(context.Context, Form) error { return ErrNoForm }

func (r whisperResponder) Invalid(ctx context.Context, _ map[string]string, retry Message) error {
	return r.Private(ctx, retry)
}

// clipText keeps the head and the tail of s within limit bytes (at
// least 200), with room for the note of what was cut.
func clipText(s string, limit int) string {
	limit = max(limit, 200)
	return surface.Abbreviate(s, limit, limit/2-40)
}
