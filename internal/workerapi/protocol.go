// Package workerapi is the worker protocol: how a kanban worker asks
// the host for what only the host may give a task run — decisions,
// answers, and the run's record. It is served on two listeners with the
// same verbs: a unix socket in the state directory (mode 0600) for the
// workers the host's dispatcher spawns, and, when kanban.remote is on, a
// TLS listener for workers on other machines. Nothing on either can
// answer approvals, change grants or read the audit log.
//
// # Who runs what
//
// The worker runs its task's steps — or, for a prompt task, its agent
// loop and the agent's tools — itself, inside its sandbox (a local
// worker is inside the sandbox the dispatcher started it in, so its
// steps are too; a remote worker runs each step in its own machine's
// sandbox), and asks the host only for decisions and, for a prompt
// task, for the model's replies: decide sends the exact action (a
// command's text; a program; a file write); the host's gate decides it
// as the run's owner, through the runner's one path (decide, audit, ask
// a human, audit), and answers allow or deny with the rule and the
// reason. The worker runs exactly the decided action (a command's same
// bytes to bash), in its workspace, with the environment the host gave
// it at hello; then it reports the step (exit code and output), which
// the host records under the decision it made. The host never runs a
// worker's action. See docs/workers.md for why.
//
// # Identity
//
// A connection starts with no owner and can do nothing but say hello
// with a one-time token. The host consumes the token (it is burnt by
// the attempt, whatever the outcome), checks it is bound to the task the
// worker names, that its run is still running and unexpired, and, on
// the unix socket, that the peer process (SO_PEERCRED) is the spawned
// worker or one of its descendants; on the TLS listener, that the run
// was issued to a remote worker by an operator of this host. From then
// on the connection is that run's owner — owner.Kanban(board, task, run)
// with session "kanban:TASK", from the host's record of the run, never
// from what the worker sends — bound in the context of every decision.
// A token for another task, a reused, expired or unknown token all get
// the same refusal.
//
// # Leases
//
// A local worker's connection is its lease: the dispatcher fences the
// run (kills the worker's sandbox with its steps) when the worker exits.
// A remote worker's run has a lease the worker renews with heartbeats
// (any message renews it); the host acknowledges each heartbeat. When
// no message arrives for the lease's length, the host closes the
// connection, fails the run and the task is claimed again. A remote
// worker that has had no acknowledgement for half the lease kills its
// running step and stops, so a retry never overlaps it.
//
// # Protocol
//
// JSON lines: every message is one JSON object on one line ending in
// "\n", at most MaxMessage bytes. The worker sends a Request; the host
// answers with exactly one Response carrying the same id, in order:
// requests on one connection are handled one at a time. A heartbeat
// (id 0) may be sent at any time, also while a request waits; the host
// answers it with an Event of id 0 ("lease") at once.
//
//	→ {"id":1,"verb":"hello","token":"…","task":"01jq…"}
//	← {"id":1,"ok":true,"hello":{"task":{…},"run":"01jq…","owner":"kanban:01jq…,run=01jq…,session=…","dir":"/…","env":[…]}}
//	→ {"id":2,"verb":"decide","command":"make test"}
//	← {"id":2,"ok":true,"decision":{"allowed":true,"verdict":"allow","rule":"safe"}}
//	→ {"id":3,"verb":"step","command":"make test","exit_code":0,"output":"ok  \tpkg\t0.1s\n"}
//	← {"id":3,"ok":true,"step":0}
//	→ {"id":4,"verb":"complete"}
//	← {"id":4,"ok":true,"status":"done"}
//
// Verbs: hello (token, task; workspace from a remote worker), decide
// (an action: command, or kind with its fields), step (the same
// action, exit_code, output), model (results), comment (body),
// complete, block (reason), fail (reason), cron_run (name, wait),
// heartbeat. complete, block and fail end the run; the connection can
// do nothing after them.
//
// # Prompt tasks
//
// A prompt task's worker runs the agent loop (internal/agent) itself,
// with the same tools as every kanban agent: terminal, execute_code,
// read_file, write_file and the kanban tools of its own task. Each
// shell command, code run and file write is an action the host decides
// (decide with kind shell, code or write) and the worker then runs
// exactly as decided and reports (step); read_file is confined to the
// workspace and is not an action the gate decides. The kanban tools are
// the comment, complete and block verbs.
//
// The model is the host's: model sends only the results of the tool
// calls the model's last reply made, and the host — which holds the
// conversation (its system prompt, the task's prompt from its own
// record, the tool schemas, every reply) — calls the configured model
// with its own credentials and answers with the model's next message.
// The model's address and key never reach the worker. The host
// refuses a model call for a run without a prompt, after the model
// ended its turn, beyond llm.max_turns, with results that do not answer
// exactly the calls outstanding, or larger than its bounds
// (MaxToolResult, MaxConversation); a model call ends with the run like
// every verb.
//
//	→ {"id":2,"verb":"model"}
//	← {"id":2,"ok":true,"model":{"message":{"role":"assistant","tool_calls":[{"id":"c1","name":"terminal","arguments":"{\"command\":\"make\"}"}]}}}
//	→ {"id":3,"verb":"decide","action":{"kind":"shell","command":"make"}}
//	← {"id":3,"ok":true,"decision":{"allowed":true,"verdict":"allow","rule":"safe","action":{…}}}
//	→ {"id":4,"verb":"step","action":{"kind":"shell","command":"make"},"output":"…"}
//	→ {"id":5,"verb":"model","results":[{"tool_call_id":"c1","content":"…"}]}
package workerapi

import (
	"errors"
	"fmt"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/llm"
	"github.com/wardenhq/warden/internal/store"
)

// SocketName is the worker socket's file name in the state directory.
const SocketName = "worker.sock"

// MaxMessage bounds one message line.
const MaxMessage = 1 << 20

// Verbs.
const (
	VerbHello     = "hello"
	VerbDecide    = "decide"
	VerbStep      = "step"
	VerbHeartbeat = "heartbeat"
	VerbComment   = "comment"
	VerbComplete  = "complete"
	VerbBlock     = "block"
	VerbFail      = "fail"
	VerbCronRun   = "cron_run"
	VerbModel     = "model"
)

// Bounds of what the host proxies to the model for a worker.
const (
	// MaxToolResult bounds one tool result sent with model, in bytes
	// (the agent clips its results well below it).
	MaxToolResult = 64 << 10
	// MaxConversation bounds the conversation the host keeps for a
	// run's model calls, in bytes of text: the task's prompt, every
	// reply and every result.
	MaxConversation = 4 << 20
)

// Request is one message from the worker.
type Request struct {
	ID   uint64 `json:"id"`
	Verb string `json:"verb"`
	// hello
	Token string `json:"token,omitempty"`
	Task  string `json:"task,omitempty"`
	// hello from a remote worker: the absolute directory it runs the
	// task's steps in, on its machine.
	Workspace string `json:"workspace,omitempty"`
	// decide, step: a shell command (script steps), or Action.
	Command string `json:"command,omitempty"`
	Action  *Act   `json:"action,omitempty"`
	// step: how the decided command ended (-1: it did not run to an
	// exit) and its output, capped as the run history keeps it.
	ExitCode int    `json:"exit_code,omitempty"`
	Output   string `json:"output,omitempty"`
	// comment
	Body string `json:"body,omitempty"`
	// block, fail
	Reason string `json:"reason,omitempty"`
	// cron_run
	Name string `json:"name,omitempty"`
	Wait bool   `json:"wait,omitempty"`
	// model: the results of the tool calls of the model's last reply.
	Results []ToolResult `json:"results,omitempty"`
}

// Response is the host's one answer to a Request.
type Response struct {
	ID uint64 `json:"id"`
	OK bool   `json:"ok"`
	// Code and Error say why a request failed.
	Code  Code   `json:"code,omitempty"`
	Error string `json:"error,omitempty"`

	Hello    *Hello    `json:"hello,omitempty"`
	Decision *Decision `json:"decision,omitempty"`
	// Step is the index of the step recorded (step verb).
	Step  int         `json:"step,omitempty"`
	Cron  *CronResult `json:"cron,omitempty"`
	Model *ModelReply `json:"model,omitempty"`
	// Status is the task's status after complete, block or fail.
	Status store.TaskStatus `json:"status,omitempty"`
	// Comment is the id of a comment added.
	Comment int64 `json:"comment,omitempty"`
}

// Event is a message the host sends while a request runs.
type Event struct {
	ID    uint64 `json:"id"`
	Event string `json:"event"` // "lease"
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
	// Dir is the workspace: the directory every step runs in and is
	// decided in. For a local worker it is the host's record of the
	// task's workspace; for a remote worker, the one it named at hello.
	Dir string `json:"dir"`
	// Env is the complete environment of the steps (local workers):
	// the host's allowlisted environment (execenv), nothing of the
	// worker's own.
	Env []string `json:"env,omitempty"`
	// Passthrough are the operator's extra variable names
	// (tools.env_passthrough): a remote worker builds its steps'
	// environment with execenv from its own environment and these.
	Passthrough []string `json:"passthrough,omitempty"`
	// Network is the host's sandbox.network: a remote worker's steps
	// get the network only when it is true.
	Network bool `json:"network,omitempty"`
	// LeaseMillis is the lease of a remote worker's run, in
	// milliseconds: the worker sends a heartbeat at least every third
	// of it. Zero for a local worker (its connection is its lease).
	LeaseMillis int64 `json:"lease_ms,omitempty"`
	// MaxTurns is how many model calls the host answers for a prompt
	// task's run (llm.max_turns).
	MaxTurns int `json:"max_turns,omitempty"`
}

// TaskInfo is the part of a task a worker needs.
type TaskInfo struct {
	ID        string   `json:"id"`
	Title     string   `json:"title"`
	Body      string   `json:"body"`
	Workspace string   `json:"workspace"`
	Script    []string `json:"script"`
	// Prompt is set for a prompt task: the worker runs the agent loop,
	// its model calls answered by the host (verb model), instead of
	// steps.
	Prompt string `json:"prompt,omitempty"`
}

// Act is an action a worker asks the host to decide: its kind and the
// fields of that kind (shell: Command; code: Language and Source;
// write: Path and Size). Where it runs is the run's workspace and who
// asks is the run's owner: neither is the worker's to say.
type Act struct {
	Kind     action.Kind `json:"kind"`
	Command  string      `json:"command,omitempty"`
	Language string      `json:"language,omitempty"`
	Source   string      `json:"source,omitempty"`
	// Path is the file written: relative to the workspace, or absolute
	// inside it. The decision carries it absolute; the worker writes
	// that path.
	Path string `json:"path,omitempty"`
	// Size is the length of the content written.
	Size int64 `json:"size,omitempty"`
}

// ShellAct is the action of a shell command.
func ShellAct(command string) Act { return Act{Kind: action.Shell, Command: command} }

// CodeAct is the action of running source in language.
func CodeAct(language, source string) Act {
	return Act{Kind: action.Code, Language: language, Source: source}
}

// WriteAct is the action of writing size bytes to path.
func WriteAct(path string, size int64) Act { return Act{Kind: action.Write, Path: path, Size: size} }

// Text is how the run's history names the action: a command as it is,
// a code run and a write by their tool.
func (a Act) Text() string {
	switch a.Kind {
	case action.Code:
		return "execute_code (" + a.Language + "):\n" + a.Source
	case action.Write:
		return fmt.Sprintf("write_file %s (%d bytes)", a.Path, a.Size)
	}
	return a.Command
}

// ToolResult is what a tool call of the model's came to, as the
// worker's agent tells the model.
type ToolResult struct {
	CallID  string `json:"tool_call_id"`
	Content string `json:"content"`
}

// ModelReply is the model's next message, from the host.
type ModelReply struct {
	Message      llm.Message `json:"message"`
	FinishReason string      `json:"finish_reason,omitempty"`
}

// Decision is the host's answer to decide.
type Decision struct {
	// Allowed is the gate's verdict (with a human's answer, if one was
	// asked): only an allowed command may be run, exactly as sent.
	Allowed bool   `json:"allowed"`
	Verdict string `json:"verdict"`
	Rule    string `json:"rule"`
	// Message tells the worker why it was not allowed.
	Message string `json:"message,omitempty"`
	// N is the step's index in the run's history when the host
	// recorded a denied step; an allowed one is recorded by step.
	N int `json:"n,omitempty"`
	// Action is the action decided, as the host read it (a write's
	// path made absolute): an allowed one is run exactly so, and
	// reported so.
	Action *Act `json:"action,omitempty"`
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
