package localapi

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner/runnertest"
	"github.com/wardenhq/warden/internal/store"
)

type consoleSurface struct{}

func (consoleSurface) Surface() string { return "web" }

// TestAnswerAnMCPQuestion: warden approvals lists an MCP server's
// question with its message and answers it with content (accept) or a
// denial (decline); it is answered once and grants nothing.
func TestAnswerAnMCPQuestion(t *testing.T) {
	db := runnertest.Store(t)
	b := broker.New(broker.Options{Requests: db, Grants: db, Host: "test", Timeout: time.Minute})
	c := NewClient(serve(t, New(Options{Broker: b, Store: db, Peers: PeerPolicy{UID: os.Getuid(), Boundary: self()}})))
	t.Cleanup(func() { b.Close(context.Background(), "test over") })
	t.Cleanup(c.Close)
	o, err := owner.Web("s1", consoleSurface{})
	if err != nil {
		t.Fatal(err)
	}
	ask := func() <-chan store.Request {
		ch := make(chan store.Request, 1)
		go func() {
			r, _ := b.Ask(context.Background(), broker.Question{Owner: o, Action: action.NewMCP("files", "elicitation", nil, false), Rule: "mcp.elicitation",
				Elicit: &store.Elicitation{Server: "files", Message: "Delete 3 files?", Schema: json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}}}`)}})
			ch <- r
		}()
		return ch
	}
	pending := func() Approval {
		t.Helper()
		for range 200 {
			list, err := c.Approvals(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(list) == 1 {
				return list[0]
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatal("the question never appeared")
		return Approval{}
	}

	done := ask()
	a := pending()
	if a.Elicit == nil || a.Elicit.Message != "Delete 3 files?" || a.Elicit.Server != "files" {
		t.Fatalf("listed as %+v", a)
	}
	if _, err := c.Approve(t.Context(), a.ID, ApproveRequest{Scope: "always"}); apiStatus(err) != http.StatusBadRequest {
		t.Fatalf("approve always: %v, want 400", err)
	}
	if _, err := c.Approve(t.Context(), a.ID, ApproveRequest{Content: json.RawMessage(`[1]`)}); apiStatus(err) != http.StatusBadRequest {
		t.Fatalf("content not an object: %v, want 400", err)
	}
	if _, err := c.Approve(t.Context(), a.ID, ApproveRequest{Content: json.RawMessage(`{"confirm":true}`)}); err != nil {
		t.Fatal(err)
	}
	if act, content := broker.ElicitOutcome(<-done); act != broker.ElicitAccept || string(content) != `{"confirm":true}` {
		t.Fatalf("outcome %s %s", act, content)
	}

	done = ask()
	a = pending()
	if _, err := c.Deny(t.Context(), a.ID, DenyRequest{Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	if act, _ := broker.ElicitOutcome(<-done); act != broker.ElicitDecline {
		t.Fatalf("outcome %s, want decline", act)
	}
	if gs, err := db.ListGrants(t.Context()); err != nil || len(gs) != 0 {
		t.Fatalf("grants: %+v %v", gs, err)
	}
}
