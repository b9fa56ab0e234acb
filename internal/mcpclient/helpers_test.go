package mcpclient_test

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/mcpclient"
	"github.com/wardenhq/warden/internal/mcpclient/mcptest"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/sandbox/sandboxtest"
)

// TestMain lets the test binary act as the stdio fake server
// (mcptest.Command), and fails the package if a test leaves a goroutine
// behind: sessions, their connections and subprocesses must all end.
func TestMain(m *testing.M) {
	mcptest.MaybeServe()
	goleak.VerifyTestMain(m)
}

// chatChannel is a test AnswerChannel: a web console tab.
type chatChannel struct{ name string }

func (c *chatChannel) Surface() string { return "web" }

// ask is one question the fake human was asked.
type ask struct {
	o     owner.Owner
	q     mcpclient.Question
	reply chan mcpclient.Answer
	ctx   context.Context
}

// human is an Elicitor played by the test: each question is sent on
// asks, and the test answers it on reply.
type human struct {
	asks chan ask
	mu   sync.Mutex
	seen []ask
}

func newHuman() *human { return &human{asks: make(chan ask, 16)} }

func (h *human) Elicit(ctx context.Context, o owner.Owner, q mcpclient.Question) (mcpclient.Answer, error) {
	a := ask{o: o, q: q, reply: make(chan mcpclient.Answer, 1), ctx: ctx}
	h.mu.Lock()
	h.seen = append(h.seen, a)
	h.mu.Unlock()
	h.asks <- a
	select {
	case ans := <-a.reply:
		return ans, nil
	case <-ctx.Done():
		return mcpclient.Answer{}, context.Cause(ctx)
	}
}

func (h *human) asked() []ask {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]ask(nil), h.seen...)
}

// next waits for the next question.
func (h *human) next(t *testing.T) ask {
	t.Helper()
	select {
	case a := <-h.asks:
		return a
	case <-time.After(10 * time.Second):
		t.Fatal("no question reached the human")
		return ask{}
	}
}

func webOwner(t testing.TB, key string) owner.Owner {
	t.Helper()
	o, err := owner.Web(key, &chatChannel{name: key})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func cronOwner(t testing.TB, job string) owner.Owner {
	t.Helper()
	o, err := owner.Cron(job, "1")
	if err != nil {
		t.Fatal(err)
	}
	o, err = o.WithSession("cron_" + job)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// testLogger writes to the test's output.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// inProcess returns a Manager with one server "fake" served in-process,
// closed at the end of the test (the Manager first, then the fake).
func inProcess(t testing.TB, style mcptest.Style, opts mcpclient.Options) (*mcpclient.Manager, *mcptest.Fake) {
	t.Helper()
	fake := mcptest.New(style)
	opts.Servers = append(opts.Servers, config.MCPServer{Name: "fake", Command: []string{"unused"}})
	opts.Connect = fake.Connect
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	m := mcpclient.New(opts)
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
		fake.Close()
	})
	return m, fake
}

// callResult is a Call's outcome, sent back from a goroutine.
type callResult struct {
	res mcpclient.Result
	err error
}

func goCall(ctx context.Context, m *mcpclient.Manager, o owner.Owner, server, tool string, args map[string]any) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		res, err := m.Call(ctx, o, server, tool, args)
		ch <- callResult{res, err}
	}()
	return ch
}

func wait(t *testing.T, ch <-chan callResult) callResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("call did not return")
		return callResult{}
	}
}

// recorder counts the calls of the Elicitor it wraps.
type recorder struct {
	next mcpclient.Elicitor
	n    atomic.Int32
}

func (r *recorder) Elicit(ctx context.Context, o owner.Owner, q mcpclient.Question) (mcpclient.Answer, error) {
	r.n.Add(1)
	return r.next.Elicit(ctx, o, q)
}

// answer always answers a.
func answer(a mcpclient.Answer) mcpclient.Elicitor {
	return mcpclient.ElicitorFunc(func(context.Context, owner.Owner, mcpclient.Question) (mcpclient.Answer, error) {
		return a, nil
	})
}

// fail always fails with err.
func fail(err error) mcpclient.Elicitor {
	return mcpclient.ElicitorFunc(func(context.Context, owner.Owner, mcpclient.Question) (mcpclient.Answer, error) {
		return mcpclient.Answer{}, err
	})
}

// blockOnCtx waits for ctx to end, as a surface nobody answers does.
func blockOnCtx() mcpclient.Elicitor {
	return mcpclient.ElicitorFunc(func(ctx context.Context, _ owner.Owner, _ mcpclient.Question) (mcpclient.Answer, error) {
		<-ctx.Done()
		return mcpclient.Answer{}, ctx.Err()
	})
}

// ignoreCtx is a broken Elicitor that waits for release whatever ctx
// says, and then accepts.
func ignoreCtx(release <-chan struct{}) mcpclient.Elicitor {
	return mcpclient.ElicitorFunc(func(context.Context, owner.Owner, mcpclient.Question) (mcpclient.Answer, error) {
		<-release
		return mcpclient.Answer{Action: "accept", Content: map[string]any{"confirm": true}}, nil
	})
}

// stdioOptions sets a stdio server's environment for tests: the test's
// own, plus GORACE so a race-built child exits without the race
// runtime's one-second pause.
func stdioOptions(t testing.TB, opts mcpclient.Options) mcpclient.Options {
	opts.Sandbox = sandboxtest.New(t)
	opts.Environ = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	opts.Passthrough = append(opts.Passthrough, "GORACE")
	return opts
}
