package host

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/mcpclient"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
)

// refusingAnswers is a store whose disk refuses a human's approval (the
// transaction that would end the request and write its audit record).
type refusingAnswers struct{ *sqlite.DB }

func (s refusingAnswers) ResolveRequest(ctx context.Context, id string, res store.Resolution) (store.Request, error) {
	if res.State == store.Answered {
		return store.Request{}, errors.New("disk full")
	}
	return s.DB.ResolveRequest(ctx, id, res)
}

type webSurface struct{}

func (webSurface) Surface() string { return "web" }

// TestElicitationAuditedBeforeTheServerHears: an accepted answer that
// cannot be recorded is never given (the store ends the request and
// writes its record in one transaction), so the server hears cancel when
// the question expires; with the store working the server hears accept
// with the human's content, and the question and its end are on record
// with the request's id.
func TestElicitationAuditedBeforeTheServerHears(t *testing.T) {
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	o, err := owner.Web("s1", webSurface{})
	if err != nil {
		t.Fatal(err)
	}
	q := mcpclient.Question{Server: "files", Message: "Delete?", Mode: mcpclient.ModeForm}
	for _, tc := range []struct {
		name     string
		requests store.Requests
		timeout  time.Duration
		want     string
	}{
		{"the answer cannot be recorded", refusingAnswers{db}, time.Second, mcpclient.ActionCancel},
		{"audited", db, time.Minute, mcpclient.ActionAccept},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := broker.New(broker.Options{Requests: tc.requests, Grants: db, Host: "h", Timeout: tc.timeout})
			defer b.Close(context.Background(), "test over")
			answered := make(chan error, 1)
			go func() {
				for {
					p, _ := b.Pending(t.Context(), "s1")
					if len(p) == 1 {
						_, err := b.Resolve(t.Context(), p[0].ID, broker.Answer{Approve: true, Content: json.RawMessage(`{"confirm":true}`)})
						answered <- err
						return
					}
					time.Sleep(5 * time.Millisecond)
				}
			}()
			e := brokerElicitor{&agents{runner: runner.New(runner.Options{Broker: b})}}
			a, err := e.Elicit(t.Context(), o, q)
			if aerr := <-answered; (aerr == nil) != (tc.want == mcpclient.ActionAccept) {
				t.Fatalf("the human's answer: %v", aerr)
			}
			if err != nil || a.Action != tc.want {
				t.Fatalf("server heard %+v %v, want %s", a, err, tc.want)
			}
			if tc.want == mcpclient.ActionAccept && a.Content["confirm"] != true {
				t.Fatalf("content %+v", a.Content)
			}
		})
	}
	recs, err := db.Decisions(t.Context(), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, d := range recs {
		if d.RequestID == "" {
			t.Errorf("record %d has no request id", d.Seq)
		}
		rules = append(rules, d.Verdict+" "+d.Rule)
	}
	want := []string{"ask mcp.elicitation", "deny mcp.elicitation.cancel", "ask mcp.elicitation", "allow mcp.elicitation.accept"}
	if len(rules) != len(want) {
		t.Fatalf("records %q, want %q", rules, want)
	}
	for i := range want {
		if rules[i] != want[i] {
			t.Errorf("records %q, want %q", rules, want)
			break
		}
	}
}
