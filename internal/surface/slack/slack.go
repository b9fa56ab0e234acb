// Package slack is warden's Slack surface: an adapter of the chat core
// (internal/surface/chat) to Slack through github.com/slack-go/slack:
// Socket Mode (no public endpoint: the app connects out), Block Kit
// messages with buttons, modals (views.open) for forms and reasons, and
// ephemeral messages for private replies.
//
// Every thread is a session: a top-level message addressed to the bot
// starts one (the bot answers in its thread), and the replies in a
// thread the bot is part of continue it. Commands are written in the
// thread addressed to the bot ("@warden /approve"), since Slack's own
// slash commands carry no thread.
//
// Text from requests, users and models is rendered as plain text or
// preformatted rich text, never as mrkdwn, so it cannot mention
// @channel, make links or fake formatting.
package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/wardenhq/warden/internal/surface/chat"
)

// Name is the platform's name.
const Name = "slack"

// Bounds of Block Kit.
const (
	maxText    = 3000 // a section's text
	maxHeader  = 150  // a header's text
	maxTitle   = 24   // a modal's title and buttons
	maxButton  = 75   // a button's text
	maxThreads = 10000
)

// Options configure an adapter.
type Options struct {
	// BotToken (xoxb-…) calls the Web API; AppToken (xapp-…, with
	// connections:write) opens the Socket Mode connection.
	BotToken, AppToken string
	// APIURL is the Web API's base ("https://slack.com/api/" if empty);
	// a test's fake is set here.
	APIURL string
	HTTP   *http.Client
	Logger *slog.Logger
}

// Adapter is the Slack platform.
type Adapter struct {
	o   Options
	log *slog.Logger

	api     chat.Live[slack.Client]
	mu      sync.Mutex
	self    string          // the bot's user id
	threads map[string]bool // "CHANNEL:THREAD" the bot takes part in
}

var _ chat.Platform = (*Adapter)(nil)

// New returns an adapter.
func New(o Options) (*Adapter, error) {
	if o.BotToken == "" || o.AppToken == "" {
		return nil, errors.New("slack: a bot token and an app token are required")
	}
	if o.APIURL == "" {
		o.APIURL = slack.APIURL
	}
	if !strings.HasSuffix(o.APIURL, "/") {
		o.APIURL += "/"
	}
	if o.HTTP == nil {
		o.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Adapter{o: o, log: o.Logger.With("component", "slack"), threads: map[string]bool{}}, nil
}

// Name implements chat.Platform.
func (a *Adapter) Name() string { return Name }

// Caps implements chat.Platform.
func (a *Adapter) Caps() chat.Caps {
	return chat.Caps{MaxText: maxText, ModalFields: 40, TypedInputs: true, PrivateButtons: true}
}

func (a *Adapter) client() (*slack.Client, error) { return a.api.Get(Name) }

// scrub removes the tokens from an error.
func (a *Adapter) scrub(err error) error {
	return chat.Scrub(err, a.o.BotToken, "<bot token>", a.o.AppToken, "<app token>")
}

// Connect implements chat.Platform: auth.test, then a Socket Mode
// connection whose events are handed to h, each acknowledged.
func (a *Adapter) Connect(ctx context.Context, h chat.Handler) error {
	api := slack.New(a.o.BotToken, slack.OptionAppLevelToken(a.o.AppToken), slack.OptionAPIURL(a.o.APIURL), slack.OptionHTTPClient(a.o.HTTP))
	auth, err := api.AuthTestContext(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("slack: auth.test: %w", a.scrub(err))
	}
	a.mu.Lock()
	a.self = auth.UserID
	a.mu.Unlock()
	defer a.api.Hold(api)()
	sm := socketmode.New(api)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- sm.RunContext(runCtx) }()
	fail := func(err error) error {
		cancel()
		<-errc // RunContext has returned: none of its goroutines is left
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	for {
		select {
		case err := <-errc:
			if ctx.Err() != nil {
				return nil
			}
			if err == nil {
				err = errors.New("socket mode stopped")
			}
			return fmt.Errorf("slack: socket mode: %w", a.scrub(err))
		case ev := <-sm.Events:
			switch ev.Type {
			case socketmode.EventTypeConnected:
				a.log.InfoContext(ctx, "connected", "bot", auth.UserID, "team", auth.TeamID)
				h.Connected(ctx)
			case socketmode.EventTypeInvalidAuth:
				return fail(errors.New("slack: socket mode: invalid auth (app token)"))
			case socketmode.EventTypeConnectionError:
				var cause error = errors.New("connection error")
				if ce, ok := ev.Data.(*slack.ConnectionErrorEvent); ok && ce.ErrorObj != nil {
					cause = ce.ErrorObj
				}
				return fail(fmt.Errorf("slack: socket mode: %w", a.scrub(cause)))
			case socketmode.EventTypeEventsAPI:
				if ev.Request != nil {
					_ = sm.AckCtx(ctx, ev.Request.EnvelopeID, nil)
				}
				if e, ok := ev.Data.(slackevents.EventsAPIEvent); ok {
					a.event(ctx, h, e)
				}
			case socketmode.EventTypeInteractive:
				cb, ok := ev.Data.(slack.InteractionCallback)
				if !ok || ev.Request == nil {
					continue
				}
				a.interaction(ctx, h, sm, ev.Request.EnvelopeID, cb)
			case socketmode.EventTypeSlashCommand:
				if ev.Request != nil {
					_ = sm.AckCtx(ctx, ev.Request.EnvelopeID, map[string]any{"response_type": "ephemeral",
						"text": "In Slack, write warden's commands in the request's thread, addressed to the bot: @warden /approve, /deny REASON, /pending, /yolo on|off."})
				}
			}
		}
	}
}

// remember notes a thread the bot takes part in: replies there are for
// it without a mention.
func (a *Adapter) remember(conv chat.Conv) {
	if conv.Thread == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.threads) >= maxThreads {
		clear(a.threads)
	}
	a.threads[conv.Chat+":"+conv.Thread] = true
}

func (a *Adapter) inThread(conv chat.Conv) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.threads[conv.Chat+":"+conv.Thread]
}

// event hands a message event to h.
func (a *Adapter) event(ctx context.Context, h chat.Handler, e slackevents.EventsAPIEvent) {
	m, ok := e.InnerEvent.Data.(*slackevents.MessageEvent)
	if !ok {
		return
	}
	switch m.SubType {
	case "", "thread_broadcast", "file_share":
	case "bot_message":
	default:
		return // edits, deletions, joins…
	}
	a.mu.Lock()
	self := a.self
	a.mu.Unlock()
	if m.User == self && self != "" {
		return // our own
	}
	thread := m.ThreadTimeStamp
	if thread == "" {
		thread = m.TimeStamp // a top-level message starts a thread
	}
	conv := chat.Conv{Chat: m.Channel, Thread: thread}
	text, mentioned := stripMention(m.Text, self)
	if mentioned {
		a.remember(conv)
	}
	h.Message(ctx, chat.Incoming{
		Conv:      conv,
		From:      chat.User{ID: m.User, Name: m.Username, Bot: m.BotID != "" || m.SubType == "bot_message" || m.User == ""},
		Text:      unescape(text),
		Addressed: m.ChannelType == "im" || mentioned || a.inThread(conv),
		ID:        m.TimeStamp,
	})
}

// stripMention removes a leading "<@BOT>" mention.
func stripMention(text, self string) (string, bool) {
	if self == "" {
		return text, false
	}
	tag := "<@" + self + ">"
	t := strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(t, tag); ok {
		return strings.TrimSpace(rest), true
	}
	if strings.Contains(t, tag) {
		return strings.TrimSpace(strings.ReplaceAll(t, tag, "")), true
	}
	return text, false
}

// unescape undoes Slack's escaping of message text.
func unescape(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}

// meta is what a modal carries to its submission: where its request's
// message is.
type meta struct {
	Chat    string `json:"c"`
	Thread  string `json:"t,omitempty"`
	Message string `json:"m,omitempty"`
}

// interaction handles a button press or a modal submission and
// acknowledges it (a submission's acknowledgement carries its errors).
func (a *Adapter) interaction(ctx context.Context, h chat.Handler, sm *socketmode.Client, envelope string, cb slack.InteractionCallback) {
	user := chat.User{ID: cb.User.ID, Name: cb.User.Name}
	if user.Name == "" {
		user.Name = cb.User.Profile.DisplayName
	}
	switch cb.Type {
	case slack.InteractionTypeBlockActions:
		_ = sm.AckCtx(ctx, envelope, nil)
		if len(cb.ActionCallback.BlockActions) == 0 {
			return
		}
		act := cb.ActionCallback.BlockActions[0]
		channel := cmpOr(cb.Channel.ID, cb.Container.ChannelID)
		ts := cmpOr(cb.Message.Timestamp, cb.Container.MessageTs)
		thread := cmpOr(cb.Message.ThreadTimestamp, cb.Container.ThreadTs, ts)
		conv := chat.Conv{Chat: channel, Thread: thread}
		r := &responder{a: a, conv: conv, user: user.ID, message: ts, trigger: cb.TriggerID, ephemeral: cb.Container.IsEphemeral}
		h.Click(ctx, chat.Click{Conv: conv, From: user, Data: act.ActionID, Message: ts, Respond: r})
	case slack.InteractionTypeViewSubmission:
		var m meta
		if err := json.Unmarshal([]byte(cb.View.PrivateMetadata), &m); err != nil || m.Chat == "" {
			_ = sm.AckCtx(ctx, envelope, nil)
			return
		}
		conv := chat.Conv{Chat: m.Chat, Thread: m.Thread}
		r := &responder{a: a, conv: conv, user: user.ID, message: m.Message, submission: true}
		values := map[string]string{}
		if cb.View.State != nil {
			for block, acts := range cb.View.State.Values {
				for _, v := range acts {
					switch v.Type {
					case "static_select":
						values[block] = v.SelectedOption.Value
					case "checkboxes":
						values[block] = fmt.Sprint(len(v.SelectedOptions) > 0)
					default:
						values[block] = v.Value
					}
				}
			}
		}
		h.Submit(ctx, chat.Submission{Conv: conv, From: user, Form: cb.View.CallbackID, Values: values, Respond: r})
		var payload any
		if r.errs != nil {
			payload = slack.NewErrorsViewSubmissionResponse(r.errs)
		}
		if err := sm.AckCtx(ctx, envelope, payload); err != nil {
			a.log.WarnContext(ctx, "acknowledge submission", "err", err)
		}
	default:
		_ = sm.AckCtx(ctx, envelope, nil)
	}
}

func cmpOr(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// Post implements chat.Platform.
func (a *Adapter) Post(ctx context.Context, conv chat.Conv, m chat.Message) (string, error) {
	api, err := a.client()
	if err != nil {
		return "", err
	}
	opts := []slack.MsgOption{slack.MsgOptionBlocks(blocks(m)...), slack.MsgOptionText(fallback(m), false), slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionDisableMediaUnfurl()}
	if conv.Thread != "" {
		opts = append(opts, slack.MsgOptionTS(conv.Thread))
	}
	_, ts, err := api.PostMessageContext(ctx, conv.Chat, opts...)
	if err != nil {
		return "", classify(a.scrub(err))
	}
	a.remember(conv)
	return ts, nil
}

// Edit implements chat.Platform.
func (a *Adapter) Edit(ctx context.Context, conv chat.Conv, id string, m chat.Message) error {
	api, err := a.client()
	if err != nil {
		return err
	}
	_, _, _, err = api.UpdateMessageContext(ctx, conv.Chat, id, slack.MsgOptionBlocks(blocks(m)...), slack.MsgOptionText(fallback(m), false))
	return classify(a.scrub(err))
}

// Whisper implements chat.Platform: an ephemeral message in the
// conversation, seen by user alone.
func (a *Adapter) Whisper(ctx context.Context, conv chat.Conv, user string, m chat.Message) error {
	api, err := a.client()
	if err != nil {
		return err
	}
	opts := []slack.MsgOption{slack.MsgOptionBlocks(blocks(m)...), slack.MsgOptionText(fallback(m), false)}
	if conv.Thread != "" {
		opts = append(opts, slack.MsgOptionTS(conv.Thread))
	}
	_, err = api.PostEphemeralContext(ctx, conv.Chat, user, opts...)
	return classify(a.scrub(err))
}

// classify: a message or channel that is gone is ErrGone.
func classify(err error) error {
	if err == nil {
		return nil
	}
	for _, gone := range []string{"channel_not_found", "message_not_found", "not_in_channel", "is_archived", "cant_update_message", "user_not_in_channel"} {
		if strings.Contains(err.Error(), gone) {
			return fmt.Errorf("%w: %w", chat.ErrGone, err)
		}
	}
	return err
}

// clip cuts s to n bytes on a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n -= len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func plain(s string, n int) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, clip(s, n), false, false)
}

// escape makes text inert in mrkdwn.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// fallback is the message's plain text for notifications.
func fallback(m chat.Message) string { return clip(escape(m.Plain()), maxText) }

// blocks renders m as Block Kit.
func blocks(m chat.Message) []slack.Block {
	var out []slack.Block
	for _, b := range m.Blocks {
		switch b.Kind {
		case chat.BlockTitle:
			out = append(out, slack.NewHeaderBlock(plain(b.Text, maxHeader)))
		case chat.BlockCode:
			out = append(out, slack.NewRichTextBlock("", &slack.RichTextPreformatted{
				Type:     slack.RTEPreformatted,
				Elements: []slack.RichTextSectionElement{slack.NewRichTextSectionTextElement(clip(b.Text, maxText), nil)},
			}))
		case chat.BlockField:
			t := b.Label + ":"
			if b.Text != "" {
				t += " " + b.Text
			}
			out = append(out, slack.NewSectionBlock(plain(t, maxText), nil, nil))
		case chat.BlockLink:
			u, err := url.Parse(b.Text)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
				out = append(out, slack.NewSectionBlock(plain(b.Label+": "+b.Text, maxText), nil, nil))
				continue
			}
			link := strings.NewReplacer("|", "%7C", "<", "%3C", ">", "%3E").Replace(u.String())
			out = append(out, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType,
				"<"+link+"|"+strings.ReplaceAll(escape(b.Label), "|", "¦")+">", false, true), nil, nil))
		default:
			if strings.TrimSpace(b.Text) == "" {
				continue
			}
			out = append(out, slack.NewSectionBlock(plain(b.Text, maxText), nil, nil))
		}
	}
	if len(m.Buttons) > 0 {
		var els []slack.BlockElement
		for _, b := range m.Buttons {
			btn := slack.NewButtonBlockElement(b.ID, b.ID, plain(b.Label, maxButton))
			switch b.Style {
			case chat.StylePrimary:
				btn.Style = slack.StylePrimary
			case chat.StyleDanger:
				btn.Style = slack.StyleDanger
			}
			els = append(els, btn)
		}
		out = append(out, slack.NewActionBlock("", els...))
	}
	return out
}

// responder answers a button press or a modal submission.
type responder struct {
	a          *Adapter
	conv       chat.Conv
	user       string
	message    string // the request's message
	trigger    string // opens a modal (presses only)
	ephemeral  bool   // the press was on an ephemeral message
	submission bool
	errs       map[string]string // a submission's refused values
}

// Private implements chat.Responder.
func (r *responder) Private(ctx context.Context, m chat.Message) error {
	return r.a.Whisper(ctx, r.conv, r.user, m)
}

// Update implements chat.Responder: the request's message is edited.
func (r *responder) Update(ctx context.Context, m chat.Message) error {
	if r.message == "" || r.ephemeral {
		return errors.New("slack: no message to update")
	}
	return r.a.Edit(ctx, r.conv, r.message, m)
}

// Form implements chat.Responder: a modal.
func (r *responder) Form(ctx context.Context, f chat.Form) error {
	if r.trigger == "" {
		return chat.ErrNoForm
	}
	api, err := r.a.client()
	if err != nil {
		return err
	}
	md, _ := json.Marshal(meta{Chat: r.conv.Chat, Thread: r.conv.Thread, Message: r.message})
	view := slack.ModalViewRequest{
		Type: slack.VTModal, Title: plain(f.Title, maxTitle), Submit: plain(f.Submit, maxTitle), Close: plain("Cancel", maxTitle),
		CallbackID: f.ID, PrivateMetadata: string(md),
	}
	for _, in := range f.Inputs {
		var el slack.BlockElement
		switch in.Kind {
		case chat.InputChoice:
			var opts []*slack.OptionBlockObject
			var initial *slack.OptionBlockObject
			for _, o := range in.Options {
				ob := slack.NewOptionBlockObject(o.Value, plain(o.Label, 75), nil)
				opts = append(opts, ob)
				if o.Value == in.Value {
					initial = ob
				}
			}
			sel := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Choose", 150), "v", opts...)
			sel.InitialOption = initial
			el = sel
		case chat.InputCheckbox:
			yes := slack.NewOptionBlockObject("true", plain("Yes", 75), nil)
			cb := slack.NewCheckboxGroupsBlockElement("v", yes)
			if in.Value == "true" {
				cb.InitialOptions = []*slack.OptionBlockObject{yes}
			}
			el = cb
		default:
			t := slack.NewPlainTextInputBlockElement(nil, "v")
			if in.Hint != "" {
				t.Placeholder = plain(in.Hint, 150)
			}
			t.InitialValue = in.Value
			t.Multiline = in.Multiline
			if in.MaxLen > 0 {
				t.MaxLength = min(in.MaxLen, 3000)
			}
			el = t
		}
		var hint *slack.TextBlockObject
		if in.Help != "" {
			hint = plain(in.Help, 2000)
		}
		ib := slack.NewInputBlock(in.ID, plain(in.Label, 2000), hint, el)
		ib.Optional = !in.Required
		view.Blocks.BlockSet = append(view.Blocks.BlockSet, ib)
	}
	_, err = api.OpenViewContext(ctx, r.trigger, view)
	return r.a.scrub(err)
}

// Invalid implements chat.Responder: the modal stays open with the
// errors beside their inputs.
func (r *responder) Invalid(ctx context.Context, errs map[string]string, retry chat.Message) error {
	if !r.submission {
		return r.Private(ctx, retry)
	}
	r.errs = errs
	return nil
}
