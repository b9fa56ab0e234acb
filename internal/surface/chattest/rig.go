package chattest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface/chat"
	"github.com/wardenhq/warden/internal/surface/surfacetest"
)

// Core builds the chat core of an adapter's tests: platform on h (whose
// store keeps the posts), access as given, reconnect backoffs short
// enough for a test. It runs until the test ends; stop stops it sooner
// and waits for it (a second call does nothing).
func Core(t testing.TB, platform chat.Platform, h *surfacetest.Host, access chat.Access) (core *chat.Core, stop func()) {
	t.Helper()
	core, err := chat.New(chat.Options{Platform: platform, Host: h, Posts: h.DB, Logger: surfacetest.Logger(t),
		Access: access, MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { core.Run(ctx); close(done) }()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return core, stop
}

// Owner is the asker in conversation conv of platform: gateway(platform,
// conv.Chat, user), the conversation's session, core as its answer
// channel.
func Owner(t testing.TB, core *chat.Core, platform string, conv chat.Conv, user string) owner.Owner {
	t.Helper()
	o, err := owner.Gateway(platform, conv.Chat, user)
	if err == nil {
		o, err = o.WithSession(chat.SessionKey(platform, conv))
	}
	if err == nil {
		o, err = o.WithChannel(core)
	}
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// Elicit has the MCP server "files" ask o, in the background, to fill
// in the form schema with message, as an elicitation reaches the host;
// the request comes on the channel when the question ends. A failed
// ask fails the test.
func Elicit(t testing.TB, h *surfacetest.Host, o owner.Owner, message string, schema json.RawMessage) <-chan store.Request {
	done := make(chan store.Request, 1)
	go func() {
		req, err := h.Broker.Ask(context.Background(), broker.Question{Owner: o, Rule: "mcp.elicitation",
			Elicit: &store.Elicitation{Server: "files", Message: message, Schema: schema}})
		if err != nil {
			t.Error(err)
		}
		done <- req
	}()
	return done
}

// Target is a directory a dangerous command of the tests deletes,
// inside h's workspace: the sandbox shows commands nothing else of the
// test's temporary directories.
func Target(t testing.TB, h *surfacetest.Host) string {
	t.Helper()
	parent, err := os.MkdirTemp(h.Dir, "t")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "reports")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Del is a command deleting dir (made by Target) that the gate asks
// about: the delete is named relative to the workspace commands run in,
// since an absolute path, or a cd, under the temporary directory would
// make the delete temporary, and so not worth asking about.
func Del(dir string) string {
	return "rm -rf ./" + filepath.Base(filepath.Dir(dir)) + "/" + filepath.Base(dir)
}

// Exists reports whether path p exists: whether a command deleting it
// has not run.
func Exists(p string) bool { _, err := os.Stat(p); return err == nil }

// RequestID is the request id a posted question names ("request ID").
func RequestID(t testing.TB, text string) string {
	t.Helper()
	i := strings.Index(text, "request ")
	if i < 0 || len(text) < i+len("request ")+26 {
		t.Fatalf("no request id in %q", text)
	}
	return text[i+len("request ") : i+len("request ")+26]
}

// Posted is a question as the fake platform shows it.
type Posted struct {
	// At is when the platform got the message; Text its text.
	At   time.Time
	Text string
	// Approve presses its "Approve once" as an approver.
	Approve func()
}

// Latency is an adapter's latency benchmark. Each iteration asks, as o,
// about "rm -rf /srv/bench/N" in the background; posted(N) waits until
// the fake platform shows that question; its Approve is pressed. It
// reports the time from the request's creation to its post (post) and
// from the press to the asker waking with the answer (wake), each as
// the median and the 99th percentile.
func Latency(b *testing.B, h *surfacetest.Host, o owner.Owner, posted func(n int) Posted) {
	var post, wake []time.Duration
	for i := 0; b.Loop(); i++ {
		woke := make(chan time.Time, 1)
		go func() {
			_, err := h.Broker.Ask(context.Background(), broker.Question{Owner: o, Action: action.NewShell(fmt.Sprintf("rm -rf /srv/bench/%d", i)), Rule: "bench"})
			if err != nil {
				b.Error(err)
			}
			woke <- time.Now()
		}()
		m := posted(i)
		req, err := h.Request(context.Background(), RequestID(b, m.Text))
		if err != nil {
			b.Fatal(err)
		}
		post = append(post, m.At.Sub(req.Created))
		pressed := time.Now()
		m.Approve()
		wake = append(wake, (<-woke).Sub(pressed))
	}
	surfacetest.Report(b, "post", post)
	surfacetest.Report(b, "wake", wake)
}
