// Package workerapi is the worker socket: how a kanban worker, spawned
// by the dispatcher, asks the host to act for its task run. It is a
// separate unix socket from the admin API (localapi), mode 0600 in the
// state directory, with worker-only verbs; nothing on it can answer
// approvals, change grants or read the audit log.
//
// # Identity
//
// A connection starts with no owner and can do nothing but say hello
// with the one-time token the dispatcher handed the worker on an
// inherited file descriptor. The host consumes the token (it is burnt by
// the attempt, whatever the outcome), checks it is bound to the task the
// worker names, that its run is still running and unexpired, and that
// the peer process (SO_PEERCRED) is the spawned worker or one of its
// descendants. From then on the connection is that run's owner —
// owner.Kanban(board, task, run) with session "kanban:TASK" — bound in
// the context of everything the host does for it. A token for another
// task, a reused, expired or unknown token all get the same refusal.
// The worker never decides: a shell command is decided by the host's
// gate, audited and run by the host (runner.Runner.Shell), in the task's
// workspace, and the worker hears the outcome.
//
// The connection is the run's lease: when it closes (the worker exited
// or was killed), the command the host is running for it is cancelled.
//
// # Protocol
//
// JSON lines over the socket: every message is one JSON object on one
// line ending in "\n", at most MaxMessage bytes. The worker sends a
// Request; the host answers with exactly one Response carrying the same
// id, in order: requests on one connection are handled one at a time.
// While a shell command runs, the host may send Events with the
// request's id before its Response (the command's output as it comes).
//
//	→ {"id":1,"verb":"hello","token":"…","task":"01jq…"}
//	← {"id":1,"ok":true,"hello":{"task":{…},"run":"01jq…","owner":"kanban:01jq…,run=01jq…,session=…","dir":"/…"}}
//	→ {"id":2,"verb":"shell","command":"make test"}
//	← {"id":2,"event":"output","data":"ok  \tpkg\t0.1s\n"}
//	← {"id":2,"ok":true,"shell":{"allowed":true,"verdict":"allow","rule":"safe","exit_code":0,"n":0,"output":"…"}}
//	→ {"id":3,"verb":"complete"}
//	← {"id":3,"ok":true,"status":"done"}
//
// Verbs: hello (token, task), shell (command), comment (body), complete,
// block (reason), fail (reason), cron_run (name, wait), agent. complete,
// block and fail end the run; the connection can do nothing after them.
// agent runs the task's prompt (from the store, not from the worker)
// through the host's agent as the run's owner and ends the run when the
// agent's turn ends: blocked if it called kanban_block, done otherwise
// (kanban_complete's summary, or else its last words, as a comment), or
// a recorded failure if the agent could not run.
package workerapi

import (
	"errors"
	"fmt"

	"github.com/wardenhq/warden/internal/store"
)

// SocketName is the worker socket's file name in the state directory.
const SocketName = "worker.sock"

// MaxMessage bounds one message line.
const MaxMessage = 1 << 20

// Verbs.
const (
	VerbHello    = "hello"
	VerbShell    = "shell"
	VerbComment  = "comment"
	VerbComplete = "complete"
	VerbBlock    = "block"
	VerbFail     = "fail"
	VerbCronRun  = "cron_run"
	VerbAgent    = "agent"
)

// Request is one message from the worker.
type Request struct {
	ID   uint64 `json:"id"`
	Verb string `json:"verb"`
	// hello
	Token string `json:"token,omitempty"`
	Task  string `json:"task,omitempty"`
	// shell
	Command string `json:"command,omitempty"`
	// comment
	Body string `json:"body,omitempty"`
	// block, fail
	Reason string `json:"reason,omitempty"`
	// cron_run
	Name string `json:"name,omitempty"`
	Wait bool   `json:"wait,omitempty"`
}

// Response is the host's one answer to a Request.
type Response struct {
	ID uint64 `json:"id"`
	OK bool   `json:"ok"`
	// Code and Error say why a request failed.
	Code  Code   `json:"code,omitempty"`
	Error string `json:"error,omitempty"`

	Hello *Hello       `json:"hello,omitempty"`
	Shell *ShellResult `json:"shell,omitempty"`
	Cron  *CronResult  `json:"cron,omitempty"`
	Agent *AgentResult `json:"agent,omitempty"`
	// Status is the task's status after complete, block or fail.
	Status store.TaskStatus `json:"status,omitempty"`
	// Comment is the id of a comment added.
	Comment int64 `json:"comment,omitempty"`
}

// Event is a message the host sends while a request runs.
type Event struct {
	ID    uint64 `json:"id"`
	Event string `json:"event"` // "output"
	Data  string `json:"data"`
}

// wire is what the client decodes: a Response or an Event.
type wire struct {
	Response
	Event string `json:"event,omitempty"`
	Data  string `json:"data,omitempty"`
}

// Hello is what the host tells a worker about its run.
type Hello struct {
	Task TaskInfo `json:"task"`
	Run  string   `json:"run"`
	// Owner is the connection's owner in the notation (for logs).
	Owner string `json:"owner"`
	// Dir is the workspace directory the host runs commands in.
	Dir string `json:"dir"`
}

// TaskInfo is the part of a task a worker needs.
type TaskInfo struct {
	ID        string   `json:"id"`
	Title     string   `json:"title"`
	Body      string   `json:"body"`
	Workspace string   `json:"workspace"`
	Script    []string `json:"script"`
	// Prompt is set for a prompt task: the worker asks the host to run
	// the agent (verb agent) instead of steps.
	Prompt string `json:"prompt,omitempty"`
}

// AgentResult is how an agent run for the task went.
type AgentResult struct {
	// Transcript is the run written down (also the run's step output).
	Transcript string `json:"transcript"`
	Reply      string `json:"reply"`
	Calls      int    `json:"calls"`
	Blocked    int    `json:"blocked"`
	// Status is the task's status after the run.
	Status store.TaskStatus `json:"status"`
}

// ShellResult is how a shell request ended.
type ShellResult struct {
	// Allowed is the gate's verdict (with a human's answer, if one was
	// asked); a command that was not allowed did not run.
	Allowed bool   `json:"allowed"`
	Verdict string `json:"verdict"`
	Rule    string `json:"rule"`
	// Message tells the worker why it was not allowed.
	Message  string `json:"message,omitempty"`
	ExitCode int    `json:"exit_code"`
	// N is the step's index in the run's history.
	N int `json:"n"`
	// Output is the command's output, capped as the run history keeps
	// it (store.CapOutput).
	Output string `json:"output"`
}

// CronResult is the run a cron_run request started.
type CronResult struct {
	RunID string `json:"run_id"`
	// Status is the run's end status when wait was asked, else "".
	Status string `json:"status,omitempty"`
}

// Code classifies a failed request.
type Code string

// Codes.
const (
	// CodeRefused: no identity, a refused token, or a verb the
	// connection may not use. Carries no detail.
	CodeRefused Code = "refused"
	// CodeEnded: the run has ended (completed, blocked, failed, or
	// stopped by an operator); the worker should exit.
	CodeEnded Code = "ended"
	// CodeBadRequest: a malformed request.
	CodeBadRequest Code = "bad_request"
	// CodeInternal: the host failed.
	CodeInternal Code = "internal"
)

// Sentinel errors for the client to branch on (errors.Is on an *Error).
var (
	ErrRefused  = errors.New("refused by the host")
	ErrEnded    = errors.New("run has ended")
	ErrInternal = errors.New("host failed")
)

// Error is a failed request as the client sees it.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("worker api: %s: %s", e.Code, e.Message) }

// Is matches the sentinel of e's code.
func (e *Error) Is(target error) bool {
	switch e.Code {
	case CodeRefused:
		return target == ErrRefused
	case CodeEnded:
		return target == ErrEnded
	case CodeInternal:
		return target == ErrInternal
	}
	return false
}
