// Package telegram is warden's Telegram surface: an adapter of the chat
// core (internal/surface/chat) to the Telegram Bot API through
// github.com/go-telegram-bot-api/telegram-bot-api/v5, by long polling
// (getUpdates), inline keyboards and callback queries.
//
// A chat (and, in a forum, a topic) is a session. In groups the bot
// hears commands, mentions and replies to itself (Telegram's privacy
// mode); in a private chat, everything. A button press is answered with
// answerCallbackQuery, privately (an alert only the presser sees); a
// request's message is edited with editMessageText when it ends. Forms
// are asked question by question.
//
// The token is a secret in every URL the library builds: errors are
// scrubbed of it before they are returned or logged.
package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/wardenhq/warden/internal/surface/chat"
)

// Name is the platform's name.
const Name = "telegram"

// Defaults.
const (
	// DefaultPollTimeout is getUpdates' long-poll timeout.
	DefaultPollTimeout = 25 * time.Second
	// DefaultMaxAge: messages older than this when they arrive were sent
	// while warden was away; they are not acted on (a "!cmd" typed
	// yesterday does not run today).
	DefaultMaxAge = 5 * time.Minute
	// maxText is Telegram's bound on a message's text.
	maxText = 4096
)

// Options configure an adapter.
type Options struct {
	// Token is the bot's token (from @BotFather).
	Token string
	// Endpoint is the Bot API's method URL pattern, with %s for the
	// token and the method; "" is tgbotapi.APIEndpoint. A local Bot API
	// server (or a test's fake) is set here.
	Endpoint string
	// HTTP is the client; nil uses one with sensible timeouts.
	HTTP        *http.Client
	PollTimeout time.Duration
	MaxAge      time.Duration
	Logger      *slog.Logger
	Now         func() time.Time
}

// Adapter is the Telegram platform.
type Adapter struct {
	o   Options
	log *slog.Logger

	bot chat.Live[tgbotapi.BotAPI] // the connected bot
}

var _ chat.Platform = (*Adapter)(nil)

// New returns an adapter.
func New(o Options) (*Adapter, error) {
	if o.Token == "" {
		return nil, errors.New("telegram: no token")
	}
	if o.Endpoint == "" {
		o.Endpoint = tgbotapi.APIEndpoint
	}
	if strings.Count(o.Endpoint, "%s") != 2 {
		return nil, errors.New("telegram: endpoint must hold %s twice (token, method)")
	}
	if o.PollTimeout <= 0 {
		o.PollTimeout = DefaultPollTimeout
	}
	if o.MaxAge <= 0 {
		o.MaxAge = DefaultMaxAge
	}
	if o.HTTP == nil {
		o.HTTP = &http.Client{Timeout: o.PollTimeout + 30*time.Second}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Adapter{o: o, log: o.Logger.With("component", "telegram")}, nil
}

// Name implements chat.Platform.
func (a *Adapter) Name() string { return Name }

// Caps implements chat.Platform.
func (a *Adapter) Caps() chat.Caps { return chat.Caps{MaxText: maxText} }

// ctxClient binds the library's requests (which take no context) to
// ctx, so a shutdown or a cancelled call stops them.
type ctxClient struct {
	ctx context.Context
	c   *http.Client
}

func (c ctxClient) Do(r *http.Request) (*http.Response, error) { return c.c.Do(r.WithContext(c.ctx)) }

// scrub removes the token from an error: the library's URLs hold it.
func (a *Adapter) scrub(err error) error { return chat.Scrub(err, a.o.Token, "<token>") }

// with returns the connected bot bound to ctx, or an error while
// disconnected.
func (a *Adapter) with(ctx context.Context) (*tgbotapi.BotAPI, error) {
	bot, err := a.bot.Get(Name)
	if err != nil {
		return nil, err
	}
	b := *bot
	b.Client = ctxClient{ctx, a.o.HTTP}
	return &b, nil
}

// request calls a Bot API method.
func (a *Adapter) request(ctx context.Context, method string, p tgbotapi.Params) (json.RawMessage, error) {
	b, err := a.with(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := b.MakeRequest(method, p)
	if err != nil {
		return nil, fmt.Errorf("telegram %s: %w", method, a.scrub(err))
	}
	return resp.Result, nil
}

// Connect implements chat.Platform: getMe, then long-poll getUpdates
// until ctx ends or a call fails.
func (a *Adapter) Connect(ctx context.Context, h chat.Handler) error {
	bot, err := tgbotapi.NewBotAPIWithClient(a.o.Token, a.o.Endpoint, ctxClient{ctx, a.o.HTTP})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("telegram: connect: %w", a.scrub(err))
	}
	defer a.bot.Hold(bot)()
	a.log.InfoContext(ctx, "connected", "bot", bot.Self.UserName)
	h.Connected(ctx)
	offset := 0
	for {
		p := tgbotapi.Params{"timeout": strconv.Itoa(int(a.o.PollTimeout / time.Second)), "allowed_updates": `["message","callback_query"]`}
		p.AddNonZero("offset", offset)
		raw, err := a.request(ctx, "getUpdates", p)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		var updates []json.RawMessage
		if err := json.Unmarshal(raw, &updates); err != nil {
			return fmt.Errorf("telegram: getUpdates: %w", err)
		}
		for _, u := range updates {
			id := a.dispatch(ctx, h, bot.Self, u)
			if id >= offset {
				offset = id + 1
			}
		}
	}
}

// threadOf is the part of an update the library's types lack: forum
// topics.
type threadOf struct {
	Message *struct {
		MessageThreadID int  `json:"message_thread_id"`
		IsTopicMessage  bool `json:"is_topic_message"`
	} `json:"message"`
	CallbackQuery *struct {
		Message *struct {
			MessageThreadID int  `json:"message_thread_id"`
			IsTopicMessage  bool `json:"is_topic_message"`
		} `json:"message"`
	} `json:"callback_query"`
}

// dispatch hands one update to h and returns its id.
func (a *Adapter) dispatch(ctx context.Context, h chat.Handler, self tgbotapi.User, raw json.RawMessage) int {
	var u tgbotapi.Update
	if err := json.Unmarshal(raw, &u); err != nil {
		a.log.WarnContext(ctx, "unreadable update", "err", err)
		var id struct {
			UpdateID int `json:"update_id"`
		}
		_ = json.Unmarshal(raw, &id)
		return id.UpdateID
	}
	var th threadOf
	_ = json.Unmarshal(raw, &th)
	switch {
	case u.Message != nil:
		m := u.Message
		thread := ""
		if th.Message != nil && th.Message.IsTopicMessage && th.Message.MessageThreadID != 0 {
			thread = strconv.Itoa(th.Message.MessageThreadID)
		}
		if m.Chat == nil || m.From == nil {
			return u.UpdateID
		}
		if age := a.o.Now().Sub(time.Unix(int64(m.Date), 0)); age > a.o.MaxAge {
			a.log.InfoContext(ctx, "ignored a message sent while warden was away", "chat", m.Chat.ID, "age", age.Round(time.Second))
			return u.UpdateID
		}
		text, mentioned := stripMention(m.Text, self.UserName)
		replyToBot := m.ReplyToMessage != nil && m.ReplyToMessage.From != nil && m.ReplyToMessage.From.ID == self.ID
		h.Message(ctx, chat.Incoming{
			Conv:      chat.Conv{Chat: strconv.FormatInt(m.Chat.ID, 10), Thread: thread},
			From:      userOf(m.From, m.SenderChat != nil),
			Text:      text,
			Addressed: m.Chat.IsPrivate() || mentioned || replyToBot || strings.HasPrefix(text, "/"),
			ID:        strconv.Itoa(m.MessageID),
		})
	case u.CallbackQuery != nil:
		q := u.CallbackQuery
		if q.From == nil {
			return u.UpdateID
		}
		r := &responder{a: a, query: q.ID, user: q.From.ID}
		if q.Message == nil || q.Message.Chat == nil {
			_ = r.Private(ctx, chat.Say("That message is too old to act on."))
			return u.UpdateID
		}
		thread := ""
		if th.CallbackQuery != nil && th.CallbackQuery.Message != nil && th.CallbackQuery.Message.IsTopicMessage && th.CallbackQuery.Message.MessageThreadID != 0 {
			thread = strconv.Itoa(th.CallbackQuery.Message.MessageThreadID)
		}
		r.conv = chat.Conv{Chat: strconv.FormatInt(q.Message.Chat.ID, 10), Thread: thread}
		r.message = q.Message.MessageID
		h.Click(ctx, chat.Click{Conv: r.conv, From: userOf(q.From, false), Data: q.Data, Message: strconv.Itoa(q.Message.MessageID), Respond: r})
		r.finish(ctx)
	}
	return u.UpdateID
}

// userOf is a Telegram user as the core sees them. A message sent on
// behalf of a chat (an anonymous group admin, a linked channel) carries
// a placeholder user: it is treated as not a person.
func userOf(u *tgbotapi.User, onBehalfOfChat bool) chat.User {
	name := u.UserName
	if name == "" {
		name = strings.TrimSpace(u.FirstName + " " + u.LastName)
	}
	return chat.User{ID: strconv.FormatInt(u.ID, 10), Name: name, Bot: u.IsBot || onBehalfOfChat}
}

// stripMention removes "@bot" from the text, reporting whether it was
// there.
func stripMention(text, bot string) (string, bool) {
	if bot == "" {
		return text, false
	}
	at := "@" + bot
	i := strings.Index(strings.ToLower(text), strings.ToLower(at))
	if i < 0 {
		return text, false
	}
	if strings.HasPrefix(text, "/") && i > 0 && !strings.ContainsAny(text[:i], " \n") {
		return text, true // "/approve@bot …": the command parser strips it
	}
	return strings.TrimSpace(text[:i] + text[i+len(at):]), true
}

// Post implements chat.Platform.
func (a *Adapter) Post(ctx context.Context, conv chat.Conv, m chat.Message) (string, error) {
	p, err := params(conv, m)
	if err != nil {
		return "", err
	}
	raw, err := a.request(ctx, "sendMessage", p)
	if err != nil {
		return "", classify(err)
	}
	var msg tgbotapi.Message
	if err := json.Unmarshal(raw, &msg); err != nil {
		return "", fmt.Errorf("telegram sendMessage: %w", err)
	}
	return strconv.Itoa(msg.MessageID), nil
}

// Edit implements chat.Platform.
func (a *Adapter) Edit(ctx context.Context, conv chat.Conv, id string, m chat.Message) error {
	p, err := params(chat.Conv{Chat: conv.Chat}, m)
	if err != nil {
		return err
	}
	p["message_id"] = id
	if len(m.Buttons) == 0 {
		p["reply_markup"] = `{"inline_keyboard":[]}`
	}
	_, err = a.request(ctx, "editMessageText", p)
	return classify(err)
}

// Whisper implements chat.Platform: a direct message to the user (it
// fails unless they once opened a chat with the bot).
func (a *Adapter) Whisper(ctx context.Context, _ chat.Conv, user string, m chat.Message) error {
	_, err := a.Post(ctx, chat.Conv{Chat: user}, m)
	return err
}

// classify turns the Bot API's errors into the core's: an edit that
// changes nothing is done, a message or chat that is gone is ErrGone.
func classify(err error) error {
	if err == nil {
		return nil
	}
	msg := strings.ToLower(err.Error())
	switch {
	case strings.Contains(msg, "message is not modified"):
		return nil
	case strings.Contains(msg, "message to edit not found"), strings.Contains(msg, "chat not found"),
		strings.Contains(msg, "bot was kicked"), strings.Contains(msg, "bot was blocked"), strings.Contains(msg, "not enough rights"):
		return fmt.Errorf("%w: %w", chat.ErrGone, err)
	}
	return err
}

// params renders m for sendMessage / editMessageText: HTML with every
// text escaped, an inline keyboard of the buttons.
func params(conv chat.Conv, m chat.Message) (tgbotapi.Params, error) {
	p := tgbotapi.Params{"chat_id": conv.Chat, "text": render(m), "parse_mode": "HTML", "disable_web_page_preview": "true"}
	if conv.Thread != "" {
		p["message_thread_id"] = conv.Thread
	}
	if len(m.Buttons) > 0 {
		var rows [][]tgbotapi.InlineKeyboardButton
		var row []tgbotapi.InlineKeyboardButton
		for _, b := range m.Buttons {
			if len(b.ID) > 64 {
				return nil, fmt.Errorf("telegram: button data %q longer than 64 bytes", b.ID)
			}
			row = append(row, tgbotapi.NewInlineKeyboardButtonData(b.Label, b.ID))
			if len(row) == 3 {
				rows, row = append(rows, row), nil
			}
		}
		if len(row) > 0 {
			rows = append(rows, row)
		}
		kb, err := json.Marshal(tgbotapi.NewInlineKeyboardMarkup(rows...))
		if err != nil {
			return nil, err
		}
		p["reply_markup"] = string(kb)
	}
	return p, nil
}

// markup is Telegram's HTML: the only tags are these.
var markup = chat.Markup{
	Title: func(t string) string { return "<b>" + html.EscapeString(t) + "</b>" },
	Text:  html.EscapeString,
	Code:  func(t string) string { return "<pre>" + html.EscapeString(t) + "</pre>" },
	Field: func(label, value string) string {
		if value == "" {
			return "<b>" + html.EscapeString(label) + ":</b>"
		}
		return "<b>" + html.EscapeString(label) + ":</b> " + html.EscapeString(value)
	},
	Link: func(label, url string) string {
		return `<a href="` + html.EscapeString(url) + `">` + html.EscapeString(label) + "</a>"
	},
}

// render is m as Telegram HTML. Everything from requests, users and
// models is escaped; only the tags written here are markup.
func render(m chat.Message) string {
	s := m.Render(markup)
	if len(s) > maxText {
		// Cut outside any tag: fall back to the plain rendering, clipped.
		s = html.EscapeString(clip(m.Plain(), maxText-200))
	}
	return s
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// responder answers one callback query: the first private reply is the
// query's answer (an alert only the presser sees); later ones are direct
// messages. Every query is answered, at the latest when the core is
// done with it, so the client stops its spinner.
type responder struct {
	a       *Adapter
	query   string
	user    int64
	conv    chat.Conv
	message int

	answered atomic.Bool // the query is answered
}

func (r *responder) answer(ctx context.Context, text string, alert bool) (bool, error) {
	if !r.answered.CompareAndSwap(false, true) {
		return false, nil
	}
	p := tgbotapi.Params{"callback_query_id": r.query}
	p.AddNonEmpty("text", clip(text, 190))
	p.AddBool("show_alert", alert)
	_, err := r.a.request(ctx, "answerCallbackQuery", p)
	return true, err
}

// Private implements chat.Responder.
func (r *responder) Private(ctx context.Context, m chat.Message) error {
	first, err := r.answer(ctx, m.Plain(), true)
	if first {
		return err
	}
	return r.a.Whisper(ctx, r.conv, strconv.FormatInt(r.user, 10), m)
}

// Update implements chat.Responder: the pressed message is edited.
func (r *responder) Update(ctx context.Context, m chat.Message) error {
	if err := r.a.Edit(ctx, r.conv, strconv.Itoa(r.message), m); err != nil {
		return err
	}
	_, err := r.answer(ctx, "", false)
	return err
}

// Form implements chat.Responder: Telegram has no forms.
func (r *responder) Form(context.Context, chat.Form) error { return chat.ErrNoForm }

// Invalid implements chat.Responder.
func (r *responder) Invalid(ctx context.Context, _ map[string]string, retry chat.Message) error {
	return r.Private(ctx, retry)
}

// finish answers the query if nothing else did.
func (r *responder) finish(ctx context.Context) {
	if _, err := r.answer(ctx, "", false); err != nil {
		r.a.log.DebugContext(ctx, "answer callback query", "err", err)
	}
}
