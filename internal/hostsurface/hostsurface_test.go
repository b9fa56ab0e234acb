package hostsurface_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/board"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/cron"
	"github.com/wardenhq/warden/internal/hostsurface"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface"
	"github.com/wardenhq/warden/internal/surface/surfacetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// channel is an attended owner's answer channel that asks nobody itself.
type channel struct{}

func (channel) Surface() string { return "terminal" }

// ask puts a dangerous command's question to h's broker as an attended
// owner of session, in the background; the channel hears how it ended.
func ask(t *testing.T, h *surfacetest.Host, session string) (<-chan store.Request, string) {
	t.Helper()
	o, err := owner.CLI().WithSession(session)
	if err == nil {
		o, err = o.WithChannel(channel{})
	}
	if err != nil {
		t.Fatal(err)
	}
	asked := make(chan string, 1)
	o = broker.Notifying(o, func(r store.Request) { asked <- r.ID })
	ended := make(chan store.Request, 1)
	go func() {
		r, err := h.Broker.Ask(context.Background(), broker.Question{Owner: o, Action: action.NewShell("rm -rf /srv/x"), Rule: "test"})
		if err != nil {
			t.Error(err)
		}
		ended <- r
	}()
	return ended, <-asked
}

// TestEndedElsewhereWakes: two processes share a store, each with its
// own broker (warden chat beside warden serve). A question asked in one
// and answered through the other is heard by its asker as soon as the
// first reads it (surface.Host.Request) or answers it late
// (surface.Host.Answer), not at its deadline (an hour here; the test
// gives up after two minutes, a margin no load comes near).
func TestEndedElsewhereWakes(t *testing.T) {
	for _, how := range []string{"request", "late answer"} {
		t.Run(how, func(t *testing.T) {
			here := surfacetest.New(t, surfacetest.Options{Timeout: time.Hour})
			there := surfacetest.New(t, surfacetest.Options{DB: here.DB, HostID: "there"})
			ended, id := ask(t, here, "s")
			by := surface.Identity{Surface: "terminal", User: "1000"}
			if _, err := there.Answer(t.Context(), id, surface.Answer{Reason: "no", By: by}); err != nil {
				t.Fatal(err)
			}
			switch how {
			case "request":
				if r, err := here.Request(t.Context(), id); err != nil || r.State != store.Denied {
					t.Fatalf("request: %+v, %v", r, err)
				}
			default:
				if _, err := here.Answer(t.Context(), id, surface.Answer{Approve: true, Scope: store.Once, By: by}); !errors.Is(err, surface.ErrNotPending) {
					t.Fatalf("late answer: %v, want ErrNotPending", err)
				}
			}
			select {
			case r := <-ended:
				if r.State != store.Denied || r.By != "terminal:1000" {
					t.Fatalf("the asker heard %s by %q, want denied by terminal:1000", r.State, r.By)
				}
			case <-time.After(2 * time.Minute):
				t.Fatal("the asker was not woken: it waits for its deadline")
			}
		})
	}
}

// TestIdentityCredential: an identity proven by a credential is recorded
// as the credential says.
func TestIdentityCredential(t *testing.T) {
	h := surfacetest.New(t, surfacetest.Options{})
	ended, id := ask(t, h, "s")
	by := surface.Identity{Surface: "web", User: "c1", Credential: "console session c1 (login link l1)"}
	if _, err := h.Answer(t.Context(), id, surface.Answer{Reason: "no", By: by}); err != nil {
		t.Fatal(err)
	}
	if r := <-ended; r.By != by.Credential || r.Surface != "web" {
		t.Fatalf("answered by %q on %q", r.By, r.Surface)
	}
	if _, err := h.Answer(t.Context(), id, surface.Answer{By: surface.Identity{Surface: "web"}}); err == nil {
		t.Fatal("an answer without a user was taken")
	}
}

// TestBoard: the board view reads the host's board service; a comment
// on a task that does not exist is store.ErrNotFound and adds nothing.
func TestBoard(t *testing.T) {
	h := surfacetest.New(t, surfacetest.Options{})
	if hostsurface.NewBoard(nil) != nil {
		t.Fatal("a host without a board service has a board view")
	}
	svc := board.New(board.Options{Store: h.DB})
	b := hostsurface.NewBoard(svc)
	task, err := h.DB.AddTask(t.Context(), store.Task{ID: "t1", Title: "one", Workspace: store.WorkspaceScratch, Script: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Comment(t.Context(), "t404", "op", "hello"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("comment on a missing task: %v", err)
	}
	if err := b.Comment(t.Context(), task.ID, "op", "hello"); err != nil {
		t.Fatal(err)
	}
	card, err := b.Card(t.Context(), task.ID)
	if err != nil || card.ID != task.ID || len(card.Comments) != 1 || card.Comments[0].Body != "hello" {
		t.Fatalf("card: %+v, %v", card, err)
	}
	if _, err := b.Card(t.Context(), "t404"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("card of a missing task: %v", err)
	}
	tasks, err := b.Tasks(t.Context())
	if err != nil || len(tasks) != 1 {
		t.Fatalf("tasks: %v, %v", tasks, err)
	}
}

// TestCron: a name no job can have is store.ErrNotFound before the
// scheduler is asked; a scheduler that stopped is surface.ErrNotRunning.
func TestCron(t *testing.T) {
	h := surfacetest.New(t, surfacetest.Options{})
	if hostsurface.NewCron(nil, h.DB) != nil {
		t.Fatal("a host without a scheduler has a cron view")
	}
	s, err := cron.New(cron.Options{Store: h.DB, Runner: h.Runner, Host: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	c := hostsurface.NewCron(s, h.DB)
	if _, err := c.RunNow(t.Context(), "../x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("run of a bad name: %v", err)
	}
	if _, err := c.RunNow(t.Context(), "nosuchjob"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("run of a missing job: %v", err)
	}
	cancel()
	<-done
	if _, err := c.RunNow(t.Context(), "nosuchjob"); !errors.Is(err, surface.ErrNotRunning) {
		t.Fatalf("run after the scheduler stopped: %v", err)
	}
}
