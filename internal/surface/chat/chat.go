// Package chat is the platform-neutral core of warden's chat surfaces
// (Discord, Slack, Telegram): conversations are sessions, pending
// requests are messages with buttons, and answers come from the people
// allowed to give them. An adapter (internal/surface/discord, slack,
// telegram) speaks its platform's protocol and implements Platform; the
// Core does everything else, through the host's surface interface
// (internal/surface) only.
//
// # Conversations are sessions
//
// A channel, thread or chat is one session, keyed PLATFORM:CHAT[:THREAD]
// (SessionKey). A message to the bot runs as the owner
// gateway:PLATFORM/CHAT/USER with that session key and this Core as its
// answer channel: "!cmd" runs a command, anything else goes to the
// agent, continuing the session's conversation. A session's questions
// are posted only in its own conversation (invariant 4): the Core posts
// a request only if its session key is one of this platform's and a
// gateway owner of this platform and chat is in its lineage, so a
// console session that picked a key looking like a chat's is never
// shown there.
//
// # Approvals as controls
//
// A pending request is posted with the command as it will run (every
// invisible or control character made visible), its risk classes, who
// asks and its deadline, and buttons: once, this session, always (only
// where the request allows a grant), deny and deny with a reason. The
// message is edited on every ending — answered here or elsewhere,
// expired, withdrawn — so no live button stays behind; a click on an
// ended request is told so, never "approved" (invariant 10). Text
// commands: /approve [all] [session|always], /deny [reason], /pending,
// /yolo on|off (admins only).
//
// # Who may answer
//
// Approvers, admins and users (who may talk to the agent) are allowlists
// of platform user ids and role ids, per platform and per chat (a
// chat's list replaces the platform's there). Anyone else's click or
// command is refused privately and the refusal is audited with who
// tried. An "always" grant changes policy, so it takes an admin, as the
// console takes the admin scope. Bots and webhook messages are never
// accepted, whatever the lists say.
//
// # Forms
//
// An MCP server's question (an elicitation) in a chat session is posted
// with Fill in and Decline: a modal where the platform has them (one
// for Slack, pages of five inputs for Discord), a question-by-question
// exchange otherwise (Telegram), every value checked by internal/form
// as the console checks it.
//
// # Failure
//
// Each request's post is claimed in the store before it is sent and its
// message id kept (store.ChatPosts). After every (re)connection the
// Core edits the posts whose requests ended meanwhile and posts, once,
// the pending requests not yet shown. A platform outage or a revoked
// token never answers anything: requests keep their deadline and end
// expired (denied) like any other.
package chat

import (
	"context"
	"errors"
)

// ErrGone: the message no longer exists on the platform (deleted, or in
// a chat the bot left); editing it again cannot succeed.
var ErrGone = errors.New("message gone")

// ErrNoForm: the platform cannot open a form here.
var ErrNoForm = errors.New("no forms on this platform")

// Platform is an adapter to one chat platform.
type Platform interface {
	// Name is the platform's name: "discord", "slack", "telegram". It is
	// the owner's platform, the first part of session keys and the
	// surface named in answers.
	Name() string
	// Caps says what the platform can show.
	Caps() Caps
	// Connect connects and delivers the platform's events to h until the
	// connection fails or ctx ends; it calls h.Connected once connected.
	// It returns nil only when ctx ended. The Core reconnects with
	// backoff.
	Connect(ctx context.Context, h Handler) error
	// Post sends m to conv and returns the new message's id.
	Post(ctx context.Context, conv Conv, m Message) (string, error)
	// Edit replaces message id of conv with m; ErrGone when the message
	// no longer exists.
	Edit(ctx context.Context, conv Conv, id string, m Message) error
	// Whisper tells user alone, outside an interaction: an ephemeral
	// message where the platform has them, a direct message elsewhere.
	// It may fail (the user never opened a direct chat with the bot).
	Whisper(ctx context.Context, conv Conv, user string, m Message) error
}

// Caps is what a platform can show.
type Caps struct {
	// MaxText bounds one message's text, in bytes.
	MaxText int
	// ModalFields is how many inputs one form (modal) holds; 0 means the
	// platform has no forms and asks question by question.
	ModalFields int
	// TypedInputs is set when a form can hold checkboxes and choice
	// lists; otherwise every input is text, checked on submit.
	TypedInputs bool
	// PrivateButtons is set when private replies (Responder.Private)
	// can carry buttons.
	PrivateButtons bool
}

// Handler receives a platform's events; the Core implements it. Events
// may arrive concurrently.
type Handler interface {
	// Connected is called after each (re)connection.
	Connected(ctx context.Context)
	// Message is a text message in a conversation the bot sees.
	Message(ctx context.Context, m Incoming)
	// Click is a button press.
	Click(ctx context.Context, c Click)
	// Submit is a submitted form.
	Submit(ctx context.Context, s Submission)
}

// Conv is a conversation: a chat (channel, group, direct chat) and,
// where the platform has them, a thread in it.
type Conv struct {
	Chat   string
	Thread string
}

// User is who sent an event, as the platform proved it (the event came
// over the bot's authenticated connection, or was signed by the
// platform).
type User struct {
	// ID is the platform's user id.
	ID string
	// Name is the display name, for people only.
	Name string
	// Roles are the user's role ids in this chat, where the platform has
	// roles (Discord).
	Roles []string
	// Bot is set for bot users and for messages not sent by a person (a
	// webhook, a channel posting as itself): never accepted.
	Bot bool
}

// Incoming is a text message.
type Incoming struct {
	Conv Conv
	From User
	Text string
	// Addressed is set when the message is for the bot: a direct chat, a
	// mention, a reply to the bot, a command.
	Addressed bool
	// ID is the message's id.
	ID string
}

// Click is a button press on one of the bot's messages.
type Click struct {
	Conv Conv
	From User
	// Data is the button's id, as the Core made it.
	Data string
	// Message is the id of the message the button is on.
	Message string
	// Respond answers the click.
	Respond Responder
}

// Submission is a submitted form.
type Submission struct {
	Conv Conv
	From User
	// Form is the form's id, as the Core made it.
	Form string
	// Values are the inputs' values by input id: text as typed, a
	// choice's value, "true"/"false" for a checkbox.
	Values map[string]string
	// Respond answers the submission.
	Respond Responder
}

// Responder answers one click or submission. The first call answers
// the interaction; later calls (where the platform needs exactly one
// answer) become follow-ups.
type Responder interface {
	// Private tells the user who clicked or submitted, and nobody else.
	Private(ctx context.Context, m Message) error
	// Update replaces the clicked message with m.
	Update(ctx context.Context, m Message) error
	// Form opens a form for the user; ErrNoForm where the platform
	// cannot (then the Core asks question by question).
	Form(ctx context.Context, f Form) error
	// Invalid refuses a submitted form's values with a message per input
	// id, keeping the form open where the platform can; elsewhere it
	// tells the user privately with retry (if set).
	Invalid(ctx context.Context, errs map[string]string, retry Message) error
}

// Form is a modal: a title, inputs and a submit button.
type Form struct {
	// ID comes back as Submission.Form.
	ID     string
	Title  string
	Submit string
	Inputs []Input
}

// InputKind is the kind of a form input.
type InputKind string

// Input kinds.
const (
	InputText     InputKind = "text"
	InputChoice   InputKind = "choice"
	InputCheckbox InputKind = "checkbox"
)

// Input is one input of a form.
type Input struct {
	ID       string
	Kind     InputKind
	Label    string
	Help     string
	Required bool
	// Multiline asks for a paragraph rather than a line.
	Multiline bool
	// Value prefills the input; Hint is shown inside an empty one.
	Value, Hint string
	// MaxLen bounds a text input (0: the platform's limit).
	MaxLen  int
	Options []Option
}

// Option is one choice of a choice input.
type Option struct{ Value, Label string }
