package localapi

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner/runnertest"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
	"github.com/wardenhq/warden/internal/tools"
)

// externalServer serves the admin API with a real store, gate, broker
// and runner (the default policy) and returns a client and the store.
func externalServer(t *testing.T) (*Client, *sqlite.DB) {
	t.Helper()
	rf := runnertest.New(t, runnertest.Options{Ask: time.Minute, Terminal: tools.Terminal{Env: []string{"PATH=/usr/bin:/bin"}}})
	db, b, rn := rf.DB, rf.Broker, rf.Runner
	c := NewClient(serve(t, New(Options{Broker: b, Store: db, Runner: rn, Peers: PeerPolicy{UID: os.Getuid(), Boundary: self()},
		Console: func(id string) string { return "http://console/pending#req-" + id }})))
	// Registered after serve's cleanup, so it runs first: waiters wake
	// before the server closes (the fixture closes the store last).
	t.Cleanup(func() { b.Close(context.Background(), "test over") })
	t.Cleanup(c.Close)
	return c, db
}

func shellReq(session, command string) ExternalRequest {
	return ExternalRequest{Agent: "claude-code", Session: session, Action: action.NewShell(command).In("/tmp")}
}

// answerNext waits for one pending request and answers it with answer.
func answerNext(t *testing.T, c *Client, answer func(id string) error) <-chan error {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			list, err := c.Approvals(context.Background())
			if err != nil {
				errc <- err
				return
			}
			if len(list) == 1 {
				errc <- answer(list[0].ID)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		errc <- errors.New("no pending request")
	}()
	return errc
}

func TestExternalDecide(t *testing.T) {
	c, db := externalServer(t)
	ctx := t.Context()
	tests := []struct {
		name        string
		req         ExternalRequest
		answer      func(id string) error // nil: no question expected
		wantAllowed bool
		wantVerdict gate.Verdict
		wantRule    string
		wantMessage string
		wantState   store.State
	}{
		{name: "safe", req: shellReq("s1", "echo hi"), wantAllowed: true, wantVerdict: gate.Allow, wantRule: gate.RuleSafe},
		{name: "hardline", req: shellReq("s1", "rm -rf /"), wantVerdict: gate.Deny, wantRule: gate.RuleHardline, wantMessage: "warden blocked"},
		{
			name: "approved on the console", req: shellReq("s1", "git push --force origin main"),
			answer: func(id string) error {
				_, err := c.Approve(ctx, id, ApproveRequest{})
				return err
			},
			wantAllowed: true, wantVerdict: gate.Ask, wantRule: gate.RuleHuman, wantState: store.Answered,
		},
		{
			name: "denied on the console", req: shellReq("s1", "git push --force origin main"),
			answer: func(id string) error {
				_, err := c.Deny(ctx, id, DenyRequest{Reason: "not today"})
				return err
			},
			wantVerdict: gate.Ask, wantRule: gate.RuleHuman, wantMessage: "not today", wantState: store.Denied,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var answered <-chan error
			if tt.answer != nil {
				answered = answerNext(t, c, tt.answer)
			}
			var pending []Event
			d, err := c.Decide(ctx, tt.req, func(e Event) { pending = append(pending, e) })
			if err != nil {
				t.Fatal(err)
			}
			if answered != nil {
				if err := <-answered; err != nil {
					t.Fatal(err)
				}
			}
			if d.Allowed != tt.wantAllowed || d.Verdict != string(tt.wantVerdict) || d.Rule != tt.wantRule {
				t.Errorf("decision = %+v, want allowed %v verdict %s rule %s", d, tt.wantAllowed, tt.wantVerdict, tt.wantRule)
			}
			if !strings.Contains(d.Message, tt.wantMessage) || (tt.wantAllowed && d.Message != "") {
				t.Errorf("message = %q, want it to contain %q", d.Message, tt.wantMessage)
			}
			if d.Session != owner.ExternalKey("claude-code", "s1") {
				t.Errorf("session = %q", d.Session)
			}
			if tt.answer == nil {
				if len(pending) != 0 || d.RequestID != "" {
					t.Errorf("asked: %+v, request %q", pending, d.RequestID)
				}
				return
			}
			if len(pending) != 1 || pending[0].ID != d.RequestID || !strings.Contains(pending[0].Console, d.RequestID) {
				t.Errorf("pending events %+v for request %q", pending, d.RequestID)
			}
			if d.State != string(tt.wantState) {
				t.Errorf("state = %q, want %q", d.State, tt.wantState)
			}
		})
	}
	// Every decision was audited, as the external owner.
	ds, err := db.Decisions(ctx, store.AuditFilter{Session: owner.ExternalKey("claude-code", "s1")})
	if err != nil {
		t.Fatal(err)
	}
	// safe, hardline, and two asks recorded twice (gate, then answer).
	if len(ds) != 6 {
		t.Errorf("%d audit records, want 6", len(ds))
	}
}

// TestExternalSessionsApart: a session grant given to one agent's
// session covers that session only; another session, or another agent
// with the same session id, is asked again.
func TestExternalSessionsApart(t *testing.T) {
	c, _ := externalServer(t)
	ctx := t.Context()
	const cmd = "git push --force origin main"
	answered := answerNext(t, c, func(id string) error {
		_, err := c.Approve(ctx, id, ApproveRequest{Scope: "session"})
		return err
	})
	if d, err := c.Decide(ctx, shellReq("A", cmd), nil); err != nil || !d.Allowed {
		t.Fatalf("first ask: %+v, %v", d, err)
	}
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	// The same session: covered by its grant, nobody asked.
	d, err := c.Decide(ctx, shellReq("A", cmd), func(e Event) { t.Errorf("asked again in session A: %+v", e) })
	if err != nil || !d.Allowed || !strings.HasPrefix(d.Rule, "grant.") {
		t.Fatalf("session A again: %+v, %v", d, err)
	}
	others := []ExternalRequest{
		shellReq("B", cmd),
		{Agent: "codex", Session: "A", Action: action.NewShell(cmd).In("/tmp")},
	}
	for _, req := range others {
		answered := answerNext(t, c, func(id string) error {
			_, err := c.Deny(ctx, id, DenyRequest{})
			return err
		})
		asked := false
		d, err := c.Decide(ctx, req, func(Event) { asked = true })
		if err := <-answered; err != nil {
			t.Fatal(err)
		}
		if err != nil || d.Allowed || !asked {
			t.Errorf("%s/%s: %+v, asked %v, %v; want asked and denied", req.Agent, req.Session, d, asked, err)
		}
	}
}

// TestExternalDisconnectWithdraws: a hook that hangs up while its
// question is pending withdraws it; the request is never reported as
// answered.
func TestExternalDisconnectWithdraws(t *testing.T) {
	c, db := externalServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	ids := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		_, err := c.Decide(ctx, shellReq("s1", "git push --force origin main"), func(e Event) { ids <- e.ID })
		done <- err
	}()
	id := <-ids
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Decide after cancel: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := db.GetRequest(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if r.State == store.Withdrawn {
			if !strings.Contains(r.Reason, "disconnected") {
				t.Errorf("withdrawn with reason %q", r.Reason)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("request %s is %s, want withdrawn", id, r.State)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestExternalRun(t *testing.T) {
	c, _ := externalServer(t)
	ctx := t.Context()
	dir := t.TempDir()
	run := func(req ExternalRequest) (out string, end Event, err error) {
		err = c.Run(ctx, req, func(e Event) error {
			switch e.Event {
			case EventStdout, EventStderr:
				out += e.Data
			case EventPending:
				t.Errorf("asked: %+v", e)
			default:
				end = e
			}
			return nil
		})
		return out, end, err
	}
	out, end, err := run(ExternalRequest{Agent: "mcp-test", Session: "s", Action: action.NewShell("echo hello; exit 3").In(dir)})
	if err != nil || out != "hello\n" || end.Event != EventExit || end.Code == nil || *end.Code != 3 {
		t.Errorf("shell: %q, %+v, %v", out, end, err)
	}
	out, end, err = run(ExternalRequest{Agent: "mcp-test", Session: "s", Action: action.NewShell("rm -rf /").In(dir)})
	if err != nil || out != "" || end.Event != EventDenied || end.Rule != gate.RuleHardline || !strings.Contains(end.Message, "warden blocked") {
		t.Errorf("hardline: %q, %+v, %v", out, end, err)
	}
	// A write inside the directory; content arrives whole.
	path := filepath.Join(dir, "notes.txt")
	_, end, err = run(ExternalRequest{Agent: "mcp-test", Session: "s", Action: action.NewWrite(path, 5).In(dir), Content: "hello"})
	if err != nil || end.Event != EventExit {
		t.Fatalf("write: %+v, %v", end, err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "hello" {
		t.Errorf("written: %q, %v", b, err)
	}
}

func TestExternalRequestErrors(t *testing.T) {
	c, _ := externalServer(t)
	ctx := t.Context()
	tests := []struct {
		name string
		req  ExternalRequest
		run  bool
		want string
	}{
		{"no agent", ExternalRequest{Session: "s", Action: action.NewShell("ls")}, false, "no agent name"},
		{"no session", ExternalRequest{Agent: "a", Action: action.NewShell("ls")}, false, "no session id"},
		{"relative dir", ExternalRequest{Agent: "a", Session: "s", Action: action.NewShell("ls").In("rel")}, false, "not absolute"},
		{"invalid action", ExternalRequest{Agent: "a", Session: "s", Action: action.Action{Kind: "teleport"}}, false, "unknown action kind"},
		{"control character in agent", ExternalRequest{Agent: "a\x01", Session: "s", Action: action.NewShell("ls")}, false, "control character"},
		{"backend", ExternalRequest{Agent: "a", Session: "s", Action: action.NewShell("rm -rf build").On("docker")}, false, "cannot name a backend"},
		{"read-only hint", ExternalRequest{Agent: "a", Session: "s", Action: action.NewMCP("srv", "tool", nil, true)}, false, "read-only"},
		{"write without dir", ExternalRequest{Agent: "a", Session: "s", Action: action.NewWrite("/tmp/x", 1)}, true, "needs dir"},
		{"mcp cannot run", ExternalRequest{Agent: "a", Session: "s", Action: action.NewMCP("srv", "tool", nil, false)}, true, "cannot run a mcp action"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.run {
				err = c.Run(ctx, tt.req, func(e Event) error { t.Errorf("event %+v", e); return nil })
			} else {
				_, err = c.Decide(ctx, tt.req, nil)
			}
			if apiStatus(err) != http.StatusBadRequest || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v (status %d), want 400 with %q", err, apiStatus(err), tt.want)
			}
		})
	}
}
