// Package surface is what a surface — a place where humans answer
// warden's questions and talk to agents: the chat adapters, the web
// console and the chat terminal — needs from the host, as one small
// interface the host implements (internal/hostsurface), with two
// companions for the views only the console has: the kanban board
// (Board) and the scheduler (Cron).
//
// A surface proves who its human is (a platform's signed user id, a
// console login) and builds the owner of its sessions at the edge
// (internal/owner); everything it does for that human goes through
// Host: reading and watching the session's pending requests, answering
// one as the proven identity, running a "!cmd" or a message to the
// agent as the session's owner, turning session yolo on or off. A
// surface never reaches the store, the runner, the scheduler or the
// board directly, so every action it causes passes the same gate, and
// every answer the same compare-and-swap, as the other surfaces'.
package surface

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/form"
	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
)

// Sentinel errors.
var (
	// ErrNotPending: the request already ended; the answer was not used.
	ErrNotPending = broker.ErrNotPending
	// ErrForeign: a session key is another owner's (another platform's,
	// the console's), so this surface must not serve it.
	ErrForeign = errors.New("session belongs to another owner")
	// ErrNoModel: no model is configured, so messages cannot reach an
	// agent.
	ErrNoModel = errors.New("no model configured")
	// ErrBusy: the conversation's agent is still working on the previous
	// message.
	ErrBusy = errors.New("the agent is still working on the previous message")
	// ErrNotRunning: the host's scheduler has stopped (the host is
	// shutting down), so no cron run can start.
	ErrNotRunning = errors.New("the scheduler is not running")
)

// Host is what a surface needs from the host.
type Host interface {
	// Pending lists the pending requests of session, oldest first; ""
	// lists every session's.
	Pending(ctx context.Context, session string) ([]store.Request, error)
	// Request reads one request in whatever state it is;
	// store.ErrNotFound if there is none. A request found ended (by
	// another process sharing the store) wakes this host's waiter.
	Request(ctx context.Context, id string) (store.Request, error)
	// Watch streams request events of session ("" for all) until ctx
	// ends. A slow reader misses events: re-read Pending now and then.
	Watch(ctx context.Context, session string) <-chan broker.Event
	// Answer answers request id as a.By. A request that already ended
	// gives ErrNotPending with the request as it ended (and wakes this
	// host's waiter, if another process ended it).
	Answer(ctx context.Context, id string, a Answer) (store.Request, error)
	// Refused audits an answer that was not taken — from someone not
	// allowed to answer, a bot, another conversation — with why. It
	// resolves nothing.
	Refused(ctx context.Context, r store.Request, by Identity, why string) error
	// Session opens o's session (o.SessionKey()) if it is new, and
	// returns its row; ErrForeign when the key is another owner's: a
	// session of another platform, chat or kind.
	Session(ctx context.Context, o owner.Owner) (store.SessionRow, error)
	// SetYolo turns session yolo on or off, as by.
	SetYolo(ctx context.Context, session string, on bool, by Identity) error
	// Shell runs command as o (an owner with a session key and an answer
	// channel), writing its output to stdout and stderr (the same writer
	// for a surface that shows them as one). To hear of the question it
	// asks, make o broker.Notifying.
	Shell(ctx context.Context, o owner.Owner, command string, stdout, stderr io.Writer) (Outcome, error)
	// Converse sends message to the agent as o, continuing
	// conversation; emit, if set, hears each step as it happens. One
	// message per conversation at a time (ErrBusy); ErrNoModel without
	// a model.
	Converse(ctx context.Context, o owner.Owner, conversation, message string, emit func(Step)) (Reply, error)
	// Agent reports whether a model is configured.
	Agent() bool
	// Link is the console's page of request id, or "" when the host has
	// no console address to give.
	Link(id string) string
}

// Answer is a human's decision on one request, with who gave it.
type Answer struct {
	// Approve is false for a denial (or a declined form).
	Approve bool
	// Scope is once, session or always (approvals only).
	Scope store.Scope
	// Grain is exact (the default), prefix or class for session and
	// always approvals; Pattern a chosen prefix.
	Grain   grant.Grain
	Pattern string
	// Reason is a denial's reason, shown to the agent.
	Reason string
	// Content is an accepted elicitation's values (a JSON object).
	Content json.RawMessage
	// By is who answered, as the surface proved it.
	By Identity
}

// Identity is a human as a surface proved them: the platform's own id
// for the user (a signed interaction, an authenticated event stream, a
// console login), never a name they chose.
type Identity struct {
	// Surface is where they answered: "discord", "slack", "telegram",
	// "web", "terminal".
	Surface string
	// User is the platform's id of the user.
	User string
	// Name is the display name, for people only: users choose it, so
	// nothing decides by it.
	Name string
	// Credential, if set, is what proved them, recorded as it is
	// instead of Surface:User: the console's login session or API
	// token (credential.Describe), which says more than an id.
	Credential string
}

// String is how the identity is recorded: "discord:123 (alice)", or
// the credential that proved them. The name is cleaned and clipped: it
// is text the user chose.
func (i Identity) String() string {
	if i.Credential != "" {
		return i.Credential
	}
	s := i.Surface + ":" + i.User
	if n := form.Clean(i.Name, 64, false); n != "" {
		s += " (" + strings.ReplaceAll(n, ")", "]") + ")"
	}
	return s
}

// Outcome is how a "!cmd" ended.
type Outcome struct {
	// Ran is true when the command ran; Exit is then its exit status.
	Ran  bool
	Exit int
	// Request is the question it asked, if any.
	Request string
	// Message says why it did not run (the gate's or the human's
	// reason), or what went wrong.
	Message string
}

// StepKind names a step of an agent run.
type StepKind string

// Step kinds (the agent's event kinds).
const (
	StepText       StepKind = "text"
	StepToolCall   StepKind = "tool_call"
	StepPending    StepKind = "pending"
	StepBlocked    StepKind = "blocked"
	StepToolResult StepKind = "tool_result"
	StepNotice     StepKind = "notice"
)

// Step is one step of an agent run as a surface shows it. Tool
// arguments, results and the model's text are untrusted.
type Step struct {
	Kind StepKind
	Text string
	// Delta marks a piece of the model's words as they stream, from a
	// host that streams them (the chat terminal's).
	Delta   bool
	Tool    string
	Args    string
	Request string
}

// Reply is how an agent run ended.
type Reply struct {
	// Text is the model's last words.
	Text string
	// Calls is how many tool calls the model made; Blocked how many were
	// refused.
	Calls, Blocked int
	// Capped is set when the run stopped at the turn cap.
	Capped bool
}

// Board is the kanban board as a surface shows it: the host's one board
// service behind it. A host without a board gives a surface none (nil).
type Board interface {
	// Tasks lists every task.
	Tasks(ctx context.Context) ([]store.Task, error)
	// Card reads a task with its runs and comments; store.ErrNotFound
	// if there is none.
	Card(ctx context.Context, id string) (Card, error)
	// Comment adds author's comment to task id; store.ErrNotFound if
	// there is no such task.
	Comment(ctx context.Context, id, author, body string) error
}

// Card is a task with its runs (each step's verdict, rule, exit code and
// output) and its comments.
type Card struct {
	store.Task
	Runs     []store.TaskRun
	Comments []store.TaskComment
}

// Cron is the scheduler as a surface shows it. A host that runs no
// scheduler gives a surface none (nil).
type Cron interface {
	// Jobs lists the jobs.
	Jobs(ctx context.Context) ([]store.CronJob, error)
	// Runs lists runs of job ("" for every job) with their steps,
	// newest first, at most limit.
	Runs(ctx context.Context, job string, limit int) ([]store.CronRun, error)
	// Run reads one run.
	Run(ctx context.Context, id string) (store.CronRun, error)
	// RunNow starts a run of job name now, as an operator asked: its
	// owner is cron(job, run) with no parent, exactly as for warden
	// cron run. It returns the run's id; store.ErrNotFound when there
	// is no such job (or name cannot be a job's), ErrNotRunning when
	// the scheduler has stopped.
	RunNow(ctx context.Context, name string) (string, error)
}
