// Package localapi is the host's admin API: JSON over HTTP on a unix
// socket in the state directory, for the CLI on the same machine
// (warden approvals, grants, exec, audit, cron).
//
// Identity is taken at the edge, from the connection, never from the
// request: the socket is created mode 0600 inside a 0700 directory, and
// every connection's peer credentials (SO_PEERCRED) are checked before a
// handler runs — the host's own uid or root only. Requests that carry
// Origin or Referer, or a Host other than the socket's, are refused, so
// a browser tricked into talking to the socket (DNS rebinding, a local
// proxy) gets nothing.
//
// Client is the CLI's side of the same protocol.
package localapi

import (
	"encoding/json"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/store"
)

// SocketName is the socket's file name in the state directory.
const SocketName = "warden.sock"

// Host is the Host header every request must carry: the socket's name,
// which no browser can be made to send to it.
const Host = SocketName

// Surface is the surface name recorded for answers given through this
// API (warden approvals approve/deny).
const Surface = "cli"

// Approval is one pending request as GET /v1/approvals lists it.
type Approval struct {
	ID      string `json:"id"`
	Session string `json:"session"`
	// Owner is the owner's JSON: kind, ids, session, lineage.
	Owner     json.RawMessage `json:"owner"`
	OwnerText string          `json:"owner_text"`
	// Action is the action: kind, command (shell), dir, ….
	Action  action.Action `json:"action"`
	Classes []string      `json:"classes"`
	// Rule is the gate's rule that asked (normally "human").
	Rule     string    `json:"rule"`
	Created  time.Time `json:"created_at"`
	Deadline time.Time `json:"deadline"`
	// Prefix is the argv prefix "--grain prefix" records when no pattern
	// is given ("git push" for "git push -f origin main"); empty when none
	// can be proposed.
	Prefix string `json:"prefix,omitempty"`
	// Notice is warden's note to the human with the question (the
	// security reviewer fell back to manual).
	Notice string `json:"notice,omitempty"`
	// Elicit is set when the question is an MCP server's: answer it with
	// approve and content (accept) or deny (decline).
	Elicit *store.Elicitation `json:"elicit,omitempty"`
}

// ApproveRequest is the body of POST /v1/approvals/{id}/approve.
type ApproveRequest struct {
	// Scope is once (default), session or always.
	Scope string `json:"scope,omitempty"`
	// Grain is exact (default), prefix or class; it applies to session
	// and always.
	Grain string `json:"grain,omitempty"`
	// Pattern is the argv prefix for the prefix grain ("git push");
	// empty proposes one from the command.
	Pattern string `json:"pattern,omitempty"`
	// By is a label for who answered. The host records it beside the
	// identity it read from the socket, which is what counts.
	By string `json:"by,omitempty"`
	// Content answers an MCP server's question (a JSON object of its
	// form's fields); only for such questions, which are answered once.
	Content json.RawMessage `json:"content,omitempty"`
}

// DenyRequest is the body of POST /v1/approvals/{id}/deny.
type DenyRequest struct {
	// Reason is shown to the agent (and in exec's stderr).
	Reason string `json:"reason,omitempty"`
	By     string `json:"by,omitempty"`
}

// Result is how a request ended, as approve and deny return it (and as a
// 409 carries it for a late answer).
type Result struct {
	ID       string      `json:"id"`
	Session  string      `json:"session"`
	State    store.State `json:"state"`
	Scope    store.Scope `json:"scope,omitempty"`
	Grain    grant.Grain `json:"grain,omitempty"`
	By       string      `json:"by,omitempty"`
	Surface  string      `json:"surface,omitempty"`
	Reason   string      `json:"reason,omitempty"`
	Resolved time.Time   `json:"resolved_at,omitzero"`
}

// ErrorBody is the body of every error response.
type ErrorBody struct {
	Error string `json:"error"`
	// State and Request are set on a 409 for a late answer: the request
	// had already ended, and how.
	State   store.State `json:"state,omitempty"`
	Request *Result     `json:"request,omitempty"`
}

// ExecRequest is the body of POST /v1/exec.
type ExecRequest struct {
	// Session is the web session key: the command runs as the attended
	// owner gateway:web/SESSION, whose human answers on the console.
	Session string `json:"session"`
	// Command is one shell command line.
	Command string `json:"command"`
	// Dir is the absolute working directory; empty means the host's.
	Dir string `json:"dir,omitempty"`
}

// Event types of the exec stream.
const (
	EventPending = "pending" // a human must answer: ID, Console, Deadline
	EventStdout  = "stdout"  // Data (or B64) is output
	EventStderr  = "stderr"
	EventExit    = "exit"   // the command ran and exited with Code
	EventDenied  = "denied" // it did not run: Message says why
	EventError   = "error"  // it was allowed but could not be run or finished: Message
)

// Event is one line of the exec stream (NDJSON).
type Event struct {
	Event string `json:"event"`
	// ID, Console and Deadline describe a pending request.
	ID       string    `json:"id,omitempty"`
	Console  string    `json:"console,omitempty"`
	Deadline time.Time `json:"deadline,omitzero"`
	// Data is a chunk of output when it is valid UTF-8; otherwise B64
	// holds it base64-encoded (standard encoding), so no byte is lost.
	Data string `json:"data,omitempty"`
	B64  string `json:"b64,omitempty"`
	// Code is the exit status (exit).
	Code *int `json:"code,omitempty"`
	// Message is the denial or error message (denied, error): for a
	// human's denial it carries their reason.
	Message string `json:"message,omitempty"`
	// State says how a question ended for denied: "denied" (a human),
	// "expired", "withdrawn", or "" when the gate itself denied; Rule is
	// the deciding rule.
	State string `json:"state,omitempty"`
	Rule  string `json:"rule,omitempty"`
	// Decision is the outcome of /v1/external/decide (decision).
	Decision *Decision `json:"decision,omitempty"`
}

// VerifyResult is the body of GET /v1/audit/verify.
type VerifyResult struct {
	OK bool `json:"ok"`
	// Records is how many records verified before the first bad one
	// (all of them when OK).
	Records int `json:"records"`
	// BadSeq is the first record that does not verify (0 when OK), and
	// Error says what is wrong with it.
	BadSeq int64  `json:"bad_seq,omitempty"`
	Error  string `json:"error,omitempty"`
	// Missing is how many of the newest records are gone, by the audit
	// anchors kept outside the database (BadSeq is then 0); Gone and
	// Replaced say the database file itself was deleted or replaced.
	Missing  int64 `json:"missing,omitempty"`
	Gone     bool  `json:"gone,omitempty"`
	Replaced bool  `json:"replaced,omitempty"`
}

// Status is the host's health (GET /v1/status): whether the config on
// disk is the one in force, and whether the store accepts work.
type Status struct {
	Host   string       `json:"host"`
	Config ConfigStatus `json:"config"`
	Store  StoreStatus  `json:"store"`
}

// ConfigStatus is the config part of Status.
type ConfigStatus struct {
	// Path is the config file ("" when none is configured).
	Path string `json:"path,omitempty"`
	// Digest is the SHA-256 of the config in force; "" means the
	// defaults.
	Digest string `json:"digest,omitempty"`
	// Rejected is why the file on disk is not in force (it is missing,
	// empty, broken, or does not compile), since Since; "" when it is.
	Rejected string    `json:"rejected,omitempty"`
	Since    time.Time `json:"since,omitzero"`
}

// StoreStatus is the store part of Status.
type StoreStatus struct {
	// OK is false while the store refuses work; Fault says why (a full
	// disk, the database file deleted or replaced, audit records lost),
	// since Since.
	OK    bool      `json:"ok"`
	Fault string    `json:"fault,omitempty"`
	Since time.Time `json:"since,omitzero"`
	// AuditSeq is the newest audit record's sequence number.
	AuditSeq int64 `json:"audit_seq"`
}

// CronAddRequest is the body of POST /v1/cron: a script job. Give
// Schedule (a cron spec or descriptor) or Every (a duration, the same
// as Schedule "@every DURATION"), not both.
type CronAddRequest struct {
	Name     string `json:"name"`
	Schedule string `json:"schedule,omitempty"`
	Every    string `json:"every,omitempty"`
	// TZ is the IANA zone the schedule is read in; "" means UTC.
	TZ string `json:"tz,omitempty"`
	// Steps are shell command lines, run in order; the run fails at
	// the first that is denied or exits non-zero.
	Steps []string `json:"steps"`
	// Prompt, instead of Steps, makes a prompt job: the agent runs with
	// this prompt as the run's cron owner.
	Prompt string `json:"prompt,omitempty"`
	// Overlap is skip (default) or allow; CatchUp is once (default) or
	// skip.
	Overlap string `json:"overlap,omitempty"`
	CatchUp string `json:"catch_up,omitempty"`
}
