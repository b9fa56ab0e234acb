package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/wardenhq/warden/internal/broker"
)

// heartbeat keeps idle event streams (and proxies in front of them)
// alive.
const heartbeat = 25 * time.Second

// streamWriteTimeout bounds one event's write to a client that stopped
// reading.
const streamWriteTimeout = 30 * time.Second

// event is one Server-Sent Event: a request created or ended (from the
// broker) or a composer run that changed.
type event struct {
	Type string
	Data any
}

// requestEvent is the data of created and ended events.
type requestEvent struct {
	ID      string `json:"id"`
	Session string `json:"session"`
	State   string `json:"state"`
	// Text says how it ended, for cards still on screen.
	Text string `json:"text,omitempty"`
}

// runEvent is the data of run events.
type runEvent struct {
	Session string `json:"session"`
	Run     int    `json:"run"`
	State   string `json:"state"`
}

// events streams request and run events until the client goes away or
// the console closes. The page re-fetches its live fragments on each
// one, so an event missed by a slow reader is repaired by the next.
//
// A stream is bounded: it ends with its credential's expiry or after
// Options.StreamLifetime, whichever comes first (the page's EventSource
// reconnects, authenticating afresh, so a revoked login loses its
// stream at the next reconnect at the latest), and one session or
// token holds at most Options.MaxStreams at once (429 beyond).
func (c *Console) events(w http.ResponseWriter, r *http.Request, a *authn) {
	runs := make(chan event, 16)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		http.Error(w, "console closed", http.StatusServiceUnavailable)
		return
	}
	if c.streams[a.cred.ID] >= c.o.MaxStreams {
		c.mu.Unlock()
		c.log.WarnContext(r.Context(), "refused event stream: too many open", "credential", a.cred.ID, "max", c.o.MaxStreams)
		w.Header().Set("Retry-After", "30")
		http.Error(w, fmt.Sprintf("too many event streams open for this login (at most %d); close a tab", c.o.MaxStreams), http.StatusTooManyRequests)
		return
	}
	c.streams[a.cred.ID]++
	c.subs[runs] = struct{}{}
	c.wg.Add(1)
	c.mu.Unlock()
	defer c.wg.Done()
	defer c.unsubscribe(runs)
	defer func() {
		c.mu.Lock()
		if c.streams[a.cred.ID]--; c.streams[a.cred.ID] <= 0 {
			delete(c.streams, a.cred.ID)
		}
		c.mu.Unlock()
	}()

	life := min(c.o.StreamLifetime, a.cred.Expires.Sub(c.o.Now()))
	ctx, cancel := context.WithTimeout(r.Context(), life)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	reqs := c.o.Host.Watch(ctx, "")

	// The stream outlives the server's read and write timeouts, which
	// are for ordinary requests: no read deadline (a request with no
	// body; a failing background read would end the stream), and a
	// write deadline per event, so a reader that stopped reading is cut
	// off rather than holding the connection.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, "retry: 3000\n: warden\n\n"); err != nil {
		return
	}
	if rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		var (
			e  event
			ok bool
		)
		select {
		case <-ctx.Done():
			return
		case be, open := <-reqs:
			if !open {
				return // the broker closed
			}
			e, ok = requestEventOf(be), true
		case re, open := <-runs:
			if !open {
				return // the console closed
			}
			e, ok = re, true
		case <-tick.C:
		}
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		var err error
		if ok {
			err = writeEvent(w, e)
		} else {
			_, err = fmt.Fprint(w, ": ping\n\n")
		}
		if err != nil || rc.Flush() != nil {
			return
		}
	}
}

func requestEventOf(be broker.Event) event {
	r := be.Request
	d := requestEvent{ID: r.ID, Session: r.Session, State: string(r.State)}
	if be.Type == broker.Ended {
		d.Text = endedText(r)
	}
	return event{Type: string(be.Type), Data: d}
}

// writeEvent writes one event; its data is one line of JSON.
func writeEvent(w http.ResponseWriter, e event) error {
	b, err := json.Marshal(e.Data)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	var buf bytes.Buffer
	buf.WriteString("event: ")
	buf.WriteString(e.Type)
	buf.WriteString("\ndata: ")
	buf.Write(b) // JSON has no raw newlines
	buf.WriteString("\n\n")
	_, err = w.Write(buf.Bytes())
	return err
}

// unsubscribe removes a run-event subscriber.
func (c *Console) unsubscribe(ch chan event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.subs[ch]; ok {
		delete(c.subs, ch)
		close(ch)
	}
}

// publishLocked sends a run event to every stream; a full stream misses
// it. c.mu must be held.
func (c *Console) publishLocked(e event) {
	for ch := range c.subs {
		select {
		case ch <- e:
		default:
		}
	}
}
