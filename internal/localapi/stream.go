package localapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner"
)

// Streams. An exec or external request may wait hours for a human, and
// a host may hold thousands of them. Served by net/http, each would keep
// its connection's buffers (8 KiB), its response's (2 KiB), the handler
// goroutine with the stack the gate grew, and a second goroutine that
// reads the connection to notice a hang-up. So once a streaming
// request's body is read and checked, the handler takes the connection
// over (http.Hijacker), answers with a response that ends when the
// connection closes, and returns, freeing all of net/http's state; the
// work goes on in one goroutine of its own, which writes each event to
// the connection unbuffered. While it waits for a human it parks in a
// read of the connection (broker.Parker): the read ends when the client
// hangs up (the question is withdrawn), when the request's deadline
// passes (it expires: the read deadline is the timer), or when the
// broker interrupts it because the request ended. While it does other
// work (the gate, a running command) a small watcher goroutine reads the
// connection instead, so a hang-up still cancels the work.

// stream writes events to a streaming response, one JSON line each,
// as they happen. The command's stdout and stderr arrive from different
// goroutines.
type stream struct {
	mu  sync.Mutex
	err error
	// conn is the connection the stream took over; nil when it is
	// served through net/http (w, rc and enc).
	conn *connWaiter
	w    http.ResponseWriter
	rc   *http.ResponseController
	enc  *json.Encoder
}

// newStream starts a stream through net/http. The request's body has
// been read; a stream lives longer than the server's read and write
// timeouts allow an ordinary request (it waits for a human, then for a
// command), so it lifts them: no read deadline (an expired one would end
// the request's context and withdraw its question), and a write deadline
// per event, so a client that stopped reading is cut off instead of
// holding the connection.
func newStream(w http.ResponseWriter) *stream {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &stream{w: w, rc: rc, enc: enc}
}

// streamWriteTimeout bounds one event's write to a client that stopped
// reading.
const streamWriteTimeout = 30 * time.Second

// send writes one event. Once the client is gone, later events are
// dropped (the context has ended the work).
func (st *stream) send(e Event) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.err != nil {
		return
	}
	if st.conn != nil {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if st.err = enc.Encode(e); st.err == nil {
			_ = st.conn.conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
			_, st.err = st.conn.conn.Write(buf.Bytes())
		}
		return
	}
	_ = st.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	if st.err = st.enc.Encode(e); st.err == nil {
		st.err = st.rc.Flush()
	}
}

// serveStream runs work as owner o's streaming request. work does what
// comes before any wait for a human and returns the question it put (if
// any) and the rest (nil when it is done). Their context carries o and the request's values (the peer's
// identity) and ends when the client hangs up (cause gone: a pending
// question is then withdrawn, not denied) or the server's base context
// ends. When the connection can be taken over, work runs in the handler,
// whose goroutine net/http then lets go with its stack, and the rest in
// a new goroutine (Server.Wait waits for it), which waits for the human
// parked in a read of the connection under a few small frames;
// otherwise both run inside the handler. work must not keep r or w.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, o owner.Owner, gone error, work func(ctx context.Context, st *stream) (*runner.Pending, func())) {
	if st, ctx, done, ok := s.detach(w, r, o, gone); ok {
		p, rest := work(ctx, st)
		go func() {
			defer done()
			if p != nil {
				p.Await(ctx) // first, under this goroutine's first frames
			}
			st.conn.startWatch()
			if rest != nil {
				rest()
			}
		}()
		return
	}
	ctx, done := streamContext(r, o, gone)
	defer done()
	if _, rest := work(ctx, newStream(w)); rest != nil {
		rest()
	}
}

// Wait waits for the streams that left net/http (serveStream) to end.
// Cancel the server's base context first to end them.
func (s *Server) Wait() { s.streams.Wait() }

// streamHeader is the head of a taken-over stream's response: no length
// and no chunking, so the body ends when the host closes the connection.
const streamHeader = "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nConnection: close\r\n"

// detach takes the connection over from net/http and writes the
// response's head; ok is false when the connection cannot be taken over
// (a ResponseWriter that is not a connection's), and nothing was written.
func (s *Server) detach(w http.ResponseWriter, r *http.Request, o owner.Owner, gone error) (*stream, context.Context, func(), bool) {
	if s.base == nil {
		return nil, nil, nil, false
	}
	var head bytes.Buffer
	head.WriteString(streamHeader)
	_ = w.Header().WriteSubset(&head, map[string]bool{"Content-Type": true, "Connection": true, "Content-Length": true, "Transfer-Encoding": true})
	head.WriteString("\r\n")
	// Counted before the connection leaves net/http, whose Shutdown
	// stops waiting for it from then on (Server.Wait takes over).
	s.streams.Add(1)
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		s.streams.Done()
		return nil, nil, nil, false
	}
	_ = brw // its buffers go with net/http's connection state; the body was read
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	cw := &connWaiter{conn: conn, cancel: cancel, gone: gone}
	// The context ends only here and in cw (a hang-up), so a Park
	// returns when it ends (broker.Parker).
	stopBase := context.AfterFunc(s.base, func() { cancel(context.Cause(s.base)); cw.Interrupt() })
	st := &stream{conn: cw}
	_ = conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	if _, err := conn.Write(head.Bytes()); err != nil {
		st.err = err
		cancel(gone)
	}
	done := func() {
		cw.stopWatch()
		conn.Close()
		stopBase()
		cancel(nil)
		s.streams.Done()
	}
	return st, broker.WithParker(owner.With(ctx, o), cw), done, true
}

// longAgo is a read deadline in the past: it makes a read return at once.
var longAgo = time.Unix(1, 0)

// connWaiter reads a taken-over connection, which a client writes
// nothing more to, to notice its hang-up: either in a watcher goroutine
// (startWatch) or, while a question waits, in the asker's own goroutine
// (Park). One of them reads at a time.
type connWaiter struct {
	conn   net.Conn
	cancel context.CancelCauseFunc
	gone   error

	mu       sync.Mutex
	watching chan struct{} // closed when the watcher returns; nil when none runs
	stopping bool
}

// startWatch starts the watcher unless it runs.
func (c *connWaiter) startWatch() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watching != nil {
		return
	}
	done := make(chan struct{})
	c.watching, c.stopping = done, false
	_ = c.conn.SetReadDeadline(time.Time{})
	go func() {
		defer close(done)
		for {
			if !c.read() {
				return
			}
		}
	}()
}

// read reads once as the watcher and reports whether to go on.
func (c *connWaiter) read() bool {
	var b [64]byte
	_, err := c.conn.Read(b[:])
	if err == nil {
		return true // a client sends nothing after its request: ignored
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		c.cancel(c.gone) // the client hung up
		return false
	}
	// Only this file sets deadlines: stopWatch, or an Interrupt meant
	// for a Park that has not begun; the latter is no hang-up.
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopping {
		return false
	}
	_ = c.conn.SetReadDeadline(time.Time{})
	return true
}

// stopWatch stops the watcher and waits for it to return.
func (c *connWaiter) stopWatch() {
	c.mu.Lock()
	done := c.watching
	c.stopping = true
	if done != nil {
		_ = c.conn.SetReadDeadline(longAgo)
	}
	c.mu.Unlock()
	if done == nil {
		return
	}
	<-done
	c.mu.Lock()
	c.watching = nil
	c.mu.Unlock()
}

// Park implements broker.Parker: it reads the connection until the
// client hangs up (it then ends the work's context), deadline passes or
// Interrupt.
func (c *connWaiter) Park(deadline time.Time, ready func() bool) bool {
	c.stopWatch()
	var b [64]byte
	for {
		_ = c.conn.SetReadDeadline(deadline)
		if ready() {
			return false
		}
		_, err := c.conn.Read(b[:])
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded):
			if !deadline.IsZero() && !time.Now().Before(deadline) {
				return true
			}
			return false // interrupted
		default:
			c.cancel(c.gone)
			return false
		}
	}
}

// Interrupt implements broker.Parker.
func (c *connWaiter) Interrupt() { _ = c.conn.SetReadDeadline(longAgo) }

// Unpark implements broker.Parker: the watcher takes over again.
func (c *connWaiter) Unpark() { c.startWatch() }

var _ broker.Parker = (*connWaiter)(nil)
