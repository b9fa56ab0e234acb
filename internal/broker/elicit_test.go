package broker

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
)

var confirm = action.NewMCP("files", "confirm_delete", json.RawMessage(`{"path":"/srv/x"}`), false)

func elicitQuestion(o owner.Owner) Question {
	return Question{Owner: o, Action: confirm, Rule: "mcp.elicitation", Elicit: &store.Elicitation{
		Server: "files", Message: "Delete /srv/x?",
		Schema: json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}}}`),
	}}
}

func TestElicitOutcomes(t *testing.T) {
	tests := []struct {
		name        string
		answer      func(b *Broker, id string) error
		wantAction  string
		wantContent string
	}{
		{"accept with content", func(b *Broker, id string) error {
			_, err := b.Resolve(t.Context(), id, Answer{Approve: true, Scope: store.Always, Grain: "exact", By: "ana", Surface: "web", Content: json.RawMessage(`{"confirm":true}`)})
			return err
		}, ElicitAccept, `{"confirm":true}`},
		{"decline", func(b *Broker, id string) error {
			_, err := b.Resolve(t.Context(), id, Answer{By: "ana", Surface: "web", Reason: "no"})
			return err
		}, ElicitDecline, ""},
		{"withdrawn cancels", func(b *Broker, id string) error {
			return b.EndSession(t.Context(), "s1", "session closed")
		}, ElicitCancel, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := openDB(t)
			b := newBroker(t, db, time.Minute)
			ch := askAsync(t.Context(), b, elicitQuestion(web("s1")))
			p := waitPending(t, b, "s1", 1)
			if p[0].Elicit == nil || p[0].Elicit.Message != "Delete /srv/x?" {
				t.Fatalf("pending request lost its elicitation: %+v", p[0].Elicit)
			}
			if err := tc.answer(b, p[0].ID); err != nil {
				t.Fatal(err)
			}
			r := <-ch
			act, content := ElicitOutcome(r)
			if act != tc.wantAction || string(content) != tc.wantContent {
				t.Fatalf("outcome %s %s, want %s %s", act, content, tc.wantAction, tc.wantContent)
			}
			gs, err := db.ListGrants(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(gs) != 0 {
				t.Fatalf("an elicitation answer made grants: %+v", gs)
			}
		})
	}
}

func TestElicitExpiresToCancel(t *testing.T) {
	b := newBroker(t, openDB(t), 50*time.Millisecond)
	r, err := b.Ask(t.Context(), elicitQuestion(web("s1")))
	if err != nil {
		t.Fatal(err)
	}
	if act, _ := ElicitOutcome(r); act != ElicitCancel || r.State != store.Expired {
		t.Fatalf("got %s (%s), want cancel (expired)", act, r.State)
	}
}

func TestElicitationsNeverCoalesce(t *testing.T) {
	b := newBroker(t, openDB(t), time.Minute)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	a := askAsync(ctx, b, elicitQuestion(web("s1")))
	c := askAsync(ctx, b, elicitQuestion(web("s1")))
	p := waitPending(t, b, "s1", 2)
	if _, err := b.Resolve(t.Context(), p[0].ID, Answer{Approve: true, Content: json.RawMessage(`{"confirm":false}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Resolve(t.Context(), p[1].ID, Answer{}); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, ch := range []<-chan store.Request{a, c} {
		act, _ := ElicitOutcome(<-ch)
		got[act] = true
	}
	if !got[ElicitAccept] || !got[ElicitDecline] {
		t.Fatalf("outcomes %v, want one accept and one decline", got)
	}
}

func TestContentOnlyForElicitations(t *testing.T) {
	b := newBroker(t, openDB(t), time.Minute)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ch := askAsync(ctx, b, Question{Owner: web("s1"), Action: rm, Rule: "ask", Analysis: rmAnalysis})
	el := askAsync(ctx, b, elicitQuestion(web("s1")))
	p := waitPending(t, b, "s1", 2)
	var approval, elicitation string
	for _, r := range p {
		if r.Elicit == nil {
			approval = r.ID
		} else {
			elicitation = r.ID
		}
	}
	if _, err := b.Resolve(t.Context(), approval, Answer{Approve: true, Content: json.RawMessage(`{}`)}); !errors.Is(err, ErrContent) {
		t.Fatalf("content on an approval: err %v, want ErrContent", err)
	}
	if _, err := b.Resolve(t.Context(), elicitation, Answer{Content: json.RawMessage(`{}`)}); !errors.Is(err, ErrContent) {
		t.Fatalf("content with a denial: err %v, want ErrContent", err)
	}
	if _, err := b.Resolve(t.Context(), elicitation, Answer{Approve: true, Content: json.RawMessage(`[1]`)}); !errors.Is(err, ErrContent) {
		t.Fatalf("non-object content: err %v, want ErrContent", err)
	}
	cancel()
	<-ch
	<-el
}

// prompter is a channel that answers its own questions: it approves once
// (or accepts an elicitation) as soon as it is handed one.
type prompter struct {
	b     *Broker
	asked chan string
}

// promptedOwner is a CLI owner in session whose channel is a prompter
// that answers b's questions; asked holds up to n question ids.
func promptedOwner(t *testing.T, b *Broker, session string, n int) (*prompter, owner.Owner) {
	t.Helper()
	p := &prompter{b: b, asked: make(chan string, n)}
	o, err := owner.CLI().WithSession(session)
	if err == nil {
		o, err = o.WithChannel(p)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p, o
}

func (p *prompter) Surface() string { return "terminal" }

func (p *prompter) Prompt(ctx context.Context, r store.Request) {
	p.asked <- r.ID
	a := Answer{Approve: true, By: "tty"}
	if r.Elicit != nil {
		a.Content = json.RawMessage(`{"confirm":true}`)
	}
	if _, err := p.b.Resolve(ctx, r.ID, a); err != nil {
		panic(err)
	}
}

// TestPrompterAsksItsOwnQuestions: an owner whose channel is a Prompter
// is handed each of its questions, approvals and elicitations alike, and
// its answer ends the Ask.
func TestPrompterAsksItsOwnQuestions(t *testing.T) {
	b := newBroker(t, openDB(t), time.Minute)
	p, o := promptedOwner(t, b, "chat-1", 2)
	for _, q := range []Question{
		{Owner: o, Action: rm, Rule: "ask", Analysis: rmAnalysis},
		elicitQuestion(o),
	} {
		r, err := b.Ask(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if r.State != store.Answered || r.By != "tty" || <-p.asked != r.ID {
			t.Fatalf("ended %+v", r)
		}
	}
}

// TestNotifyingKeepsTheChannel: an asker hears of its question before the
// owner's own Prompter asks, and the Prompter still answers; an owner
// with no channel gets none from Notifying — it stays unattended, so
// nothing is asked at all (invariant 9).
func TestNotifyingKeepsTheChannel(t *testing.T) {
	b := newBroker(t, openDB(t), time.Minute)
	p, o := promptedOwner(t, b, "chat-2", 1)
	var heard []string
	n := Notifying(o, func(r store.Request) {
		if len(p.asked) != 0 {
			t.Error("the channel prompted before the asker heard")
		}
		heard = append(heard, r.ID)
	})
	if ch, _ := n.Channel(); ch.Surface() != "terminal" || !n.Equal(o) {
		t.Fatalf("notifying owner %s on %s, want %s on terminal", n, ch.Surface(), o)
	}
	r, err := b.Ask(t.Context(), Question{Owner: n, Action: rm, Rule: "ask", Analysis: rmAnalysis})
	if err != nil {
		t.Fatal(err)
	}
	if r.State != store.Answered || len(heard) != 1 || heard[0] != r.ID || <-p.asked != r.ID {
		t.Fatalf("ended %+v, heard %v", r, heard)
	}

	bare, err := owner.CLI().WithSession("chat-3")
	if err != nil {
		t.Fatal(err)
	}
	n = Notifying(bare, func(store.Request) { t.Error("heard a question of an owner nobody can answer for") })
	if n.Attended() {
		t.Fatal("Notifying attached a channel to an owner without one")
	}
	if _, err := b.Ask(t.Context(), Question{Owner: n, Action: rm, Rule: "ask"}); !errors.Is(err, ErrNoChannel) {
		t.Fatalf("ask without a channel: %v, want ErrNoChannel", err)
	}
}
