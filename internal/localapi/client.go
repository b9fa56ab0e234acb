package localapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/wardenhq/warden/internal/board"
	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/socket"
	"github.com/wardenhq/warden/internal/store"
)

// ErrNotRunning: no host is serving on the socket.
var ErrNotRunning = socket.ErrNotRunning

// NotRunningError says which socket nobody answered on (see
// socket.NotRunningError).
type NotRunningError = socket.NotRunningError

// APIError is an error response of the admin API.
type APIError struct {
	Status int
	ErrorBody
}

func (e *APIError) Error() string { return e.ErrorBody.Error }

// Is makes errors.Is(err, store.ErrNotPending) true for a late answer
// (409 with the state the request had ended in) and store.ErrNotFound
// for a 404.
func (e *APIError) Is(target error) bool {
	switch target {
	case store.ErrNotPending:
		return e.Status == http.StatusConflict && e.State != ""
	case store.ErrNotFound:
		return e.Status == http.StatusNotFound
	}
	return false
}

// Client talks to a host's admin API over its unix socket.
type Client struct {
	socket string
	hc     *http.Client
}

// NewClient returns a client for the socket at path.
func NewClient(path string) *Client {
	return &Client{socket: path, hc: socket.HTTPClient(path)}
}

// Socket returns the socket path.
func (c *Client) Socket() string { return c.socket }

// Close releases idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// do sends a request and returns the response when its status is 2xx;
// otherwise it decodes the error body into an *APIError.
func (c *Client) do(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+Host+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if nr := socket.NotRunning(c.socket, err); nr != nil {
			return nil, nr
		}
		return nil, err
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	apiErr := &APIError{Status: resp.StatusCode}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if json.Unmarshal(b, &apiErr.ErrorBody) != nil || apiErr.ErrorBody.Error == "" {
		apiErr.ErrorBody.Error = fmt.Sprintf("%s %s: %s", method, path, resp.Status)
	}
	return nil, apiErr
}

// call sends a request and decodes a JSON reply into out (nil: none).
func (c *Client) call(ctx context.Context, method, path string, body, out any) error {
	resp, err := c.do(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode reply: %w", method, path, err)
	}
	return nil
}

// fetch calls method path with body (nil: none) and returns the
// decoded reply; what says which call failed in an error.
func fetch[T any](ctx context.Context, c *Client, method, path string, body any, what string) (T, error) {
	var out T
	if err := c.call(ctx, method, path, body, &out); err != nil {
		var zero T
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// send calls method path, with no body and no reply; what says which
// call failed in an error.
func (c *Client) send(ctx context.Context, method, path, what string) error {
	if err := c.call(ctx, method, path, nil, nil); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// Approvals lists the pending requests of every session, oldest first.
func (c *Client) Approvals(ctx context.Context) ([]Approval, error) {
	return fetch[[]Approval](ctx, c, http.MethodGet, "/v1/approvals", nil, "list approvals")
}

// Approve answers request id. A request that had already ended gives an
// *APIError matching store.ErrNotPending whose message says how.
func (c *Client) Approve(ctx context.Context, id string, a ApproveRequest) (Result, error) {
	return fetch[Result](ctx, c, http.MethodPost, "/v1/approvals/"+url.PathEscape(id)+"/approve", a, "approve "+id)
}

// Deny refuses request id, with an optional reason for the agent.
func (c *Client) Deny(ctx context.Context, id string, d DenyRequest) (Result, error) {
	return fetch[Result](ctx, c, http.MethodPost, "/v1/approvals/"+url.PathEscape(id)+"/deny", d, "deny "+id)
}

// Grants lists every recorded grant (session and always), oldest first.
func (c *Client) Grants(ctx context.Context) ([]grant.Grant, error) {
	return fetch[[]grant.Grant](ctx, c, http.MethodGet, "/v1/grants", nil, "list grants")
}

// Revoke deletes grant id.
func (c *Client) Revoke(ctx context.Context, id string) error {
	return c.send(ctx, http.MethodDelete, "/v1/grants/"+url.PathEscape(id), "revoke grant "+id)
}

// Sessions lists every session the host has seen (live and ended),
// oldest first.
func (c *Client) Sessions(ctx context.Context) ([]store.SessionRow, error) {
	return fetch[[]store.SessionRow](ctx, c, http.MethodGet, "/v1/sessions", nil, "list sessions")
}

// ResetSession drops session key's terminal shell state.
func (c *Client) ResetSession(ctx context.Context, key string) error {
	return c.send(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(key)+"/reset", "reset session "+key)
}

// AuditQuery selects audit records; zero fields match everything.
type AuditQuery struct {
	Session string
	Since   time.Time
	Verdict string
	Limit   int
}

// Audit lists audit records, oldest first.
func (c *Client) Audit(ctx context.Context, q AuditQuery) ([]store.Decision, error) {
	v := url.Values{}
	if q.Session != "" {
		v.Set("session", q.Session)
	}
	if !q.Since.IsZero() {
		v.Set("since", q.Since.UTC().Format(time.RFC3339Nano))
	}
	if q.Verdict != "" {
		v.Set("verdict", q.Verdict)
	}
	if q.Limit > 0 {
		v.Set("limit", fmt.Sprint(q.Limit))
	}
	path := "/v1/audit"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	return fetch[[]store.Decision](ctx, c, http.MethodGet, path, nil, "list audit records")
}

// Verify checks the audit hash chain.
func (c *Client) Verify(ctx context.Context) (VerifyResult, error) {
	return fetch[VerifyResult](ctx, c, http.MethodGet, "/v1/audit/verify", nil, "verify audit chain")
}

// Status reads the host's health.
func (c *Client) Status(ctx context.Context) (Status, error) {
	return fetch[Status](ctx, c, http.MethodGet, "/v1/status", nil, "host status")
}

// Exec runs a command as a web session and calls on for each event until
// the stream ends (after an exit, denied or error event). Cancelling ctx
// hangs up, which withdraws a pending question and kills a running
// command. An error from on stops the stream and is returned.
func (c *Client) Exec(ctx context.Context, req ExecRequest, on func(Event) error) error {
	if err := c.events(ctx, "/v1/exec", req, on); err != nil {
		if ce, ok := errors.AsType[callbackError](err); ok {
			return ce.err
		}
		return fmt.Errorf("exec: %w", err)
	}
	return nil
}

// Run decides an external agent's action as external:AGENT/SESSION and,
// if allowed, runs it in the host (shell, code or write), calling on for
// each event as Exec does: pending, stdout, stderr, then exit, denied or
// error. Cancelling ctx withdraws a pending question and kills a running
// command.
func (c *Client) Run(ctx context.Context, req ExternalRequest, on func(Event) error) error {
	if err := c.events(ctx, "/v1/external/run", req, on); err != nil {
		if ce, ok := errors.AsType[callbackError](err); ok {
			return ce.err
		}
		return fmt.Errorf("run %s action: %w", req.Action.Kind, err)
	}
	return nil
}

// Decide decides an external agent's action as external:AGENT/SESSION
// without running it, waiting for a human when the gate asks (onPending,
// if set, hears where to answer). Cancelling ctx withdraws the question.
func (c *Client) Decide(ctx context.Context, req ExternalRequest, onPending func(Event)) (Decision, error) {
	var d *Decision
	err := c.events(ctx, "/v1/external/decide", req, func(e Event) error {
		switch e.Event {
		case EventPending:
			if onPending != nil {
				onPending(e)
			}
		case EventDecision:
			d = e.Decision
		}
		return nil
	})
	switch {
	case err != nil:
		return Decision{}, fmt.Errorf("decide %s action: %w", req.Action.Kind, err)
	case d == nil:
		return Decision{}, fmt.Errorf("decide %s action: the host sent a decision event without a decision", req.Action.Kind)
	}
	return *d, nil
}

// callbackError carries an error of the caller's event callback through
// events, so it is returned to the caller as it was, unwrapped.
type callbackError struct{ err error }

func (e callbackError) Error() string { return e.err.Error() }
func (e callbackError) Unwrap() error { return e.err }

// events posts body to an NDJSON endpoint and calls on for each event
// until a final one (exit, denied, error, decision). An error from on is
// returned as a callbackError.
func (c *Client) events(ctx context.Context, path string, body any, on func(Event) error) error {
	resp, err := c.do(ctx, http.MethodPost, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var e Event
		if err := dec.Decode(&e); err != nil {
			if errors.Is(err, io.EOF) {
				return errors.New("the host ended the stream without an outcome")
			}
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return fmt.Errorf("read events: %w", err)
		}
		if err := on(e); err != nil {
			return callbackError{err}
		}
		switch e.Event {
		case EventExit, EventDenied, EventError, EventDecision:
			return nil
		}
	}
}

// Bytes returns an output event's data, decoding B64 when set.
func (e Event) Bytes() ([]byte, error) {
	if e.B64 != "" {
		return base64.StdEncoding.DecodeString(e.B64)
	}
	return []byte(e.Data), nil
}

// CronJobs lists the cron jobs by name.
func (c *Client) CronJobs(ctx context.Context) ([]store.CronJob, error) {
	return fetch[[]store.CronJob](ctx, c, http.MethodGet, "/v1/cron", nil, "list cron jobs")
}

// AddCronJob adds a job and returns it as stored (with its next run). A
// request the host refuses as malformed (a bad name or schedule) is an
// *APIError with status 400; a taken name, 409.
func (c *Client) AddCronJob(ctx context.Context, req CronAddRequest) (store.CronJob, error) {
	return fetch[store.CronJob](ctx, c, http.MethodPost, "/v1/cron", req, "add cron job "+req.Name)
}

// DeleteCronJob removes a job and its history. An unknown job is an
// *APIError matching store.ErrNotFound.
func (c *Client) DeleteCronJob(ctx context.Context, name string) error {
	return c.send(ctx, http.MethodDelete, "/v1/cron/"+url.PathEscape(name), "remove cron job "+name)
}

// RunCronJob starts a run of the job now and returns it as it started:
// running, or skipped (a run is in progress and the job's overlap is
// skip).
func (c *Client) RunCronJob(ctx context.Context, name string) (store.CronRun, error) {
	return fetch[store.CronRun](ctx, c, http.MethodPost, "/v1/cron/"+url.PathEscape(name)+"/run", nil, "run cron job "+name)
}

// CronRun returns a run with its steps; with wait it blocks until the
// run has ended (or ctx ends).
func (c *Client) CronRun(ctx context.Context, id string, wait bool) (store.CronRun, error) {
	path := "/v1/cron/runs/" + url.PathEscape(id)
	if wait {
		path += "?wait=1"
	}
	return fetch[store.CronRun](ctx, c, http.MethodGet, path, nil, "get cron run "+id)
}

// CronHistory lists a job's runs with their steps, newest first, at
// most limit (0: all).
func (c *Client) CronHistory(ctx context.Context, name string, limit int) ([]store.CronRun, error) {
	path := "/v1/cron/" + url.PathEscape(name) + "/history"
	if limit > 0 {
		path += "?limit=" + strconv.Itoa(limit)
	}
	return fetch[[]store.CronRun](ctx, c, http.MethodGet, path, nil, "cron history of "+name)
}

// KanbanTasks lists the board's tasks in creation order.
func (c *Client) KanbanTasks(ctx context.Context) ([]store.Task, error) {
	return fetch[[]store.Task](ctx, c, http.MethodGet, "/v1/kanban", nil, "list tasks")
}

// AddKanbanTask adds a task and returns it as stored. A malformed
// request is an *APIError with status 400.
func (c *Client) AddKanbanTask(ctx context.Context, req KanbanAddRequest) (store.Task, error) {
	return fetch[store.Task](ctx, c, http.MethodPost, "/v1/kanban", req, "add task")
}

// KanbanTask returns a task's card: the task, its runs (newest first,
// with their steps) and its comments. An unknown task is an *APIError
// matching store.ErrNotFound.
func (c *Client) KanbanTask(ctx context.Context, id string) (board.Card, error) {
	return fetch[board.Card](ctx, c, http.MethodGet, "/v1/kanban/"+url.PathEscape(id), nil, "show task "+id)
}

// CommentKanbanTask adds an operator's comment to a task.
func (c *Client) CommentKanbanTask(ctx context.Context, id, body string) (store.TaskComment, error) {
	return fetch[store.TaskComment](ctx, c, http.MethodPost, "/v1/kanban/"+url.PathEscape(id)+"/comments", KanbanCommentRequest{Body: body}, "comment on task "+id)
}

// IssueKanbanTask issues a ready task to a remote worker: ttl is how
// long its token waits for the worker (zero: the host's default).
func (c *Client) IssueKanbanTask(ctx context.Context, id string, ttl time.Duration) (KanbanRemote, error) {
	return fetch[KanbanRemote](ctx, c, http.MethodPost, "/v1/kanban/"+url.PathEscape(id)+"/remote", KanbanRemoteRequest{TTLSeconds: int64(ttl / time.Second)}, "issue task "+id)
}

// MoveKanbanTask applies an operator's verb (block, unblock, done,
// rerun) to a task and returns it as it is now. A move its status does
// not allow is an *APIError with status 409.
func (c *Client) MoveKanbanTask(ctx context.Context, id string, verb board.Verb, reason string) (store.Task, error) {
	return fetch[store.Task](ctx, c, http.MethodPost, "/v1/kanban/"+url.PathEscape(id)+"/"+url.PathEscape(string(verb)), KanbanMoveRequest{Reason: reason}, string(verb)+" task "+id)
}
