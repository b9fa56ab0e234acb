package mcpserve

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/internal/localapi"
)

// progress sends notifications/progress for one tools/call whose client
// gave a progress token: every ProgressInterval while the call waits
// for a human ("waiting for approval … 4m12s left", with the deadline
// as the total) and while it runs. A client that resets its request
// timeout on progress (as the MCP SDKs can) then waits as long as the
// human may take, instead of giving up after its default 60 s while
// the question is still open. A nil *progress does nothing.
type progress struct {
	ctx   context.Context
	ss    *mcp.ServerSession
	token any
	start time.Time
	log   func(err error)

	mu      sync.Mutex
	pending *localapi.Event // the open question, nil while running
	last    float64         // progress must increase with every notification
	closed  bool

	stop chan struct{}
	done chan struct{}
}

// startProgress starts reporting progress for req, or returns nil when
// the client gave no progress token, the session cannot be notified or
// progress is off.
func (h *handler) startProgress(ctx context.Context, req *mcp.CallToolRequest) *progress {
	if h.o.ProgressInterval < 0 || req == nil || req.Session == nil || req.Params == nil {
		return nil
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return nil
	}
	p := &progress{ctx: ctx, ss: req.Session, token: token, start: time.Now(),
		log:  func(err error) { h.log.DebugContext(ctx, "progress notification failed", "err", err) },
		stop: make(chan struct{}), done: make(chan struct{})}
	go p.loop(h.o.ProgressInterval)
	return p
}

func (p *progress) loop(every time.Duration) {
	defer close(p.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-p.ctx.Done():
			return
		case <-t.C:
			p.send()
		}
	}
}

// send sends one notification: seconds since the call began as the
// progress, and while a question is open, its deadline as the total
// and the time left in the message.
func (p *progress) send() {
	p.mu.Lock()
	now := time.Now()
	prog := now.Sub(p.start).Seconds()
	if prog <= p.last {
		prog = p.last + 0.001
	}
	p.last = prog
	params := &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: prog, Message: "running"}
	if e := p.pending; e != nil {
		where := "the warden console"
		if e.Console != "" {
			where = e.Console
		}
		params.Message = fmt.Sprintf("waiting for approval of request %s on %s", e.ID, where)
		if !e.Deadline.IsZero() {
			left := e.Deadline.Sub(now).Round(time.Second)
			params.Message += fmt.Sprintf("; %s left", max(left, 0))
			params.Total = max(e.Deadline.Sub(p.start).Seconds(), prog)
		}
	}
	p.mu.Unlock()
	if err := p.ss.NotifyProgress(p.ctx, params); err != nil {
		p.log(err)
	}
}

// waiting records the question the call waits on and reports it at
// once.
func (p *progress) waiting(e localapi.Event) {
	if p == nil {
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.pending = &e
	p.mu.Unlock()
	p.send()
}

// running records that the question (if any) was answered.
func (p *progress) running() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.pending = nil
	p.mu.Unlock()
}

// close stops the notifications; the call is ending.
func (p *progress) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	close(p.stop)
	<-p.done
}
