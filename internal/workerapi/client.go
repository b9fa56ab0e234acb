package workerapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/wardenhq/warden/internal/store"
)

// Client is the worker's side of the socket. Its calls are synchronous
// and serialised: one request at a time on one connection, which is the
// run's identity after Hello.
type Client struct {
	c  net.Conn
	sc *bufio.Scanner

	mu   sync.Mutex
	next uint64
}

// Dial connects to the worker socket.
func Dial(ctx context.Context, socket string) (*Client, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return nil, fmt.Errorf("connect to worker socket: %w", err)
	}
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 0, 64<<10), MaxMessage)
	return &Client{c: c, sc: sc}, nil
}

// Close closes the connection; the host cancels whatever it still runs
// for it.
func (c *Client) Close() error { return c.c.Close() }

// call sends req and reads events (to onEvent) until its response.
// Cancelling ctx closes the connection: the client is unusable after.
func (c *Client) call(ctx context.Context, req Request, onEvent func(Event)) (Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	req.ID = c.next
	stop := context.AfterFunc(ctx, func() { c.c.Close() })
	defer stop()
	b, err := json.Marshal(req)
	if err != nil {
		return Response{}, fmt.Errorf("worker api %s: %w", req.Verb, err)
	}
	if _, err := c.c.Write(append(b, '\n')); err != nil {
		return Response{}, c.fail(ctx, req.Verb, err)
	}
	for c.sc.Scan() {
		var w wire
		if err := json.Unmarshal(c.sc.Bytes(), &w); err != nil {
			return Response{}, fmt.Errorf("worker api %s: malformed message from the host: %w", req.Verb, err)
		}
		if w.ID != req.ID {
			return Response{}, fmt.Errorf("worker api %s: message for request %d, want %d", req.Verb, w.ID, req.ID)
		}
		if w.Event != "" {
			if onEvent != nil {
				onEvent(Event{ID: w.ID, Event: w.Event, Data: w.Data})
			}
			continue
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
	err = c.sc.Err()
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return Response{}, c.fail(ctx, req.Verb, err)
}

// fail prefers the context's cause to the I/O error it caused.
func (c *Client) fail(ctx context.Context, verb string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("worker api %s: %w", verb, context.Cause(ctx))
	}
	return fmt.Errorf("worker api %s: %w", verb, err)
}

// Hello presents the one-time token for task and returns the run it is
// bound to. A refused token is an *Error matching ErrRefused.
func (c *Client) Hello(ctx context.Context, token, task string) (Hello, error) {
	r, err := c.call(ctx, Request{Verb: VerbHello, Token: token, Task: task}, nil)
	if err != nil {
		return Hello{}, err
	}
	if r.Hello == nil {
		return Hello{}, errors.New("worker api hello: no hello in the response")
	}
	return *r.Hello, nil
}

// Shell asks the host to run command for the run; its output is copied
// to out (if not nil) as it comes. A command the gate did not allow is
// not an error: see ShellResult.Allowed.
func (c *Client) Shell(ctx context.Context, command string, out io.Writer) (ShellResult, error) {
	var werr error
	r, err := c.call(ctx, Request{Verb: VerbShell, Command: command}, func(e Event) {
		if out != nil && werr == nil && e.Event == "output" {
			_, werr = io.WriteString(out, e.Data)
		}
	})
	if err != nil {
		return ShellResult{}, err
	}
	if r.Shell == nil {
		return ShellResult{}, errors.New("worker api shell: no result in the response")
	}
	return *r.Shell, werr
}

// Agent asks the host to run the task's prompt through its agent as the
// run; the run ends with it (see the package doc).
func (c *Client) Agent(ctx context.Context) (AgentResult, error) {
	r, err := c.call(ctx, Request{Verb: VerbAgent}, nil)
	if err != nil {
		return AgentResult{}, err
	}
	if r.Agent == nil {
		return AgentResult{}, errors.New("worker api agent: no result in the response")
	}
	return *r.Agent, nil
}

// Comment adds a comment to the task, by the run.
func (c *Client) Comment(ctx context.Context, body string) error {
	_, err := c.call(ctx, Request{Verb: VerbComment, Body: body}, nil)
	return err
}

// Complete ends the run as succeeded and returns the task's status
// (done, or review).
func (c *Client) Complete(ctx context.Context) (store.TaskStatus, error) {
	r, err := c.call(ctx, Request{Verb: VerbComplete}, nil)
	return r.Status, err
}

// Block ends the run as blocked, with reason as a comment and as the
// task's last error.
func (c *Client) Block(ctx context.Context, reason string) (store.TaskStatus, error) {
	r, err := c.call(ctx, Request{Verb: VerbBlock, Reason: reason}, nil)
	return r.Status, err
}

// Fail ends the run as failed; the task is retried or, at the host's
// failure limit, blocked.
func (c *Client) Fail(ctx context.Context, reason string) (store.TaskStatus, error) {
	r, err := c.call(ctx, Request{Verb: VerbFail, Reason: reason}, nil)
	return r.Status, err
}

// CronRun asks the host to run cron job name now, as a child of the
// run; with wait it returns once the cron run ended, with its status.
func (c *Client) CronRun(ctx context.Context, name string, wait bool) (CronResult, error) {
	r, err := c.call(ctx, Request{Verb: VerbCronRun, Name: name, Wait: wait}, nil)
	if err != nil {
		return CronResult{}, err
	}
	if r.Cron == nil {
		return CronResult{}, errors.New("worker api cron_run: no result in the response")
	}
	return *r.Cron, nil
}
