package workerapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/internal/store"
)

// Client is the worker's side of the protocol. Its calls are
// synchronous and serialised: one request at a time on one connection,
// which is the run's identity after Hello. Heartbeats (KeepLease) go
// beside the calls.
type Client struct {
	c net.Conn

	wmu  sync.Mutex // serialises writes
	mu   sync.Mutex // one call at a time
	next uint64

	// msgs carries the host's messages other than lease
	// acknowledgements; it is closed when the connection ends, after
	// rerr is set.
	msgs chan wire
	rerr error
	// acks carries each lease acknowledgement.
	acks chan struct{}
	done chan struct{}
	// trace, if set, hears every line the host sends (Trace).
	trace atomic.Pointer[io.Writer]
}

// Trace copies every line the host sends from now on to w (a worker's
// --trace, and tests that check what a worker is told). Writes to w
// happen on the connection's reader; w must not block for long.
func (c *Client) Trace(w io.Writer) { c.trace.Store(&w) }

// Dial connects to the worker socket.
func Dial(ctx context.Context, socket string) (*Client, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return nil, fmt.Errorf("connect to worker socket: %w", err)
	}
	return newClient(c), nil
}

func newClient(c net.Conn) *Client {
	cl := &Client{c: c, msgs: make(chan wire), acks: make(chan struct{}, 16), done: make(chan struct{})}
	go cl.read()
	return cl
}

// read delivers the host's messages until the connection ends.
func (c *Client) read() {
	defer close(c.msgs)
	sc := bufio.NewScanner(c.c)
	sc.Buffer(make([]byte, 0, 64<<10), MaxMessage)
	for sc.Scan() {
		if t := c.trace.Load(); t != nil {
			// A copy: appending to the scanner's buffer would overwrite
			// what it has read ahead.
			_, _ = (*t).Write(append(slices.Clone(sc.Bytes()), '\n'))
		}
		var w wire
		if err := json.Unmarshal(sc.Bytes(), &w); err != nil {
			c.rerr = fmt.Errorf("malformed message from the host: %w", err)
			return
		}
		if w.ID == 0 && w.Event == EventLease {
			select {
			case c.acks <- struct{}{}:
			default: // nobody keeps the lease; drop it
			}
			continue
		}
		select {
		case c.msgs <- w:
		case <-c.done:
			c.rerr = net.ErrClosed
			return
		}
	}
	c.rerr = sc.Err()
	if c.rerr == nil {
		c.rerr = io.ErrUnexpectedEOF
	}
}

// Close closes the connection; the host cancels what it still does for
// it (a question to a human is withdrawn).
func (c *Client) Close() error {
	c.wmu.Lock()
	select {
	case <-c.done:
	default:
		close(c.done)
	}
	c.wmu.Unlock()
	return c.c.Close()
}

func (c *Client) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.c.Write(append(b, '\n'))
	return err
}

// call sends req and waits for its response. Cancelling ctx closes the
// connection: the client is unusable after.
func (c *Client) call(ctx context.Context, req Request) (Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	req.ID = c.next
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if err := c.send(req); err != nil {
		return Response{}, c.fail(ctx, req.Verb, err)
	}
	for w := range c.msgs {
		if w.ID != req.ID {
			return Response{}, fmt.Errorf("worker api %s: message for request %d, want %d", req.Verb, w.ID, req.ID)
		}
		if w.Event != "" {
			continue // no event is defined for a request today
		}
		if !w.OK {
			code := w.Code
			if code == "" {
				code = CodeInternal
			}
			return w.Response, &Error{Code: code, Message: w.Error}
		}
		return w.Response, nil
	}
	return Response{}, c.fail(ctx, req.Verb, c.rerr)
}

// fail prefers the context's cause to the I/O error it caused.
func (c *Client) fail(ctx context.Context, verb string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("worker api %s: %w", verb, context.Cause(ctx))
	}
	return fmt.Errorf("worker api %s: %w", verb, err)
}

// KeepLease renews a remote run's lease of length lease (Hello's
// LeaseMillis) until ctx ends: it sends a heartbeat every sixth of it,
// and when no heartbeat sent in the last half of the lease has been
// acknowledged, or one cannot be sent, it calls lost with
// ErrLeaseLapsed and returns. The host fails the run a whole lease after
// the last message it received, so a worker that stops at half the
// lease (killing its step) never overlaps the retry. Counted from the
// hello sent at start.
func (c *Client) KeepLease(ctx context.Context, lease time.Duration, start time.Time, lost context.CancelCauseFunc) {
	if lease <= 0 {
		return
	}
	every := max(lease/6, time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	acked := start       // when the last acknowledged heartbeat was sent
	var sent []time.Time // heartbeats awaiting acknowledgement, in order
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.acks:
			if len(sent) > 0 {
				acked, sent = sent[0], sent[1:]
			}
			continue
		case <-t.C:
		}
		if time.Since(acked) >= lease/2 {
			lost(fmt.Errorf("%w: no acknowledgement from the host for %v", ErrLeaseLapsed, time.Since(acked).Round(time.Millisecond)))
			return
		}
		now := time.Now()
		if err := c.send(Request{Verb: VerbHeartbeat}); err != nil {
			lost(fmt.Errorf("%w: heartbeat: %w", ErrLeaseLapsed, err))
			return
		}
		sent = append(sent, now)
	}
}

// Hello presents the one-time token for task and returns the run it is
// bound to. A refused token is an *Error matching ErrRefused.
func (c *Client) Hello(ctx context.Context, token, task string) (Hello, error) {
	return c.HelloIn(ctx, token, task, "")
}

// HelloIn is Hello from a remote worker that runs the task's steps in
// workspace, an absolute directory on its machine.
func (c *Client) HelloIn(ctx context.Context, token, task, workspace string) (Hello, error) {
	r, err := c.call(ctx, Request{Verb: VerbHello, Token: token, Task: task, Workspace: workspace})
	if err != nil {
		return Hello{}, err
	}
	if r.Hello == nil {
		return Hello{}, errors.New("worker api hello: no hello in the response")
	}
	return *r.Hello, nil
}

// Decide asks the host's gate whether command may run in the run's
// workspace. It may wait as long as a human takes to answer. A command
// that was not allowed is not an error: see Decision.Allowed.
func (c *Client) Decide(ctx context.Context, command string) (Decision, error) {
	return c.decide(ctx, Request{Verb: VerbDecide, Command: command})
}

// DecideAction is Decide for any action a worker runs: a command, a
// code run, a file write. An allowed action is run exactly as the
// decision's Action says.
func (c *Client) DecideAction(ctx context.Context, a Act) (Decision, error) {
	return c.decide(ctx, Request{Verb: VerbDecide, Action: &a})
}

func (c *Client) decide(ctx context.Context, req Request) (Decision, error) {
	r, err := c.call(ctx, req)
	if err != nil {
		return Decision{}, err
	}
	if r.Decision == nil {
		return Decision{}, errors.New("worker api decide: no decision in the response")
	}
	return *r.Decision, nil
}

// Step reports how the allowed command ended: its exit code (-1 when
// it did not run to an exit) and its output (capped by the host as the
// run history keeps it). It returns the step's index.
func (c *Client) Step(ctx context.Context, command string, exitCode int, output string) (int, error) {
	r, err := c.call(ctx, Request{Verb: VerbStep, Command: command, ExitCode: exitCode, Output: output})
	return r.Step, err
}

// StepAction is Step for the action a decision allowed (its Action).
func (c *Client) StepAction(ctx context.Context, a Act, exitCode int, output string) (int, error) {
	r, err := c.call(ctx, Request{Verb: VerbStep, Action: &a, ExitCode: exitCode, Output: output})
	return r.Step, err
}

// Model asks the host for the model's next message in the run's
// conversation, with the results of the calls its last reply made
// (none on the first call).
func (c *Client) Model(ctx context.Context, results []ToolResult) (ModelReply, error) {
	r, err := c.call(ctx, Request{Verb: VerbModel, Results: results})
	if err != nil {
		return ModelReply{}, err
	}
	if r.Model == nil {
		return ModelReply{}, errors.New("worker api model: no reply in the response")
	}
	return *r.Model, nil
}

// Comment adds a comment to the task, by the run.
func (c *Client) Comment(ctx context.Context, body string) error {
	_, err := c.call(ctx, Request{Verb: VerbComment, Body: body})
	return err
}

// Complete ends the run as succeeded and returns the task's status
// (done, or review).
func (c *Client) Complete(ctx context.Context) (store.TaskStatus, error) {
	r, err := c.call(ctx, Request{Verb: VerbComplete})
	return r.Status, err
}

// Block ends the run as blocked, with reason as a comment and as the
// task's last error.
func (c *Client) Block(ctx context.Context, reason string) (store.TaskStatus, error) {
	r, err := c.call(ctx, Request{Verb: VerbBlock, Reason: reason})
	return r.Status, err
}

// Fail ends the run as failed; the task is retried or, at the host's
// failure limit, blocked.
func (c *Client) Fail(ctx context.Context, reason string) (store.TaskStatus, error) {
	r, err := c.call(ctx, Request{Verb: VerbFail, Reason: reason})
	return r.Status, err
}

// CronRun asks the host to run cron job name now, as a child of the
// run; with wait it returns once the cron run ended, with its status.
func (c *Client) CronRun(ctx context.Context, name string, wait bool) (CronResult, error) {
	r, err := c.call(ctx, Request{Verb: VerbCronRun, Name: name, Wait: wait})
	if err != nil {
		return CronResult{}, err
	}
	if r.Cron == nil {
		return CronResult{}, errors.New("worker api cron_run: no result in the response")
	}
	return *r.Cron, nil
}
