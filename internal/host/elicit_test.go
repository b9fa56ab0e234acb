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
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
)

// failingAudit refuses every record.
type failingAudit struct{ store.Audit }

func (failingAudit) AppendDecision(context.Context, store.Decision) (store.Decision, error) {
	return store.Decision{}, errors.New("disk full")
}

type webSurface struct{}

func (webSurface) Surface() string { return "web" }

// TestElicitationAuditedBeforeTheServerHears: an accepted question whose
// audit record cannot be written does not reach the server as accepted
// (the Elicitor fails, so mcpclient answers cancel); with the audit
// working it is accepted with the human's content.
func TestElicitationAuditedBeforeTheServerHears(t *testing.T) {
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b := broker.New(broker.Options{Requests: db, Grants: db, Host: "h", Timeout: time.Minute})
	defer b.Close(context.Background(), "test over")
	o, err := owner.Web("s1", webSurface{})
	if err != nil {
		t.Fatal(err)
	}
	answer := func() {
		for {
			p, _ := b.Pending(t.Context(), "s1")
			if len(p) == 1 {
				if _, err := b.Resolve(t.Context(), p[0].ID, broker.Answer{Approve: true, Content: json.RawMessage(`{"confirm":true}`)}); err != nil {
					t.Error(err)
				}
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	q := mcpclient.Question{Server: "files", Message: "Delete?", Mode: mcpclient.ModeForm}
	for _, tc := range []struct {
		name    string
		audit   store.Audit
		wantErr bool
	}{
		{"audit fails", failingAudit{db}, true},
		{"audited", db, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			go answer()
			a, err := brokerElicitor{b: b, audit: tc.audit}.Elicit(t.Context(), o, q)
			if tc.wantErr {
				if err == nil || a.Action == mcpclient.ActionAccept {
					t.Fatalf("unaudited answer reached the server: %+v %v", a, err)
				}
				return
			}
			if err != nil || a.Action != mcpclient.ActionAccept || a.Content["confirm"] != true {
				t.Fatalf("answer %+v %v", a, err)
			}
		})
	}
}
