// Package discord is warden's Discord surface: an adapter of the chat
// core (internal/surface/chat) to Discord through
// github.com/bwmarrin/discordgo — the gateway websocket for messages and
// interactions, message components (buttons) for answers, modals for
// reasons and forms (pages of five inputs), and ephemeral interaction
// replies for private answers.
//
// A channel (a thread is a channel in Discord) is a session. The bot
// hears a channel's messages with the MESSAGE_CONTENT intent: "!cmd",
// "/approve"-style commands, and messages that mention it or reply to
// it; everything in a direct message. Every message it sends disallows
// all mentions and suppresses embeds, and text from requests, users and
// models is escaped, so nothing it posts can ping @everyone or fake
// formatting.
//
// The token goes in the Authorization header and the IDENTIFY payload
// only; errors are scrubbed of it.
package discord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/wardenhq/warden/internal/surface/chat"
)

// Name is the platform's name.
const Name = "discord"

// Bounds of Discord's API.
const (
	maxContent    = 2000
	maxModalTitle = 45
	maxLabel      = 45
	maxHint       = 100
	maxButton     = 80
	perRow        = 5
	// Intents are what the bot must receive: guild and direct messages
	// with their content (MESSAGE_CONTENT is privileged: enable it in
	// the developer portal).
	Intents = discordgo.IntentsGuildMessages | discordgo.IntentsDirectMessages | discordgo.IntentsMessageContent
)

// Options configure an adapter.
type Options struct {
	// Token is the bot's token (without "Bot ").
	Token string
	// APIBase replaces https://discord.com/ for every REST call (a REST
	// proxy, or a test's fake); the gateway's address comes from GET
	// /gateway there. "" is Discord itself.
	APIBase string
	// HTTP is the REST client; nil uses one with a timeout.
	HTTP   *http.Client
	Logger *slog.Logger
}

// Adapter is the Discord platform.
type Adapter struct {
	o    Options
	log  *slog.Logger
	http *http.Client

	live chat.Live[discordgo.Session]
	mu   sync.Mutex
	self string // the bot's user id
}

var _ chat.Platform = (*Adapter)(nil)

// New returns an adapter.
func New(o Options) (*Adapter, error) {
	if o.Token == "" {
		return nil, errors.New("discord: no token")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	base := o.HTTP
	if base == nil {
		base = &http.Client{Timeout: 20 * time.Second}
	}
	hc := base
	if o.APIBase != "" {
		u, err := url.Parse(o.APIBase)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("discord: api base %q: want an http(s) URL", o.APIBase)
		}
		rt := base.Transport
		if rt == nil {
			rt = http.DefaultTransport
		}
		c := *base
		c.Transport = rebase{to: u, next: rt}
		hc = &c
	}
	return &Adapter{o: o, log: o.Logger.With("component", "discord"), http: hc}, nil
}

// rebase sends discordgo's requests for https://discord.com/ to another
// base: discordgo builds its endpoints from package constants, and its
// HTTP client is the one option that reaches every call.
type rebase struct {
	to   *url.URL
	next http.RoundTripper
}

func (r rebase) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == "discord.com" {
		req = req.Clone(req.Context())
		req.URL.Scheme, req.URL.Host = r.to.Scheme, r.to.Host
		req.URL.Path = strings.TrimSuffix(r.to.Path, "/") + req.URL.Path
		req.Host = r.to.Host
	}
	return r.next.RoundTrip(req)
}

// Name implements chat.Platform.
func (a *Adapter) Name() string { return Name }

// Caps implements chat.Platform.
func (a *Adapter) Caps() chat.Caps {
	return chat.Caps{MaxText: maxContent, ModalFields: 5, PrivateButtons: true}
}

func (a *Adapter) scrub(err error) error { return chat.Scrub(err, a.o.Token, "<token>") }

func (a *Adapter) session() (*discordgo.Session, error) { return a.live.Get(Name) }

// Connect implements chat.Platform: a gateway connection (HELLO,
// IDENTIFY, READY, heartbeats) whose MESSAGE_CREATE and
// INTERACTION_CREATE events are handed to h. discordgo's own
// reconnection is off: the core reconnects, with backoff, by calling
// Connect again.
func (a *Adapter) Connect(ctx context.Context, h chat.Handler) error {
	s, err := discordgo.New("Bot " + a.o.Token)
	if err != nil {
		return fmt.Errorf("discord: %w", a.scrub(err))
	}
	s.Client = a.http
	s.Identify.Intents = Intents
	s.ShouldReconnectOnError = false
	s.ShouldReconnectVoiceOnSessionError = false
	s.StateEnabled = false
	s.SyncEvents = true  // handlers run on the reader: none outlives the connection
	s.LogLevel = -1      // discordgo logs to the standard logger; errors come back to us instead
	s.MaxRestRetries = 1 // an outage is the core's to retry
	lost := make(chan struct{}, 1)
	var once sync.Once
	remove := []func(){
		s.AddHandler(func(_ *discordgo.Session, r *discordgo.Ready) {
			a.mu.Lock()
			a.self = r.User.ID
			a.mu.Unlock()
		}),
		s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Disconnect) {
			once.Do(func() { lost <- struct{}{} })
		}),
		s.AddHandler(func(_ *discordgo.Session, m *discordgo.MessageCreate) { a.message(ctx, h, m.Message) }),
		s.AddHandler(func(_ *discordgo.Session, i *discordgo.InteractionCreate) { a.interaction(ctx, h, i.Interaction) }),
	}
	defer func() {
		for _, r := range remove {
			r()
		}
	}()
	if err := s.Open(); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("discord: open gateway: %w", a.scrub(err))
	}
	release := a.live.Hold(s)
	defer func() {
		release()
		_ = s.Close()
	}()
	a.log.InfoContext(ctx, "connected", "bot", a.selfID())
	h.Connected(ctx)
	select {
	case <-ctx.Done():
		return nil
	case <-lost:
		return errors.New("discord: gateway connection lost")
	}
}

func (a *Adapter) selfID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.self
}

// userOf is a Discord user as the core sees them.
func userOf(u *discordgo.User, roles []string) chat.User {
	if u == nil {
		return chat.User{Bot: true}
	}
	name := u.GlobalName
	if name == "" {
		name = u.Username
	}
	return chat.User{ID: u.ID, Name: name, Roles: roles, Bot: u.Bot || u.System}
}

// message hands a MESSAGE_CREATE to h.
func (a *Adapter) message(ctx context.Context, h chat.Handler, m *discordgo.Message) {
	self := a.selfID()
	if m.Author == nil || m.Author.ID == self {
		return
	}
	var roles []string
	if m.Member != nil {
		roles = m.Member.Roles
	}
	u := userOf(m.Author, roles)
	if m.WebhookID != "" {
		u.Bot = true // a webhook speaks as anyone it likes
	}
	text, mentioned := stripMention(m.Content, self)
	replyToBot := m.ReferencedMessage != nil && m.ReferencedMessage.Author != nil && m.ReferencedMessage.Author.ID == self
	h.Message(ctx, chat.Incoming{
		Conv:      chat.Conv{Chat: m.ChannelID},
		From:      u,
		Text:      text,
		Addressed: m.GuildID == "" || mentioned || replyToBot,
		ID:        m.ID,
	})
}

// stripMention removes "<@BOT>" and "<@!BOT>".
func stripMention(text, self string) (string, bool) {
	if self == "" {
		return text, false
	}
	found := false
	for _, tag := range []string{"<@" + self + ">", "<@!" + self + ">"} {
		if strings.Contains(text, tag) {
			found = true
			text = strings.ReplaceAll(text, tag, "")
		}
	}
	return strings.TrimSpace(text), found
}

// interaction hands a button press or a modal submission to h.
func (a *Adapter) interaction(ctx context.Context, h chat.Handler, i *discordgo.Interaction) {
	var u chat.User
	if i.Member != nil {
		u = userOf(i.Member.User, i.Member.Roles)
	} else {
		u = userOf(i.User, nil)
	}
	r := &responder{a: a, i: i}
	if i.Message != nil {
		r.message = i.Message.ID
		r.ephemeral = i.Message.Flags&discordgo.MessageFlagsEphemeral != 0
	}
	conv := chat.Conv{Chat: i.ChannelID}
	switch i.Type {
	case discordgo.InteractionMessageComponent:
		d := i.MessageComponentData()
		h.Click(ctx, chat.Click{Conv: conv, From: u, Data: d.CustomID, Message: r.message, Respond: r})
	case discordgo.InteractionModalSubmit:
		d := i.ModalSubmitData()
		values := map[string]string{}
		for _, row := range d.Components {
			ar, ok := row.(*discordgo.ActionsRow)
			if !ok {
				continue
			}
			for _, c := range ar.Components {
				if ti, ok := c.(*discordgo.TextInput); ok {
					values[ti.CustomID] = ti.Value
				}
			}
		}
		r.modal = true
		h.Submit(ctx, chat.Submission{Conv: conv, From: u, Form: d.CustomID, Values: values, Respond: r})
	default:
		return
	}
	r.finish(ctx)
}

// noMentions is every message's allowed mentions: none.
var noMentions = &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}

// Post implements chat.Platform.
func (a *Adapter) Post(ctx context.Context, conv chat.Conv, m chat.Message) (string, error) {
	s, err := a.session()
	if err != nil {
		return "", err
	}
	msg, err := s.ChannelMessageSendComplex(conv.Chat, &discordgo.MessageSend{
		Content: render(m), Components: components(m), AllowedMentions: noMentions, Flags: discordgo.MessageFlagsSuppressEmbeds,
	}, discordgo.WithContext(ctx))
	if err != nil {
		return "", classify(a.scrub(err))
	}
	return msg.ID, nil
}

// Edit implements chat.Platform.
func (a *Adapter) Edit(ctx context.Context, conv chat.Conv, id string, m chat.Message) error {
	s, err := a.session()
	if err != nil {
		return err
	}
	content, comps := render(m), components(m)
	_, err = s.ChannelMessageEditComplex(&discordgo.MessageEdit{ID: id, Channel: conv.Chat, Content: &content, Components: &comps, AllowedMentions: noMentions},
		discordgo.WithContext(ctx))
	return classify(a.scrub(err))
}

// Whisper implements chat.Platform: a direct message (Discord has no
// ephemeral messages outside interactions).
func (a *Adapter) Whisper(ctx context.Context, _ chat.Conv, user string, m chat.Message) error {
	s, err := a.session()
	if err != nil {
		return err
	}
	ch, err := s.UserChannelCreate(user, discordgo.WithContext(ctx))
	if err != nil {
		return classify(a.scrub(err))
	}
	_, err = a.Post(ctx, chat.Conv{Chat: ch.ID}, m)
	return err
}

// classify: Unknown Message (10008), Unknown Channel (10003), Missing
// Access (50001), Cannot send messages to this user (50007) are
// ErrGone.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Message != nil {
		switch re.Message.Code {
		case discordgo.ErrCodeUnknownMessage, discordgo.ErrCodeUnknownChannel, discordgo.ErrCodeMissingAccess, discordgo.ErrCodeCannotSendMessagesToThisUser:
			return fmt.Errorf("%w: %w", chat.ErrGone, err)
		}
	}
	return err
}

// escaper escapes Discord's markdown.
var escaper = strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "~", `\~`, "`", "\\`", "|", `\|`, ">", `\>`, "#", `\#`,
	"-", `\-`, "[", `\[`, "]", `\]`, "(", `\(`, ")", `\)`, "<", `\<`)

func escape(s string) string { return escaper.Replace(s) }

// markdown is Discord's markup: everything from outside escaped, code
// in code blocks.
var markdown = chat.Markup{
	Title: func(t string) string { return "**" + escape(t) + "**" },
	Text:  escape,
	// The core's code text has runs of backticks escaped already; this
	// keeps any other caller from closing the fence.
	Code: func(t string) string { return "```\n" + strings.ReplaceAll(t, "```", `\x60\x60\x60`) + "\n```" },
	Field: func(label, value string) string {
		if value == "" {
			return "**" + escape(label) + ":**"
		}
		return "**" + escape(label) + ":** " + escape(value)
	},
	Link: func(label, url string) string {
		return escape(label) + ": <" + strings.NewReplacer(">", "%3E", " ", "%20").Replace(url) + ">"
	},
}

// render is m as message content (markdown, everything from outside
// escaped, code in code blocks), within Discord's 2000 characters.
func render(m chat.Message) string {
	s := m.Render(markdown)
	if utf8.RuneCountInString(s) > maxContent {
		s = clip(escape(m.Plain()), maxContent-10)
	}
	return s
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// components are m's buttons, five to a row.
func components(m chat.Message) []discordgo.MessageComponent {
	out := []discordgo.MessageComponent{}
	var row discordgo.ActionsRow
	for _, b := range m.Buttons {
		style := discordgo.SecondaryButton
		switch b.Style {
		case chat.StylePrimary:
			style = discordgo.PrimaryButton
		case chat.StyleDanger:
			style = discordgo.DangerButton
		}
		row.Components = append(row.Components, discordgo.Button{Label: clip(b.Label, maxButton), Style: style, CustomID: b.ID})
		if len(row.Components) == perRow {
			out = append(out, row)
			row = discordgo.ActionsRow{}
		}
	}
	if len(row.Components) > 0 {
		out = append(out, row)
	}
	return out
}

// responder answers one interaction: the first call is the interaction's
// response, later ones follow-ups; an interaction nothing answered is
// acknowledged when the core is done with it.
type responder struct {
	a         *Adapter
	i         *discordgo.Interaction
	message   string // the message the button is on
	ephemeral bool
	modal     bool

	responded atomic.Bool // the first response is sent
}

// respond sends the interaction's response, or reports false if one was
// sent already.
func (r *responder) respond(ctx context.Context, resp *discordgo.InteractionResponse) (bool, error) {
	if !r.responded.CompareAndSwap(false, true) {
		return false, nil
	}
	s, err := r.a.session()
	if err != nil {
		return true, err
	}
	return true, r.a.scrub(s.InteractionRespond(r.i, resp, discordgo.WithContext(ctx)))
}

// Private implements chat.Responder: an ephemeral reply.
func (r *responder) Private(ctx context.Context, m chat.Message) error {
	data := &discordgo.InteractionResponseData{Content: render(m), Components: components(m), AllowedMentions: noMentions,
		Flags: discordgo.MessageFlagsEphemeral | discordgo.MessageFlagsSuppressEmbeds}
	first, err := r.respond(ctx, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource, Data: data})
	if first {
		return err
	}
	s, err := r.a.session()
	if err != nil {
		return err
	}
	_, err = s.FollowupMessageCreate(r.i, false, &discordgo.WebhookParams{Content: data.Content, Components: data.Components,
		AllowedMentions: noMentions, Flags: data.Flags}, discordgo.WithContext(ctx))
	return r.a.scrub(err)
}

// Update implements chat.Responder: the pressed message is replaced.
func (r *responder) Update(ctx context.Context, m chat.Message) error {
	if r.message == "" || r.ephemeral {
		return errors.New("discord: no message to update")
	}
	first, err := r.respond(ctx, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseUpdateMessage,
		Data: &discordgo.InteractionResponseData{Content: render(m), Components: components(m), AllowedMentions: noMentions}})
	if first {
		return err
	}
	return r.a.Edit(ctx, chat.Conv{Chat: r.i.ChannelID}, r.message, m)
}

// Form implements chat.Responder: a modal of text inputs (Discord's
// modals hold five; choices and yes/no are typed and checked on submit).
func (r *responder) Form(ctx context.Context, f chat.Form) error {
	if r.modal {
		return chat.ErrNoForm // a modal cannot answer a modal
	}
	var rows []discordgo.MessageComponent
	for _, in := range f.Inputs {
		style := discordgo.TextInputShort
		if in.Multiline {
			style = discordgo.TextInputParagraph
		}
		ti := discordgo.TextInput{CustomID: in.ID, Label: clip(in.Label, maxLabel), Style: style, Required: in.Required,
			Value: clip(in.Value, 4000), Placeholder: clip(in.Hint, maxHint), MaxLength: 4000}
		if in.MaxLen > 0 {
			ti.MaxLength = min(in.MaxLen, 4000)
		}
		rows = append(rows, discordgo.ActionsRow{Components: []discordgo.MessageComponent{ti}})
	}
	first, err := r.respond(ctx, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseModal,
		Data: &discordgo.InteractionResponseData{CustomID: f.ID, Title: clip(f.Title, maxModalTitle), Components: rows}})
	if !first {
		return chat.ErrNoForm
	}
	return err
}

// Invalid implements chat.Responder: Discord cannot keep a modal open,
// so the errors come back privately with a button to fill it in again.
func (r *responder) Invalid(ctx context.Context, _ map[string]string, retry chat.Message) error {
	return r.Private(ctx, retry)
}

// finish acknowledges an interaction nothing answered.
func (r *responder) finish(ctx context.Context) {
	if _, err := r.respond(ctx, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}); err != nil {
		r.a.log.WarnContext(ctx, "acknowledge interaction", "err", err)
	}
}
