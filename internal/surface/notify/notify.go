// Package notify pushes pending requests to people who are not watching
// a surface: a generic webhook (the JSON body signed with HMAC-SHA256)
// and an ntfy-style push whose click opens the request in the console.
// A notification only says that something waits and where to answer
// it; it carries nothing that answers, and the request's payload is
// shown with credentials redacted.
//
// A request is pushed once, when it is still pending After its creation
// (so one answered at once in its own chat pushes nothing); deliveries
// that fail with a network error, 429 or 5xx are retried with backoff.
package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wardenhq/warden/internal/audit"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/form"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface"
)

// Defaults.
const (
	DefaultAfter    = 30 * time.Second
	DefaultAttempts = 5
	DefaultBackoff  = time.Second
	maxBackoff      = time.Minute
	maxPayload      = 500 // bytes of the action shown
	// SignatureHeader carries "sha256=" and the hex HMAC-SHA256 of the
	// body under the webhook's secret.
	SignatureHeader = "X-Warden-Signature"
)

// ErrPermanent: the endpoint refused the notification in a way retrying
// cannot change (a 4xx other than 429).
var ErrPermanent = errors.New("refused by the endpoint")

// Event is what a notification tells: a request waits.
type Event struct {
	Event    string    `json:"event"` // "request.pending"
	ID       string    `json:"id"`
	Session  string    `json:"session"`
	Owner    string    `json:"owner"`
	Kind     string    `json:"kind"`
	Action   string    `json:"action"`
	Classes  []string  `json:"classes,omitempty"`
	Question string    `json:"question,omitempty"` // an MCP server's, for elicitations
	Created  time.Time `json:"created_at"`
	Deadline time.Time `json:"deadline"`
	// URL opens the request in the console ("" if the host has none).
	URL string `json:"url,omitempty"`
	// Sent is when this notification was made: receivers refuse old
	// ones (a replayed body keeps its signature).
	Sent time.Time `json:"sent_at"`
}

// eventOf describes r for a notification.
func eventOf(r store.Request, link string, now time.Time) Event {
	e := Event{Event: "request.pending", ID: r.ID, Session: r.Session, Owner: r.OwnerText, Kind: string(r.Action.Kind),
		Action: form.Clip(audit.Redact(r.Action.Payload()), maxPayload), Classes: r.Classes,
		Created: r.Created.UTC(), Deadline: r.Deadline.UTC(), URL: link, Sent: now.UTC()}
	if r.Elicit != nil {
		e.Kind = "elicitation"
		e.Question = form.Clean(r.Elicit.Message, maxPayload, false)
		e.Action = form.Clean(r.Elicit.Server, 100, false)
	}
	return e
}

// Sink delivers one notification.
type Sink interface {
	// Name names the sink in logs.
	Name() string
	// Send delivers e once; ErrPermanent when retrying is useless.
	Send(ctx context.Context, e Event) error
}

// Webhook posts the event as JSON, signed.
type Webhook struct {
	URL    string
	Secret []byte
	HTTP   *http.Client
}

// Name implements Sink.
func (w Webhook) Name() string { return "webhook" }

// Sign returns the signature header's value for body under secret.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify checks a signature header's value for body under secret, in
// constant time.
func Verify(secret, body []byte, header string) bool {
	return hmac.Equal([]byte(Sign(secret, body)), []byte(header))
}

// Send implements Sink.
func (w Webhook) Send(ctx context.Context, e Event) error {
	body, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPermanent, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPermanent, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "warden")
	req.Header.Set("X-Warden-Event", e.Event)
	req.Header.Set(SignatureHeader, Sign(w.Secret, body))
	return do(w.HTTP, req)
}

// Ntfy publishes to an ntfy topic URL (https://ntfy.sh/TOPIC or a
// self-hosted server): the body is the text, the click opens the
// console.
type Ntfy struct {
	URL string
	// Token, if set, is sent as a bearer token (an ntfy access token).
	Token    string
	Priority string
	HTTP     *http.Client
}

// Name implements Sink.
func (n Ntfy) Name() string { return "ntfy" }

// Send implements Sink.
func (n Ntfy) Send(ctx context.Context, e Event) error {
	what := e.Kind + ": " + e.Action
	title := "warden: approval needed"
	if e.Kind == "elicitation" {
		title, what = "warden: an MCP server asks", e.Action+": "+e.Question
	}
	text := what + "\nsession " + e.Session + " · answer by " + e.Deadline.Format("15:04:05 UTC")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.URL, strings.NewReader(text))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPermanent, err)
	}
	req.Header.Set("Content-Type", "text/plain; charset=utf-8")
	req.Header.Set("Title", title)
	req.Header.Set("Tags", "warning")
	if n.Priority != "" {
		req.Header.Set("Priority", n.Priority)
	}
	if e.URL != "" {
		req.Header.Set("Click", e.URL)
		req.Header.Set("Actions", "view, Open in console, "+e.URL)
	}
	if n.Token != "" {
		req.Header.Set("Authorization", "Bearer "+n.Token)
	}
	return do(n.HTTP, req)
}

// do sends req; any 2xx is delivered.
func do(c *http.Client, req *http.Request) error {
	if c == nil {
		c = &http.Client{Timeout: 15 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return retryAfter{status: resp.StatusCode, after: parseRetryAfter(resp.Header.Get("Retry-After"))}
	}
	return fmt.Errorf("%w: HTTP %d", ErrPermanent, resp.StatusCode)
}

// retryAfter is a status worth retrying, with the wait the endpoint
// asked for.
type retryAfter struct {
	status int
	after  time.Duration
}

func (r retryAfter) Error() string { return "HTTP " + strconv.Itoa(r.status) }

func parseRetryAfter(s string) time.Duration {
	if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n > 0 {
		return min(time.Duration(n)*time.Second, maxBackoff)
	}
	return 0
}

// Options configure a Notifier.
type Options struct {
	Host  surface.Host
	Sinks []Sink
	// After is how long a request waits before it is pushed
	// (DefaultAfter if zero; negative pushes at once).
	After time.Duration
	// Attempts bounds deliveries of one notification to one sink;
	// Backoff is the first wait between them, doubling.
	Attempts int
	Backoff  time.Duration
	Logger   *slog.Logger
	Now      func() time.Time
}

// Notifier pushes pending requests to its sinks.
type Notifier struct {
	o   Options
	log *slog.Logger

	mu      sync.Mutex
	pending map[string]*time.Timer // request id → its push
	sent    map[string]bool
	wg      sync.WaitGroup
}

// New returns a Notifier.
func New(o Options) *Notifier {
	if o.After == 0 {
		o.After = DefaultAfter
	}
	if o.Attempts <= 0 {
		o.Attempts = DefaultAttempts
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Notifier{o: o, log: o.Logger.With("component", "notify"), pending: map[string]*time.Timer{}, sent: map[string]bool{}}
}

// Run watches the host's requests until ctx ends, then waits for the
// deliveries in flight.
func (n *Notifier) Run(ctx context.Context) {
	events := n.o.Host.Watch(ctx, "")
	// What was pending before the watch began is scheduled too; with
	// the watch first, no request falls between the two.
	if pending, err := n.o.Host.Pending(ctx, ""); err == nil {
		for _, r := range pending {
			n.schedule(ctx, r)
		}
	} else {
		n.log.WarnContext(ctx, "list pending", "err", err)
	}
	defer func() {
		n.mu.Lock()
		for id, t := range n.pending {
			if t.Stop() {
				n.wg.Done() // it will never run
			}
			delete(n.pending, id)
		}
		n.mu.Unlock()
		n.wg.Wait()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-events:
			if !ok {
				return
			}
			switch e.Type {
			case broker.Created:
				n.schedule(ctx, e.Request)
			case broker.Ended:
				n.mu.Lock()
				if t, ok := n.pending[e.Request.ID]; ok {
					if t.Stop() {
						n.wg.Done()
					}
					delete(n.pending, e.Request.ID)
				}
				n.mu.Unlock()
			}
		}
	}
}

// schedule pushes r After its creation, if it is still pending then.
func (n *Notifier) schedule(ctx context.Context, r store.Request) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.sent[r.ID] || n.pending[r.ID] != nil {
		return
	}
	wait := max(r.Created.Add(n.o.After).Sub(n.o.Now()), 0)
	n.wg.Add(1)
	n.pending[r.ID] = time.AfterFunc(wait, func() {
		defer n.wg.Done()
		n.fire(ctx, r.ID)
	})
}

// fire sends the request's notification to every sink, if it is still
// pending.
func (n *Notifier) fire(ctx context.Context, id string) {
	n.mu.Lock()
	_, ok := n.pending[id]
	delete(n.pending, id)
	if !ok || n.sent[id] || ctx.Err() != nil {
		n.mu.Unlock()
		return
	}
	n.sent[id] = true
	if len(n.sent) > 100000 {
		clear(n.sent)
	}
	n.mu.Unlock()
	r, err := n.o.Host.Request(ctx, id)
	if err != nil || r.State != store.Pending {
		return
	}
	e := eventOf(r, n.o.Host.Link(id), n.o.Now())
	var wg sync.WaitGroup
	for _, s := range n.o.Sinks {
		wg.Go(func() {
			if err := n.deliver(ctx, s, e); err != nil {
				n.log.WarnContext(ctx, "notification not delivered", "sink", s.Name(), "request", id, "err", err)
			}
		})
	}
	wg.Wait()
}

// deliver sends e to s, retrying with backoff.
func (n *Notifier) deliver(ctx context.Context, s Sink, e Event) error {
	wait := n.o.Backoff
	var err error
	for attempt := 1; attempt <= n.o.Attempts; attempt++ {
		if err = s.Send(ctx, e); err == nil || errors.Is(err, ErrPermanent) {
			return err
		}
		if attempt == n.o.Attempts {
			break
		}
		d := wait
		if ra := (retryAfter{}); errors.As(err, &ra) && ra.after > 0 {
			d = ra.after
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(wait*2, maxBackoff)
	}
	return fmt.Errorf("after %d attempts: %w", n.o.Attempts, err)
}
