package workerapi

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/board"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/execenv"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/owner/ownertest"
	"github.com/wardenhq/warden/internal/runner/runnertest"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/tools"
)

// askEnv is a worker socket on a host whose runner has a broker, so a
// question can be parked, and whose Attend hands out the console
// channel while console is set.
type askEnv struct {
	*env
	broker  *broker.Broker
	console atomic.Pointer[ownertest.Channel]
	attends atomic.Int64
}

func newAskEnv(t *testing.T, policy string) *askEnv {
	t.Helper()
	rf := runnertest.New(t, runnertest.Options{Policy: policy, Paths: gate.Paths{Home: t.TempDir()}, Ask: time.Hour,
		Terminal: tools.Terminal{Env: execenv.Build([]string{"PATH=/usr/bin:/bin"}, nil, nil)}})
	a := &askEnv{broker: rf.Broker}
	ch := ownertest.Channel("web")
	a.console.Store(&ch)
	a.env = &env{db: rf.DB, socket: filepath.Join(rf.Dir, "run", SocketName), state: rf.Dir, cron: &fakeCron{}}
	o := Options{Board: board.New(board.Options{Store: rf.DB}), Runner: rf.Runner, Cron: a.cron, ScratchDir: filepath.Join(rf.Dir, "scratch"), FailureLimit: 2,
		Attend: func() owner.AnswerChannel {
			a.attends.Add(1)
			c := a.console.Load()
			if c == nil || rf.Gate.Policy().KanbanMode.String() != "ask" {
				return nil
			}
			return *c
		}}
	serve(t, a.socket, o)
	return a
}

// pending waits for session's one pending request.
func (a *askEnv) pending(t *testing.T, session string) store.Request {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ps, err := a.broker.Pending(t.Context(), session)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) == 1 {
			return ps[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pending request of %s", session)
	return store.Request{}
}

type decided struct {
	d   Decision
	err error
}

func decideAsync(ctx context.Context, c *Client, command string) <-chan decided {
	ch := make(chan decided, 1)
	go func() {
		d, err := c.Decide(ctx, command)
		ch <- decided{d, err}
	}()
	return ch
}

// TestKanbanAskPutsTheStepToTheConsole: under kanban_mode ask a
// dangerous step waits for the human on the host's console; an approval
// lets it run, a denial records the step denied with the human's reason;
// the question is the run's, in the run's session, and the worker's
// connection has no way to answer it.
func TestKanbanAskPutsTheStepToTheConsole(t *testing.T) {
	a := newAskEnv(t, "approvals:\n  kanban_mode: ask\n")
	ctx := t.Context()
	tk, r, secret := a.claimed(t, os.Getpid(), "true")
	c := a.dial(t)
	h, err := c.Hello(ctx, secret, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The hello tells the worker its owner by notation only: no channel,
	// no surface, nothing of the console.
	if strings.Contains(h.Owner, "web") || strings.Contains(h.Owner, "@") {
		t.Errorf("hello owner %q names the channel", h.Owner)
	}

	wait := decideAsync(ctx, c, "rm -rf build/")
	req := a.pending(t, "kanban:"+tk.ID)
	if !strings.HasPrefix(req.OwnerText, "kanban:"+tk.ID) || !strings.Contains(req.OwnerText, "run="+r.ID) || req.Action.Payload() != "rm -rf build/" {
		t.Errorf("request %+v", req)
	}
	if _, err := a.broker.Resolve(ctx, req.ID, broker.Answer{Approve: true, Scope: store.Once, By: "operator", Surface: "web"}); err != nil {
		t.Fatal(err)
	}
	got := <-wait
	if got.err != nil || !got.d.Allowed || got.d.Rule != gate.RuleHuman {
		t.Fatalf("approved: %+v, %v", got.d, got.err)
	}
	if _, err := c.Step(ctx, "rm -rf build/", 0, ""); err != nil {
		t.Fatal(err)
	}

	wait = decideAsync(ctx, c, "rm -rf dist/")
	req = a.pending(t, "kanban:"+tk.ID)
	if _, err := a.broker.Resolve(ctx, req.ID, broker.Answer{Reason: "not this one", By: "operator", Surface: "web"}); err != nil {
		t.Fatal(err)
	}
	got = <-wait
	if got.err != nil || got.d.Allowed || !strings.Contains(got.d.Message, "not this one") {
		t.Fatalf("denied: %+v, %v", got.d, got.err)
	}
	run, err := a.db.GetRun(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Steps) != 2 || run.Steps[0].Verdict != "allow" || run.Steps[0].Rule != gate.RuleHuman ||
		run.Steps[1].Verdict != "deny" || run.Steps[1].ExitCode != -1 {
		t.Errorf("history: %+v", run.Steps)
	}
}

// TestKanbanAskWorkerCannotAnswer: while its question waits, the
// worker's connection can send nothing that answers it: no verb does,
// and a request with fields beyond the protocol (an "answer", an
// owner, a channel) is refused and ends the connection, which withdraws
// the question; the step did not run.
func TestKanbanAskWorkerCannotAnswer(t *testing.T) {
	a := newAskEnv(t, "approvals:\n  kanban_mode: ask\n")
	ctx := t.Context()
	tk, r, secret := a.claimed(t, os.Getpid(), "true")

	// A raw connection: the worker writes what it likes.
	raw, err := net.Dial("unix", a.socket)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rd := bufio.NewReader(raw)
	send := func(v any) {
		t.Helper()
		b, _ := json.Marshal(v)
		if _, err := raw.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	send(map[string]any{"id": 1, "verb": "hello", "token": secret, "task": tk.ID})
	if line, err := rd.ReadBytes('\n'); err != nil || !strings.Contains(string(line), `"ok":true`) {
		t.Fatalf("hello: %s %v", line, err)
	}
	send(map[string]any{"id": 2, "verb": "decide", "command": "rm -rf build/"})
	req := a.pending(t, "kanban:"+tk.ID)
	// The connection handles one request at a time: these wait behind
	// the decision and cannot reach it; the one with foreign fields is
	// refused as malformed when its turn comes.
	send(map[string]any{"id": 3, "verb": "answer", "request": req.ID, "approve": true})
	send(map[string]any{"id": 0, "verb": "heartbeat"})
	time.Sleep(100 * time.Millisecond)
	if p, err := a.db.GetRequest(ctx, req.ID); err != nil || p.State != store.Pending {
		t.Fatalf("request after the worker's tries: %+v %v", p, err)
	}
	// The operator denies; the worker hears a denial, then its bogus
	// request is refused and the connection closed.
	if _, err := a.broker.Resolve(ctx, req.ID, broker.Answer{By: "operator", Surface: "web"}); err != nil {
		t.Fatal(err)
	}
	var replies []string
	for {
		line, err := rd.ReadBytes('\n')
		if err != nil {
			break
		}
		replies = append(replies, string(line))
	}
	if len(replies) < 2 || !strings.Contains(replies[0], `"allowed":false`) || !strings.Contains(replies[len(replies)-1], "malformed request") {
		t.Errorf("replies: %q", replies)
	}
	p, _ := a.db.GetRequest(ctx, req.ID)
	if p.State != store.Denied || p.By != "operator" {
		t.Errorf("request ended %s by %q", p.State, p.By)
	}
	run, _ := a.db.GetRun(ctx, r.ID)
	if len(run.Steps) != 1 || run.Steps[0].Verdict != "deny" {
		t.Errorf("history: %+v", run.Steps)
	}
}

// TestKanbanAskWithoutConsole: kanban_mode ask on a host that hands out
// no console (Attend gives nil) parks nothing: the step is denied at
// once, no request row is created. A reload to deny takes the console
// away for the next step of a run already going.
func TestKanbanAskWithoutConsole(t *testing.T) {
	a := newAskEnv(t, "approvals:\n  kanban_mode: ask\n  timeout: 3600\n")
	a.console.Store(nil)
	ctx := t.Context()
	tk, r, secret := a.claimed(t, os.Getpid(), "true")
	c := a.dial(t)
	if _, err := c.Hello(ctx, secret, tk.ID); err != nil {
		t.Fatal(err)
	}
	events := a.broker.Watch(ctx, "")
	start := time.Now()
	d, err := c.Decide(ctx, "rm -rf build/")
	if err != nil || d.Allowed || d.Rule != gate.RuleKanbanMode {
		t.Fatalf("decide: %+v, %v", d, err)
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("took %v: something waited", time.Since(start))
	}
	select {
	case e := <-events:
		t.Fatalf("a request was created: %s %s", e.Type, e.Request.ID)
	default:
	}
	if a.attends.Load() == 0 {
		t.Error("Attend was never asked")
	}
	recs, err := a.db.Decisions(ctx, store.AuditFilter{})
	if err != nil || len(recs) != 1 || recs[0].RequestID != "" || recs[0].Verdict != "deny" {
		t.Errorf("audit: %+v %v", recs, err)
	}
	run, _ := a.db.GetRun(ctx, r.ID)
	if len(run.Steps) != 1 || run.Steps[0].Verdict != "deny" {
		t.Errorf("history: %+v", run.Steps)
	}
}

// TestKanbanAskTimeout: nobody answers by approvals.timeout: the step is
// denied (expired, never reported as the human's denial) and not run.
func TestKanbanAskTimeout(t *testing.T) {
	a := newAskEnv(t, "approvals:\n  kanban_mode: ask\n  timeout: 1\n")
	ctx := t.Context()
	tk, r, secret := a.claimed(t, os.Getpid(), "true")
	c := a.dial(t)
	if _, err := c.Hello(ctx, secret, tk.ID); err != nil {
		t.Fatal(err)
	}
	d, err := c.Decide(ctx, "rm -rf build/")
	if err != nil || d.Allowed || !strings.Contains(d.Message, "Nobody answered") {
		t.Fatalf("decide: %+v, %v", d, err)
	}
	ps, err := a.db.Decisions(ctx, store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var id string
	for _, p := range ps {
		id = p.RequestID
	}
	req, err := a.db.GetRequest(ctx, id)
	if err != nil || req.State != store.Expired {
		t.Errorf("request %+v %v, want expired", req, err)
	}
	run, _ := a.db.GetRun(ctx, r.ID)
	if len(run.Steps) != 1 || run.Steps[0].Verdict != "deny" {
		t.Errorf("history: %+v", run.Steps)
	}
	if _, err := c.Step(ctx, "rm -rf build/", 0, ""); err == nil || !strings.Contains(err.Error(), "no allowed") {
		t.Errorf("reporting the expired step: %v, want bad request", err)
	}
}
