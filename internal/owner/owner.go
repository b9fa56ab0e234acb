// Package owner says who owns an execution: an immutable Owner value that
// travels with the work in a context.Context.
//
// The system warden re-implements kept identity in process-global state
// (environment variables, module flags), and concurrent sessions read
// each other's. Here an Owner is built by a constructor at the edge
// (terminal, chat adapter, scheduler, dispatcher, hook server), bound to
// the work's context with With, and read back only with From. There is
// no package-level "current owner", nothing reads the environment, and an
// Owner cannot be changed after it is built: the With… methods return a
// new value.
//
// # Notation
//
// String and Parse use one notation, what people type after
// warden check --as and what logs print:
//
//	lineage := owner { ">" owner }          parent first
//	owner   := kind [ ":" id { "/" id } ] { "," attr "=" id }
//
// by kind:
//
//	cli, single_query, api, webhook, internal   no ids
//	gateway:PLATFORM/CHAT[/USER]
//	cron:JOB            attr run
//	kanban:TASK         attrs board, run
//	subagent[:ID]
//	external:AGENT[/SESSION]
//
// and every kind takes the attr session (the session key). Examples:
// "gateway:web/KEY", "cron:nightly,run=42", "kanban:T1>cron:J1".
//
// Ids keep letters and digits (of any script) and "-_.~+@" as they are;
// any other character is written as %XX per UTF-8 byte, so an id may
// hold any text and String and Parse round trip. An answer channel is never part of the notation: it is a live
// capability, not something a string can grant.
package owner

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Sentinel errors.
var (
	// ErrInvalid is wrapped by constructor and With… errors: a missing
	// required id, a malformed id, a nil answer channel, a lineage too
	// deep.
	ErrInvalid = errors.New("invalid owner")
	// ErrSyntax is wrapped by Parse errors about the notation itself.
	ErrSyntax = errors.New("owner notation")
)

// MaxDepth bounds a lineage (the owner and its ancestors). Real nesting
// is a handful deep (a cron run started by a kanban worker's
// sub-agent…); the bound keeps a runaway delegation loop from growing
// audit records and lineage walks without limit.
const MaxDepth = 16

// maxIDLen bounds every id and the session key, in bytes.
const maxIDLen = 512

// Kind is what sort of execution an owner is.
type Kind string

// Kinds. The zero Kind is not valid: the zero Owner has no kind.
const (
	// KindCLI is an interactive terminal session (warden chat).
	KindCLI Kind = "cli"
	// KindSingleQuery is a one-shot, non-interactive run (chat -q).
	KindSingleQuery Kind = "single_query"
	// KindGateway is a chat session on a messaging surface or the web
	// console: platform, chat and (optionally) user.
	KindGateway Kind = "gateway"
	// KindCron is a scheduled run: job id and (optionally) run id.
	KindCron Kind = "cron"
	// KindKanban is a worker on a kanban task: task id, optionally board
	// and run ids.
	KindKanban Kind = "kanban"
	// KindAPI is a caller of warden's HTTP API.
	KindAPI Kind = "api"
	// KindWebhook is a run triggered by an inbound webhook.
	KindWebhook Kind = "webhook"
	// KindSubagent is an agent delegated by another owner (its parent).
	KindSubagent Kind = "subagent"
	// KindExternal is another agent (Claude Code, Codex…) putting its
	// tool calls through warden: agent name and that agent's session id.
	KindExternal Kind = "external"
	// KindInternal is warden's own housekeeping.
	KindInternal Kind = "internal"
)

var kinds = []Kind{
	KindCLI, KindSingleQuery, KindGateway, KindCron, KindKanban,
	KindAPI, KindWebhook, KindSubagent, KindExternal, KindInternal,
}

// Kinds returns every valid kind, in documentation order.
func Kinds() []Kind { return append([]Kind(nil), kinds...) }

// Valid reports whether k is one of the documented kinds.
func (k Kind) Valid() bool {
	for _, v := range kinds {
		if k == v {
			return true
		}
	}
	return false
}

// String returns the kind's name as used in the notation and JSON.
func (k Kind) String() string { return string(k) }

// unattendedByKind reports whether no human can ever answer for this
// kind, whatever is attached: the run was started by a schedule or a
// one-shot command, not by someone watching. A kanban run is not among
// them: the host may attach its console to one (approvals.kanban_mode
// ask), and without that it is unattended like an API caller.
func (k Kind) unattendedByKind() bool {
	switch k {
	case KindCron, KindSingleQuery, KindInternal:
		return true
	}
	return false
}

// AnswerChannel is a live route to the human who can answer for an owner:
// a terminal prompt, a web console session, a chat with buttons, an MCP
// client that supports elicitation. It is the capability behind "a human
// can answer" (invariant 9): an Owner can answer only if code holding a
// real channel attached it with WithChannel. No string, flag or
// environment variable can make an Owner attended, and Parse and JSON
// never produce a channel.
type AnswerChannel interface {
	// Surface names where the human answers ("terminal", "web",
	// "telegram", "elicitation"), for audit and display.
	Surface() string
}

// Owner is who owns an execution. It is immutable: every method returns
// information or a new Owner. Copy it freely; copies share the same
// immutable data.
//
// The zero Owner means "no owner". It is never valid, never attended and
// always unattended, so code that forgot to set an owner fails closed
// (invariant 2).
//
// Compare owners with Equal, not ==.
type Owner struct {
	d *data
}

// data is shared by copies of an Owner and never written after the
// constructor returns.
type data struct {
	kind    Kind
	session string

	platform, chat, user string // gateway
	job, run             string // cron; run also for kanban
	board, task          string // kanban
	agent, extSession    string // external
	subagent             string // subagent id

	channel AnswerChannel
	parent  *data
	depth   int // 1 for a root
}

func newOwner(d data) Owner {
	d.depth = 1
	return Owner{d: &d}
}

// checkID validates one id. Ids are opaque, but they end up in audit
// records, chat messages and terminal output, so control characters and
// invalid UTF-8 are refused rather than escaped at every use.
func checkID(field, s string, required bool) error {
	if s == "" {
		if required {
			return fmt.Errorf("%s is required: %w", field, ErrInvalid)
		}
		return nil
	}
	if len(s) > maxIDLen {
		return fmt.Errorf("%s is longer than %d bytes: %w", field, maxIDLen, ErrInvalid)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s %q is not valid UTF-8: %w", field, s, ErrInvalid)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return fmt.Errorf("%s %q contains a control character: %w", field, s, ErrInvalid)
		}
	}
	return nil
}

// CLI returns the owner of an interactive terminal session. Attach the
// terminal with WithChannel and a per-session key with WithSession.
func CLI() Owner { return newOwner(data{kind: KindCLI}) }

// SingleQuery returns the owner of a one-shot run. Nobody watches it, so
// it is unattended and follows single_query_mode.
func SingleQuery() Owner { return newOwner(data{kind: KindSingleQuery}) }

// API returns the owner of an HTTP API caller. It is unattended unless a
// notifier is attached with WithChannel.
func API() Owner { return newOwner(data{kind: KindAPI}) }

// Webhook returns the owner of a webhook-triggered run. It is unattended
// unless a channel is attached.
func Webhook() Owner { return newOwner(data{kind: KindWebhook}) }

// Internal returns the owner of warden's own housekeeping. It is
// unattended.
func Internal() Owner { return newOwner(data{kind: KindInternal}) }

// Gateway returns the owner of a chat session on platform (e.g.
// "telegram", "web") in chat, optionally for one user. platform and chat
// are required.
func Gateway(platform, chat, user string) (Owner, error) {
	if err := errors.Join(
		checkID("gateway platform", platform, true),
		checkID("gateway chat", chat, true),
		checkID("gateway user", user, false),
	); err != nil {
		return Owner{}, err
	}
	return newOwner(data{kind: KindGateway, platform: platform, chat: chat, user: user}), nil
}

// Cron returns the owner of a run of the scheduled job jobID. runID names
// this run and may be empty when no run exists yet (warden check --as).
func Cron(jobID, runID string) (Owner, error) {
	if err := errors.Join(
		checkID("cron job", jobID, true),
		checkID("cron run", runID, false),
	); err != nil {
		return Owner{}, err
	}
	return newOwner(data{kind: KindCron, job: jobID, run: runID}), nil
}

// Kanban returns the owner of a worker on taskID. boardID and runID are
// optional: a single-board host has no board id, and a task considered
// before it is claimed has no run. It is unattended unless the host
// attaches a channel (approvals.kanban_mode ask).
func Kanban(boardID, taskID, runID string) (Owner, error) {
	if err := errors.Join(
		checkID("kanban board", boardID, false),
		checkID("kanban task", taskID, true),
		checkID("kanban run", runID, false),
	); err != nil {
		return Owner{}, err
	}
	return newOwner(data{kind: KindKanban, board: boardID, task: taskID, run: runID}), nil
}

// Subagent returns the owner of a delegated agent. id optionally names
// the delegation (typically after the parent's session). Give it its
// parent with WithParent: the lineage is what keeps delegation from
// widening trust.
func Subagent(id string) (Owner, error) {
	if err := checkID("subagent id", id, false); err != nil {
		return Owner{}, err
	}
	return newOwner(data{kind: KindSubagent, subagent: id}), nil
}

// External returns the owner of another agent's tool call: the agent's
// name (required) and that agent's own session id (optional).
func External(agent, sessionID string) (Owner, error) {
	if err := errors.Join(
		checkID("external agent", agent, true),
		checkID("external session", sessionID, false),
	); err != nil {
		return Owner{}, err
	}
	return newOwner(data{kind: KindExternal, agent: agent, extSession: sessionID}), nil
}

// clone returns a shallow copy of o's data for a With… method.
func (o Owner) clone() (data, error) {
	if o.d == nil {
		return data{}, fmt.Errorf("zero owner: %w", ErrInvalid)
	}
	return *o.d, nil
}

// WithSession returns o with session key key: the grain of session
// approvals, session yolo and pending requests. An empty key means "no
// session"; session-scoped state must never be keyed by it.
func (o Owner) WithSession(key string) (Owner, error) {
	d, err := o.clone()
	if err != nil {
		return Owner{}, fmt.Errorf("set session: %w", err)
	}
	if err := checkID("session key", key, false); err != nil {
		return Owner{}, fmt.Errorf("set session: %w", err)
	}
	d.session = key
	return Owner{d: &d}, nil
}

// WithChannel returns o with ch attached: a human can now be asked for
// o. ch must be non-nil. Kinds nobody watches (cron, single_query,
// internal) refuse a channel, because their mode decides at once
// (invariant 9) and a channel would only suggest otherwise. A kanban
// owner takes one only from the host that dispatched its run (the web
// console, when approvals.kanban_mode is ask), never from its worker.
func (o Owner) WithChannel(ch AnswerChannel) (Owner, error) {
	d, err := o.clone()
	if err != nil {
		return Owner{}, fmt.Errorf("attach channel: %w", err)
	}
	if ch == nil {
		return Owner{}, fmt.Errorf("attach channel: nil channel: %w", ErrInvalid)
	}
	if d.kind.unattendedByKind() {
		return Owner{}, fmt.Errorf("attach channel: %s owners cannot be answered: %w", d.kind, ErrInvalid)
	}
	d.channel = ch
	return Owner{d: &d}, nil
}

// WithParent returns o as a child of parent: o was started on parent's
// behalf (a sub-agent of a chat session, a cron run launched by a kanban
// worker). o must not have a parent already, so a lineage can never be
// cut short by re-parenting; parent must be valid, and the whole lineage
// at most MaxDepth long.
func (o Owner) WithParent(parent Owner) (Owner, error) {
	d, err := o.clone()
	if err != nil {
		return Owner{}, fmt.Errorf("set parent: %w", err)
	}
	if parent.d == nil {
		return Owner{}, fmt.Errorf("set parent of %s: zero parent: %w", o, ErrInvalid)
	}
	if d.parent != nil {
		return Owner{}, fmt.Errorf("set parent of %s: already has parent %s: %w", o, o.mustParent(), ErrInvalid)
	}
	if parent.d.depth+1 > MaxDepth {
		return Owner{}, fmt.Errorf("set parent of %s: lineage deeper than %d: %w", o, MaxDepth, ErrInvalid)
	}
	d.parent = parent.d
	d.depth = parent.d.depth + 1
	return Owner{d: &d}, nil
}

func (o Owner) mustParent() Owner { return Owner{d: o.d.parent} }

// Valid reports whether o is a real owner (built by a constructor), not
// the zero Owner.
func (o Owner) Valid() bool { return o.d != nil }

// Kind returns o's kind, or "" for the zero Owner.
func (o Owner) Kind() Kind { return o.get().kind }

// SessionKey returns the session key, or "" if o has none.
func (o Owner) SessionKey() string { return o.get().session }

// Platform returns a gateway owner's platform.
func (o Owner) Platform() string { return o.get().platform }

// Chat returns a gateway owner's chat id.
func (o Owner) Chat() string { return o.get().chat }

// User returns a gateway owner's user id, if known.
func (o Owner) User() string { return o.get().user }

// Job returns a cron owner's job id.
func (o Owner) Job() string { return o.get().job }

// Run returns a cron or kanban owner's run id, if any.
func (o Owner) Run() string { return o.get().run }

// Board returns a kanban owner's board id, if any.
func (o Owner) Board() string { return o.get().board }

// Task returns a kanban owner's task id.
func (o Owner) Task() string { return o.get().task }

// Agent returns an external owner's agent name.
func (o Owner) Agent() string { return o.get().agent }

// ExternalSession returns an external owner's own session id, if any.
func (o Owner) ExternalSession() string { return o.get().extSession }

// SubagentID returns a subagent owner's delegation id, if any.
func (o Owner) SubagentID() string { return o.get().subagent }

// get returns o's data, or empty data for the zero Owner so accessors
// need no nil checks. The zero case allocates instead of sharing a
// package-level value: this package keeps no package-level state at all.
func (o Owner) get() *data {
	if o.d == nil {
		return new(data)
	}
	return o.d
}

// Parent returns the owner o was started for, if any.
func (o Owner) Parent() (Owner, bool) {
	if o.d == nil || o.d.parent == nil {
		return Owner{}, false
	}
	return Owner{d: o.d.parent}, true
}

// Lineage returns o's ancestry root first, ending with o itself: the
// order of the notation ("kanban:T1>cron:J1" is the kanban worker, then
// the cron run it started). The zero Owner has an empty lineage.
func (o Owner) Lineage() []Owner {
	if o.d == nil {
		return nil
	}
	out := make([]Owner, o.d.depth)
	i := len(out) - 1
	for d := o.d; d != nil; d = d.parent {
		out[i] = Owner{d: d}
		i--
	}
	return out
}

// Channel returns the attached answer channel, if any.
func (o Owner) Channel() (AnswerChannel, bool) {
	ch := o.get().channel
	return ch, ch != nil
}

// CanAnswer reports whether an answer channel is attached to o itself.
// It says nothing about the lineage; use Attended to decide whether to
// ask.
func (o Owner) CanAnswer() bool { return o.get().channel != nil }

// Unattended reports whether o, on its own, is an execution nobody can
// answer for: cron, single_query and internal always; api, webhook and
// kanban unless a channel is attached; and the zero Owner. The gate
// resolves such owners from their modes at once.
func (o Owner) Unattended() bool {
	d := o.get()
	switch d.kind {
	case KindCLI, KindGateway, KindSubagent, KindExternal:
		return false
	case KindAPI, KindWebhook, KindKanban:
		return d.channel == nil
	}
	return true // unattended kinds, and anything unknown
}

// LineageUnattended reports whether o or any ancestor is Unattended. A
// sub-agent of a cron run is unattended even though sub-agents are not,
// so a prompt-controlled worker cannot reach a human-approval path by
// delegating (invariant 5).
func (o Owner) LineageUnattended() bool {
	if o.d == nil {
		return true
	}
	for d := o.d; d != nil; d = d.parent {
		if (Owner{d: d}).Unattended() {
			return true
		}
	}
	return false
}

// Attended reports whether a human can be asked for o: nothing along its
// lineage is unattended and o itself has an answer channel. The zero
// Owner is never attended.
func (o Owner) Attended() bool { return o.CanAnswer() && !o.LineageUnattended() }

// Equal reports whether o and p name the same owner: same kind, ids,
// session key and lineage. Answer channels are compared by presence
// only: a channel is a live connection, not part of who the owner is.
func (o Owner) Equal(p Owner) bool {
	a, b := o.d, p.d
	for a != nil && b != nil {
		if a == b {
			return true
		}
		x, y := *a, *b
		if (x.channel != nil) != (y.channel != nil) {
			return false
		}
		x.channel, y.channel, x.parent, y.parent = nil, nil, nil, nil
		if x != y {
			return false
		}
		a, b = a.parent, b.parent
	}
	return a == nil && b == nil
}

// WebPlatform is the gateway platform of web console sessions.
const WebPlatform = "web"

// Web returns the attended owner of web console session key:
// gateway:web/KEY with session key KEY, answered on ch (the console).
// `warden exec --session` and the console's composer both act as it.
func Web(key string, ch AnswerChannel) (Owner, error) {
	o, err := Gateway(WebPlatform, key, "")
	if err == nil {
		o, err = o.WithSession(key)
	}
	if err == nil {
		o, err = o.WithChannel(ch)
	}
	if err != nil {
		return Owner{}, fmt.Errorf("web session %q: %w", key, err)
	}
	return o, nil
}
