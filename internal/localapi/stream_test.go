package localapi

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/runner/runnertest"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/tools"
)

// TestStreamExpires: a question that nobody answers expires at its
// deadline while its asker is parked in a read of its connection (the
// read deadline is the timer), and the hook is told so.
func TestStreamExpires(t *testing.T) {
	rf := runnertest.New(t, runnertest.Options{Ask: time.Minute, Policy: "approvals:\n  timeout: 1\n",
		Terminal: tools.Terminal{Env: []string{"PATH=/usr/bin:/bin"}}})
	c := NewClient(serve(t, New(Options{Broker: rf.Broker, Store: rf.DB, Runner: rf.Runner, Peers: PeerPolicy{UID: os.Getuid(), Boundary: self()}})))
	t.Cleanup(func() { rf.Broker.Close(context.Background(), "test over") })
	t.Cleanup(c.Close)
	pending := false
	d, err := c.Decide(t.Context(), shellReq("s1", "git push --force origin main"), func(Event) { pending = true })
	if err != nil {
		t.Fatal(err)
	}
	if !pending || d.Allowed || d.State != string(store.Expired) {
		t.Fatalf("pending %v, decision %+v: want an expired question", pending, d)
	}
	r, err := rf.DB.GetRequest(t.Context(), d.RequestID)
	if err != nil || r.State != store.Expired {
		t.Fatalf("request %+v %v, want expired", r, err)
	}
}

// TestStreamHangUpKillsCommand: a client that hangs up while its
// command runs (no question pending: the watcher reads the connection)
// gets the command killed; the server's stream then ends.
func TestStreamHangUpKillsCommand(t *testing.T) {
	rf := runnertest.New(t, runnertest.Options{Ask: time.Minute, Terminal: tools.Terminal{Env: []string{"PATH=/usr/bin:/bin"}}})
	s := New(Options{Broker: rf.Broker, Store: rf.DB, Runner: rf.Runner, Peers: PeerPolicy{UID: os.Getuid(), Boundary: self()}})
	c := NewClient(serve(t, s))
	t.Cleanup(func() { rf.Broker.Close(context.Background(), "test over") })
	t.Cleanup(c.Close)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- c.Run(ctx, shellReq("s1", "echo started; sleep 300"), func(e Event) error {
			if e.Event == EventStdout {
				cancel() // hang up once the command runs
			}
			return nil
		})
	}()
	<-done
	ended := make(chan struct{})
	go func() { s.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(time.Minute): // the command sleeps 300 s unless killed
		t.Fatal("the stream did not end after its client hung up: the command was not killed")
	}
}
