package notify_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface"
	"github.com/wardenhq/warden/internal/surface/notify"
	"github.com/wardenhq/warden/internal/surface/surfacetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// endpoint records what it receives; it fails the first fail requests
// with status.
type endpoint struct {
	mu     sync.Mutex
	bodies [][]byte
	heads  []http.Header
	fail   int
	status int
	srv    *httptest.Server
}

func newEndpoint(t *testing.T, fail, status int) *endpoint {
	e := &endpoint{fail: fail, status: status}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		defer e.mu.Unlock()
		e.bodies = append(e.bodies, b)
		e.heads = append(e.heads, r.Header.Clone())
		if len(e.bodies) <= e.fail {
			w.WriteHeader(e.status)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *endpoint) got() ([][]byte, []http.Header) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([][]byte(nil), e.bodies...), append([]http.Header(nil), e.heads...)
}

func event() notify.Event {
	return notify.Event{Event: "request.pending", ID: "01J0000000000000000000000A", Session: "s", Kind: "shell", Action: "rm -rf x",
		Deadline: time.Unix(1700000000, 0).UTC(), URL: "http://127.0.0.1:7878/pending#req-01J0000000000000000000000A"}
}

// TestWebhookSignedAndRetried: the body is signed with HMAC-SHA256 and
// a 503 is retried; a 400 is not.
func TestWebhookSignedAndRetried(t *testing.T) {
	ep := newEndpoint(t, 2, http.StatusServiceUnavailable)
	secret := []byte("s3cret")
	h := surfacetest.New(t, surfacetest.Options{})
	n := notify.New(notify.Options{Host: h, Sinks: []notify.Sink{notify.Webhook{URL: ep.srv.URL, Secret: secret}}, Backoff: time.Millisecond, After: -1})
	if err := deliver(n, notify.Webhook{URL: ep.srv.URL, Secret: secret}); err != nil {
		t.Fatal(err)
	}
	bodies, heads := ep.got()
	if len(bodies) != 3 {
		t.Fatalf("%d attempts, want 3", len(bodies))
	}
	for i, b := range bodies {
		sig := heads[i].Get(notify.SignatureHeader)
		if !notify.Verify(secret, b, sig) || notify.Verify([]byte("other"), b, sig) {
			t.Fatalf("attempt %d: signature %q does not verify", i, sig)
		}
	}
	var e notify.Event
	if err := json.Unmarshal(bodies[2], &e); err != nil || e.ID != event().ID || e.URL == "" {
		t.Fatalf("body %s: %v", bodies[2], err)
	}

	bad := newEndpoint(t, 10, http.StatusBadRequest)
	if err := deliver(n, notify.Webhook{URL: bad.srv.URL, Secret: secret}); err == nil {
		t.Fatal("a 400 was taken as delivered")
	}
	if b, _ := bad.got(); len(b) != 1 {
		t.Fatalf("a 400 was retried %d times", len(b))
	}
}

// deliver sends one event through the notifier's retry loop.
func deliver(n *notify.Notifier, s notify.Sink) error {
	return notify.Deliver(context.Background(), n, s, event())
}

// TestNtfy: the push carries a title, the text and a click to the
// console.
func TestNtfy(t *testing.T) {
	ep := newEndpoint(t, 0, 0)
	h := surfacetest.New(t, surfacetest.Options{})
	n := notify.New(notify.Options{Host: h, After: -1})
	if err := deliver(n, notify.Ntfy{URL: ep.srv.URL + "/warden-alerts", Token: "tk_x", Priority: "high"}); err != nil {
		t.Fatal(err)
	}
	bodies, heads := ep.got()
	hd := heads[0]
	if hd.Get("Click") != event().URL || hd.Get("Title") == "" || hd.Get("Authorization") != "Bearer tk_x" || hd.Get("Priority") != "high" ||
		!strings.Contains(string(bodies[0]), "shell: rm -rf x") {
		t.Fatalf("ntfy request: %v %q", hd, bodies[0])
	}
}

type channel struct{}

func (channel) Surface() string { return "test" }

// TestOncePerPendingRequest: a request answered before After is never
// pushed (its push is cancelled when it ends); one still pending is
// pushed once, with its secrets redacted.
func TestOncePerPendingRequest(t *testing.T) {
	ep := newEndpoint(t, 0, 0)
	h := surfacetest.New(t, surfacetest.Options{})
	o, _ := owner.Gateway("test", "c", "u")
	o, _ = o.WithSession("test:c")
	o, _ = o.WithChannel(channel{})
	run := func(after time.Duration) (*notify.Notifier, func()) {
		n := notify.New(notify.Options{Host: h, Sinks: []notify.Sink{notify.Webhook{URL: ep.srv.URL, Secret: []byte("k")}}, After: after})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { n.Run(ctx); close(done) }()
		return n, func() { cancel(); <-done }
	}
	ask := func(cmd string) chan store.Request {
		out := make(chan store.Request, 1)
		go func() {
			r, err := h.Broker.Ask(context.Background(), broker.Question{Owner: o, Action: action.NewShell(cmd), Rule: "t"})
			if err != nil {
				t.Error(err)
			}
			out <- r
		}()
		return out
	}
	answer := func(approve bool) {
		ps, _ := h.Pending(context.Background(), "test:c")
		if _, err := h.Answer(context.Background(), ps[0].ID, surface.Answer{Approve: approve, By: surface.Identity{Surface: "test", User: "u"}}); err != nil {
			t.Fatal(err)
		}
	}

	slowN, stop := run(time.Hour)
	quick := ask("echo quick")
	waitPending(t, h, 1)
	waitFor(t, "the push scheduled", func() bool { w, _ := notify.Scheduled(slowN); return w == 1 })
	answer(true)
	<-quick
	waitFor(t, "the push cancelled", func() bool { w, s := notify.Scheduled(slowN); return w == 0 && s == 0 })
	stop()

	_, stop = run(-1)
	defer stop()
	slow := ask("curl -H 'Authorization: Bearer abc123' https://x")
	waitPending(t, h, 1)
	waitFor(t, "the push", func() bool { b, _ := ep.got(); return len(b) > 0 })
	answer(false)
	<-slow
	bodies, _ := ep.got()
	if len(bodies) != 1 {
		t.Fatalf("%d notifications, want 1: %q", len(bodies), bodies)
	}
	if strings.Contains(string(bodies[0]), "abc123") || !strings.Contains(string(bodies[0]), "curl") {
		t.Fatalf("notification: %s", bodies[0])
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func waitPending(t *testing.T, h *surfacetest.Host, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ps, _ := h.Pending(context.Background(), "test:c")
		if len(ps) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d pending, want %d", len(ps), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
