package hookrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/socket"
)

// The wire of POST /v1/external/decide (internal/localapi's
// ExternalRequest, Event and Decision), restated here because the
// localapi package carries the host's server and everything it links.
// TestWireMatchesLocalAPI keeps the two in step.

// SocketName is the admin socket's file name in the state directory
// (localapi.SocketName).
const SocketName = "warden.sock"

// Request is the body of POST /v1/external/decide.
type Request struct {
	Agent   string        `json:"agent"`
	Session string        `json:"session"`
	Action  action.Action `json:"action"`
}

// Event is one line of the decide stream.
type Event struct {
	Event    string    `json:"event"`
	ID       string    `json:"id,omitempty"`
	Console  string    `json:"console,omitempty"`
	Deadline time.Time `json:"deadline,omitzero"`
	Message  string    `json:"message,omitempty"`
	State    string    `json:"state,omitempty"`
	Rule     string    `json:"rule,omitempty"`
	Decision *Decision `json:"decision,omitempty"`
}

// Decision is how an external agent's action was decided (the last
// event of POST /v1/external/decide).
type Decision struct {
	// Allowed is the outcome: the action may run.
	Allowed bool `json:"allowed"`
	// Verdict is the gate's verdict before any human: allow, deny or
	// ask. For ask, Allowed is the human's answer, and State says how
	// the question ended.
	Verdict string `json:"verdict"`
	// Rule is the deciding rule ("human" when a human answered).
	Rule    string   `json:"rule"`
	Classes []string `json:"classes"`
	// Message tells a denied agent what was blocked and not to retry;
	// for a human's denial it carries their reason.
	Message string `json:"message,omitempty"`
	// Reason explains the gate's decision to a person.
	Reason string `json:"reason,omitempty"`
	// RequestID and State are the question's, when one was asked.
	RequestID string `json:"request_id,omitempty"`
	State     string `json:"state,omitempty"`
	// Session is the owner's session key.
	Session string `json:"session"`
}

// Events of the decide stream.
const (
	EventPending  = "pending"
	EventDecision = "decision"
	EventDenied   = "denied"
	EventError    = "error"
	EventExit     = "exit"
)

// ErrNotRunning: no host serves the socket (no socket file, or nothing
// listening on it).
var ErrNotRunning = socket.ErrNotRunning

// maxErrorBody bounds an error response read from the host.
const maxErrorBody = 1 << 20

// Client asks a host's gate over its admin socket.
type Client struct {
	socket string
	hc     *http.Client
}

// NewClient returns a client of the socket at path.
func NewClient(path string) *Client {
	return &Client{socket: path, hc: socket.HTTPClient(path)}
}

// Close releases the idle connection.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// Decide asks the host to decide req, waiting while a human answers
// (onPending, if set, hears where). Cancelling ctx withdraws the
// question.
func (c *Client) Decide(ctx context.Context, req Request, onPending func(Event)) (Decision, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return Decision{}, fmt.Errorf("decide %s action: %w", req.Action.Kind, err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+SocketName+"/v1/external/decide", bytes.NewReader(body))
	if err != nil {
		return Decision{}, fmt.Errorf("decide %s action: %w", req.Action.Kind, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(hr)
	if err != nil {
		if nr := socket.NotRunning(c.socket, err); nr != nil {
			return Decision{}, nr
		}
		return Decision{}, fmt.Errorf("decide %s action: %w", req.Action.Kind, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		var eb struct {
			Error string `json:"error"`
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		if json.Unmarshal(b, &eb) != nil || eb.Error == "" {
			eb.Error = resp.Status
		}
		return Decision{}, fmt.Errorf("decide %s action: %s", req.Action.Kind, eb.Error)
	}
	dec := json.NewDecoder(resp.Body)
	for {
		var e Event
		if err := dec.Decode(&e); err != nil {
			if ctx.Err() != nil {
				return Decision{}, context.Cause(ctx)
			}
			if errors.Is(err, io.EOF) {
				return Decision{}, fmt.Errorf("decide %s action: the host ended the stream without an outcome", req.Action.Kind)
			}
			return Decision{}, fmt.Errorf("decide %s action: read events: %w", req.Action.Kind, err)
		}
		switch e.Event {
		case EventPending:
			if onPending != nil {
				onPending(e)
			}
		case EventDecision:
			if e.Decision == nil {
				return Decision{}, fmt.Errorf("decide %s action: the host sent a decision event without a decision", req.Action.Kind)
			}
			return *e.Decision, nil
		case EventDenied, EventError, EventExit:
			// Not events of this endpoint: fail closed.
			return Decision{}, fmt.Errorf("decide %s action: the host answered %s: %s", req.Action.Kind, e.Event, e.Message)
		}
	}
}
