package mcpclient_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/mcpclient"
	"github.com/wardenhq/warden/internal/mcpclient/mcptest"
	"github.com/wardenhq/warden/internal/owner"
)

func TestSessionPerOwner(t *testing.T) {
	m, fake := inProcess(t, mcptest.Legacy, mcpclient.Options{})
	ctx := t.Context()
	web := webOwner(t, "A")

	// The same owner's concurrent uses share one session, even while it
	// is still starting.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := m.Call(ctx, web, "fake", "slow", map[string]any{"ms": 20}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Go(func() {
		if _, err := m.Tools(ctx, web); err != nil {
			t.Error(err)
		}
	})
	wg.Wait()
	if n := fake.Sessions(); n != 1 {
		t.Fatalf("one owner: %d sessions, want 1", n)
	}

	// A copy of the owner with a new channel (a reconnected console) is
	// the same owner.
	again := webOwner(t, "A")
	if _, err := m.Call(ctx, again, "fake", "echo", nil); err != nil {
		t.Fatal(err)
	}
	// Different owners get their own sessions, whether they call at once
	// or one after another.
	api, err := owner.API().WithSession("k1")
	if err != nil {
		t.Fatal(err)
	}
	apiWithChannel, err := api.WithChannel(&chatChannel{})
	if err != nil {
		t.Fatal(err)
	}
	others := []owner.Owner{webOwner(t, "B"), cronOwner(t, "j1"), cronOwner(t, "j2"), api, apiWithChannel}
	for _, o := range others {
		wg.Go(func() {
			if _, err := m.Call(ctx, o, "fake", "echo", nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// api and apiWithChannel share a notation but not a session: one
	// can answer, the other cannot.
	if n, want := fake.Sessions(), 1+len(others); n != want {
		t.Errorf("%d sessions, want %d", n, want)
	}
}

func TestIdleClose(t *testing.T) {
	m, fake := inProcess(t, mcptest.Legacy, mcpclient.Options{IdleTimeout: 50 * time.Millisecond})
	ctx := t.Context()
	web := webOwner(t, "A")

	// A call longer than the idle timeout keeps its session.
	if r, err := m.Call(ctx, web, "fake", "slow", map[string]any{"ms": 200}); err != nil || r.Text != "done" {
		t.Fatalf("slow = %+v, %v", r, err)
	}
	if fake.Sessions() != 1 {
		t.Fatalf("%d sessions after the slow call, want 1", fake.Sessions())
	}
	select {
	case <-fake.Done(0):
	case <-time.After(10 * time.Second):
		t.Fatal("idle session was not closed")
	}
	if _, err := m.Call(ctx, web, "fake", "echo", nil); err != nil {
		t.Fatal(err)
	}
	if fake.Sessions() != 2 {
		t.Errorf("%d sessions, want a new one after the idle close", fake.Sessions())
	}
}

func TestCloseOwner(t *testing.T) {
	h := newHuman()
	m, fake := inProcess(t, mcptest.Legacy, mcpclient.Options{Elicit: h, ElicitTimeout: time.Hour})
	ctx := t.Context()
	web, cron := webOwner(t, "A"), cronOwner(t, "j")
	if _, err := m.Call(ctx, cron, "fake", "echo", nil); err != nil {
		t.Fatal(err)
	}
	// web's question is pending when web's owner ends.
	call := goCall(ctx, m, web, "fake", "confirm_delete", map[string]any{"path": "/a"})
	a := h.next(t)
	if err := m.CloseOwner(ctx, webOwner(t, "A")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the pending question was not withdrawn")
	}
	// The withdrawn question reaches the server as a cancel; whether the
	// call then ends with the server's answer to it or with the closed
	// session's error is a race, and either way nothing was done.
	if r := wait(t, call); r.err == nil && r.res.Text != "cancelled" {
		t.Errorf("call of a closed owner = %+v, want an error or the server's \"cancelled\"", r.res)
	}
	select {
	case <-fake.Done(1):
	case <-time.After(10 * time.Second):
		t.Fatal("web's session was not closed")
	}
	select {
	case <-fake.Done(0):
		t.Fatal("CloseOwner(web) closed cron's session")
	default:
	}
	if _, err := m.Call(ctx, cron, "fake", "echo", nil); err != nil {
		t.Fatal(err)
	}
	if fake.Sessions() != 2 {
		t.Errorf("%d sessions, want cron's kept", fake.Sessions())
	}
	// The owner can come back: a new session.
	if _, err := m.Call(ctx, web, "fake", "echo", nil); err != nil {
		t.Fatal(err)
	}
	if fake.Sessions() != 3 {
		t.Errorf("%d sessions, want a new one for web", fake.Sessions())
	}
}

func TestClose(t *testing.T) {
	m, fake := inProcess(t, mcptest.Legacy, mcpclient.Options{})
	ctx := t.Context()
	web := webOwner(t, "A")
	slow := goCall(ctx, m, web, "fake", "slow", map[string]any{"ms": 60_000})
	// Wait until the call has its session.
	deadline := time.Now().Add(10 * time.Second)
	for fake.Sessions() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if r := wait(t, slow); r.err == nil {
		t.Errorf("in-flight call = %+v, want an error after Close", r.res)
	}
	<-fake.Done(0)
	if _, err := m.Call(ctx, web, "fake", "echo", nil); !errors.Is(err, mcpclient.ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestCallErrors(t *testing.T) {
	m, _ := inProcess(t, mcptest.Legacy, mcpclient.Options{})
	web := webOwner(t, "A")
	cases := []struct {
		name         string
		o            owner.Owner
		server, tool string
		want         error
	}{
		{"unknown server", web, "nope", "echo", mcpclient.ErrUnknownServer},
		{"no owner", owner.Owner{}, "fake", "echo", mcpclient.ErrNoOwner},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.Call(t.Context(), tc.o, tc.server, tc.tool, nil)
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	t.Run("unknown tool", func(t *testing.T) {
		r, err := m.Call(t.Context(), web, "fake", "nope", nil)
		if err == nil && !r.IsError {
			t.Errorf("got %+v, want an error", r)
		}
	})
	t.Run("cancelled ctx", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := m.Call(ctx, web, "fake", "echo", nil); !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
	})
}

// TestServerGone: a session the server ended is dropped, and the owner's
// next call starts a new one instead of failing until the idle timeout.
func TestServerGone(t *testing.T) {
	m, fake := inProcess(t, mcptest.Legacy, mcpclient.Options{})
	ctx := t.Context()
	web := webOwner(t, "A")
	if _, err := m.Call(ctx, web, "fake", "echo", nil); err != nil {
		t.Fatal(err)
	}
	fake.CloseSession(0)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := m.Call(ctx, web, "fake", "echo", nil)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failing: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if fake.Sessions() != 2 {
		t.Errorf("%d sessions, want 2", fake.Sessions())
	}
}

// TestStartFailure: a stdio server that cannot start is reported with
// its name and the end of its stderr; the other servers carry on.
func TestStartFailure(t *testing.T) {
	m := mcpclient.New(stdioOptions(t, mcpclient.Options{
		Servers: []config.MCPServer{
			{Name: "missing", Command: []string{"/nonexistent/mcp-server"}},
			{Name: "crashing", Command: []string{"sh", "-c", "echo 'fatal: no config file' >&2; exit 3"}},
			{Name: "fake", Command: mcptest.Command(mcptest.Legacy)},
		},
		Logger: testLogger(t),
	}))
	defer m.Close()
	tools, err := m.Tools(t.Context(), cronOwner(t, "j"))
	te, ok := errors.AsType[*mcpclient.ToolsError](err)
	if !ok || len(te.Failed) != 2 {
		t.Fatalf("err = %v, want two failed servers", err)
	}
	if f := te.Failed[0]; f.Server != "missing" || !strings.Contains(f.Error(), "/nonexistent/mcp-server") {
		t.Errorf("missing: %v", f)
	}
	if f := te.Failed[1]; f.Server != "crashing" || !strings.Contains(f.Error(), "fatal: no config file") {
		t.Errorf("crashing: %v", f)
	}
	if len(tools) == 0 || tools[0].Server != "fake" {
		t.Errorf("tools %v, want fake's", tools)
	}
	if _, err := m.Call(t.Context(), cronOwner(t, "j"), "crashing", "x", nil); err == nil || !strings.Contains(err.Error(), "crashing") {
		t.Errorf("call on crashing server: %v", err)
	}
}
