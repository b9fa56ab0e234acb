// Package store declares what warden keeps durably — pending and past
// requests, the audit log of decisions, grants and sessions — as narrow
// interfaces with one row type each. internal/store/sqlite implements
// them on embedded SQLite; a PostgreSQL implementation can follow and
// must pass the same suite (internal/store/storetest).
package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/grant"
)

// Sentinel errors callers branch on.
var (
	// ErrNotFound: no row with that id.
	ErrNotFound = errors.New("not found")
	// ErrNotPending: the request already ended (answered, denied,
	// expired or withdrawn); a late answer must say so, never "approved".
	ErrNotPending = errors.New("nothing pending")
	// ErrChainBroken: the audit hash chain does not verify.
	ErrChainBroken = errors.New("audit chain broken")
)

// State is where a request is in its lifecycle. Pending is the only
// state that changes, and only by compare-and-swap.
type State string

// Request states.
const (
	Pending   State = "pending"
	Answered  State = "answered"  // a human approved (once, session or always)
	Denied    State = "denied"    // a human refused, with an optional reason
	Expired   State = "expired"   // nobody answered before the deadline
	Withdrawn State = "withdrawn" // the asker went away: session ended, host stopped or restarted
)

// Scope is how far a human's approval reaches.
type Scope string

// Approval scopes.
const (
	Once    Scope = "once"
	Session Scope = "session"
	Always  Scope = "always"
)

// Request is a question to a human about one action.
type Request struct {
	ID      string `json:"id"`
	Session string `json:"session"`
	// Owner is the owner's JSON (all fields, lineage); OwnerText its
	// notation.
	Owner     json.RawMessage `json:"owner"`
	OwnerText string          `json:"owner_text"`
	Action    action.Action   `json:"action"`
	// Digest identifies the exact action (action.Digest): identical
	// concurrent requests of one session coalesce on it.
	Digest  string   `json:"digest"`
	Classes []string `json:"classes"`
	// Analysis is the shell analysis JSON when the action has one; the
	// console highlights findings from it.
	Analysis json.RawMessage `json:"analysis,omitempty"`
	Rule     string          `json:"rule"`
	Created  time.Time       `json:"created_at"`
	Deadline time.Time       `json:"deadline"`
	// Host is the id of the host process whose waiter holds the request;
	// a restarted host withdraws its predecessors' requests.
	Host string `json:"host"`

	State State `json:"state"`
	// Resolution fields, set when State leaves Pending.
	Scope    Scope       `json:"scope,omitempty"`
	Grain    grant.Grain `json:"grain,omitempty"`
	By       string      `json:"by,omitempty"`
	Surface  string      `json:"surface,omitempty"`
	Reason   string      `json:"reason,omitempty"`
	Resolved time.Time   `json:"resolved_at,omitzero"`

	// Notice is what warden tells the human with the question (the
	// security reviewer failed and the session is in manual mode).
	Notice string `json:"notice,omitempty"`

	// Elicit is set when the question is an MCP server's elicitation
	// rather than an approval: an answer accepts (with Content, the
	// form's values) or declines it, and never grants anything.
	Elicit *Elicitation `json:"elicit,omitempty"`
	// Content is the accepted elicitation's values (a JSON object).
	Content json.RawMessage `json:"content,omitempty"`
}

// Elicitation is an MCP server's question to a human.
type Elicitation struct {
	// Server is the MCP server that asks.
	Server string `json:"server"`
	// Message is the server's question, shown as untrusted text.
	Message string `json:"message"`
	// Schema is the requested form: a flat JSON object schema.
	Schema json.RawMessage `json:"schema,omitempty"`
	// URL is set for URL-mode elicitations: the human opens it.
	URL string `json:"url,omitempty"`
}

// Resolution is how a pending request ends.
type Resolution struct {
	State   State
	Scope   Scope
	Grain   grant.Grain
	By      string
	Surface string
	// Reason is the human's reason for a denial, or the cause of a
	// withdrawal.
	Reason string
	At     time.Time
	// Content is an accepted elicitation's values.
	Content json.RawMessage
}

// Requests keeps questions to humans.
type Requests interface {
	CreateRequest(ctx context.Context, r Request) error
	GetRequest(ctx context.Context, id string) (Request, error)
	// ResolveRequest ends a request iff it is still pending (one atomic
	// compare-and-swap) and returns it as ended. A request that already
	// ended returns ErrNotPending together with its current row. A human
	// answer (Answered, Denied) at or after the deadline is refused the
	// same way, even while the row still says pending.
	ResolveRequest(ctx context.Context, id string, res Resolution) (Request, error)
	// PendingRequests lists pending requests, oldest first; session ""
	// means all sessions.
	PendingRequests(ctx context.Context, session string) ([]Request, error)
	// WithdrawHostRequests withdraws every pending request held by a
	// host other than keep (a restarted host's predecessors), returning
	// how many.
	WithdrawHostRequests(ctx context.Context, keep string, res Resolution) (int, error)
}

// Grants keeps approvals beyond one action.
type Grants interface {
	AddGrant(ctx context.Context, g grant.Grant) error
	RevokeGrant(ctx context.Context, id string) error
	ListGrants(ctx context.Context) ([]grant.Grant, error)
	// Grants returns the permanent grants and those of session (the
	// gate's grant source). Expired grants may be included; the matcher
	// skips them.
	Grants(ctx context.Context, session string) ([]grant.Grant, error)
}

// SessionRow is one known session.
type SessionRow struct {
	Key       string          `json:"key"`
	Owner     json.RawMessage `json:"owner"`
	OwnerText string          `json:"owner_text"`
	Yolo      bool            `json:"yolo"`
	Created   time.Time       `json:"created_at"`
	Ended     time.Time       `json:"ended_at,omitzero"`
}

// Sessions keeps sessions and their switches.
type Sessions interface {
	// UpsertSession creates a session or leaves an existing one as is.
	UpsertSession(ctx context.Context, s SessionRow) error
	GetSession(ctx context.Context, key string) (SessionRow, error)
	ListSessions(ctx context.Context) ([]SessionRow, error)
	EndSession(ctx context.Context, key string, at time.Time) error
	SetYolo(ctx context.Context, key string, on bool) error
	// SessionYolo is the gate's session-yolo source; an unknown session
	// has none.
	SessionYolo(ctx context.Context, key string) (bool, error)
}

// Decision is one audit record: everything about a decision, written
// before the action runs (invariant 8). Seq, Prev and Hash are assigned
// by AppendDecision: Hash = SHA-256 over Prev and the record's canonical
// JSON without Hash, so editing or removing a row breaks the chain.
type Decision struct {
	Seq       int64           `json:"seq"`
	Time      time.Time       `json:"time"`
	Session   string          `json:"session"`
	Owner     json.RawMessage `json:"owner"`
	OwnerText string          `json:"owner_text"`
	Kind      action.Kind     `json:"kind"`
	// Payload is the action for display, secrets redacted; PayloadHash
	// is the SHA-256 of the exact payload.
	Payload     string   `json:"payload"`
	PayloadHash string   `json:"payload_hash"`
	Classes     []string `json:"classes"`
	Verdict     string   `json:"verdict"`
	Rule        string   `json:"rule"`
	RequestID   string   `json:"request_id,omitempty"`
	By          string   `json:"by,omitempty"`
	Surface     string   `json:"surface,omitempty"`
	Reason      string   `json:"reason,omitempty"`
	// Sandbox is the sandbox mode commands ran under when the record
	// was written ("off" when processes ran unconfined); "" for records
	// written before it was kept, or for decisions that start nothing.
	Sandbox string `json:"sandbox,omitempty"`
	Prev    string `json:"prev"`
	Hash    string `json:"hash"`
}

// AuditFilter selects audit records; zero fields match everything.
type AuditFilter struct {
	Session string
	Since   time.Time
	Verdict string
	Limit   int
}

// Audit is the append-only, hash-chained decision log.
type Audit interface {
	// AppendDecision assigns Seq, Prev and Hash, writes the record
	// durably and returns it.
	AppendDecision(ctx context.Context, d Decision) (Decision, error)
	// Decisions lists records oldest first.
	Decisions(ctx context.Context, f AuditFilter) ([]Decision, error)
	// VerifyChain recomputes every hash; it returns how many records it
	// checked and ErrChainBroken (wrapped, naming the first bad seq) on
	// a mismatch.
	VerifyChain(ctx context.Context) (int, error)
}

// Store is everything the host keeps.
type Store interface {
	Requests
	Grants
	Sessions
	Audit
	Close() error
}

// Conversations keeps the agents' conversations, one ordered list of
// messages per conversation id. A message is a JSON object the store
// keeps as it is given: the store knows rows, not model types (the
// agent encodes its llm.Message).
type Conversations interface {
	// AppendMessages adds msgs at the end of conversation, in order.
	AppendMessages(ctx context.Context, conversation string, msgs ...json.RawMessage) error
	// Messages returns the last limit messages of conversation in order
	// (all of them if limit <= 0).
	Messages(ctx context.Context, conversation string, limit int) ([]json.RawMessage, error)
}

// ChainHash is the hash of an audit record: SHA-256 over the previous
// record's hash and the record's JSON with Hash empty. Every store
// implementation chains with it, so `warden audit verify` means the same
// on each.
func ChainHash(d Decision) string {
	// One canonical form whatever the caller passed: UTC time (JSON
	// carries the zone), an absent owner as null, an invalid one as a
	// JSON string of its bytes.
	d.Hash = ""
	d.Time = d.Time.UTC()
	if len(d.Owner) == 0 {
		d.Owner = nil
	} else if !json.Valid(d.Owner) {
		q, _ := json.Marshal(string(d.Owner))
		d.Owner = q
	}
	b, err := json.Marshal(d)
	if err != nil {
		// Decision holds only marshalable fields; a failure here is a
		// programming error and must not yield a verifiable hash.
		panic("store: marshal audit record: " + err.Error())
	}
	h := sha256.New()
	h.Write([]byte(d.Prev))
	h.Write([]byte{0})
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}
