package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
)

// observedStore lets a test count the host's request creations.
type observedStore struct {
	store.Store
	creates atomic.Int64
}

func (o *observedStore) CreateRequest(ctx context.Context, r store.Request) error {
	o.creates.Add(1)
	return o.Store.CreateRequest(ctx, r)
}

// TestInvariant08_AuditedBeforeItRuns: every decision about a command is
// durably in the audit log before the command runs. The command creates
// a file; at each commit that holds its records (the store's commit
// hook, called after the transaction is durable and before any writer of
// the batch is answered) the file must not exist yet. Both paths are
// covered: a safe command (one record, allow) and a dangerous one that a
// human approves (ask, written with the request, then the human's allow,
// written in the transaction that ends it; both carry the request id).
func TestInvariant08_AuditedBeforeItRuns(t *testing.T) {
	cfg := newConfig(t)
	work := t.TempDir()
	var (
		mu      sync.Mutex
		watched string // the marker file of the command in flight
		seen    []store.Decision
	)
	committed := func(recs []store.Decision) {
		mu.Lock()
		defer mu.Unlock()
		if watched == "" {
			return
		}
		for _, d := range recs {
			if _, err := os.Stat(watched); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("audit record %q (%s %s) committed: %s already exists: the command ran first", d.Payload, d.Verdict, d.Rule, filepath.Base(watched))
			}
			seen = append(seen, d)
		}
	}
	cfg.tune = func(o *sqlite.Options) { o.Committed = committed }
	th := startHost(t, cfg)

	run := func(marker, command string, approve bool) {
		t.Helper()
		mu.Lock()
		watched, seen = filepath.Join(work, marker), nil
		mu.Unlock()
		s := startExec(t.Context(), th.client, localapi.ExecRequest{Session: "inv8", Command: command, Dir: work})
		if approve {
			p, _ := s.until(t, localapi.EventPending)
			if _, err := os.Stat(watched); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s exists while its question is pending", marker)
			}
			if _, err := th.client.Approve(t.Context(), p.ID, localapi.ApproveRequest{}); err != nil {
				t.Fatal(err)
			}
		}
		e, _ := s.until(t, localapi.EventExit)
		if *e.Code != 0 {
			t.Fatalf("%s: exit %d", command, *e.Code)
		}
		if _, err := os.Stat(watched); err != nil {
			t.Fatalf("%s did not run: %v", command, err)
		}
		mu.Lock()
		defer mu.Unlock()
		want := []string{"allow"}
		if approve {
			want = []string{"ask", "allow"}
		}
		if len(seen) != len(want) {
			t.Fatalf("%s: %d audit records, want %d: %+v", command, len(seen), len(want), seen)
		}
		for i, d := range seen {
			if d.Verdict != want[i] || d.Payload != command {
				t.Errorf("%s: record %d is %s %q, want %s", command, i, d.Verdict, d.Payload, want[i])
			}
			if approve && (d.RequestID == "" || d.RequestID != seen[0].RequestID) {
				t.Errorf("%s: record %d has request id %q, want the question's", command, i, d.RequestID)
			}
		}
		watched = ""
	}
	run("safe-ran", "touch safe-ran", false)
	run("approved-ran", "rm -rf build && touch approved-ran", true)

	// The chain the host wrote verifies.
	if res, err := th.client.Verify(t.Context()); err != nil || !res.OK || res.Records != 3 {
		t.Fatalf("verify: %+v %v", res, err)
	}
}

// TestInvariant09_NeverParkAQuestionNobodyCanAnswer: owners without an
// answer channel — a single-query run, an API caller, a cron run, and a
// sub-agent of a cron run — get their dangerous action decided by their
// mode at once: no request is created, nobody waits, and it is far
// quicker than the approval timeout (an hour here).
func TestInvariant09_NeverParkAQuestionNobodyCanAnswer(t *testing.T) {
	cfg := configured(t, "approvals:\n  timeout: 3600\n  kanban_mode: approve\n")
	obs := &observedStore{}
	cfg.wrap = func(s store.Store) store.Store { obs.Store = s; return obs }
	th := startHost(t, cfg)
	if got := th.gate.Policy().Timeout; got != time.Hour {
		t.Fatalf("timeout %v, want 1h", got)
	}
	events := th.broker.Watch(t.Context(), "")

	must := func(o owner.Owner, err error) owner.Owner {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	cronRun := must(owner.Cron("nightly", "r1"))
	kanban := must(owner.Kanban("", "T1", "r1"))
	owners := map[string]struct {
		o    owner.Owner
		want gate.Verdict
	}{
		"single_query":  {must(owner.SingleQuery().WithSession("sq")), gate.Deny},
		"api":           {must(owner.API().WithSession("api")), gate.Deny},
		"cron":          {cronRun, gate.Deny},
		"kanban":        {kanban, gate.Allow}, // kanban_mode: approve, at once
		"cron subagent": {must(must(must(owner.Subagent("sub")).WithParent(cronRun)).WithChannel(fakeChannel{})), gate.Deny},
	}
	dangerous := action.NewShell("rm -rf build").In(t.TempDir())
	for name, tc := range owners {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(owner.With(t.Context(), tc.o), 5*time.Second)
			defer cancel()
			start := time.Now()
			out, err := th.runner.Authorize(broker.WithNotify(ctx, func(store.Request) { t.Error("a request was created") }), dangerous)
			took := time.Since(start)
			if err != nil {
				t.Fatalf("authorize: %v", err)
			}
			if out.Decision.Verdict != tc.want || out.Request != nil || out.Allowed != (tc.want == gate.Allow) {
				t.Fatalf("decision %s (%s), request %v, allowed %v; want %s without a request", out.Decision.Verdict, out.Decision.Rule, out.Request, out.Allowed, tc.want)
			}
			if took > time.Second {
				t.Fatalf("took %v: an unattended owner waited", took)
			}
			// The broker itself refuses to park it.
			if _, err := th.broker.Ask(ctx, broker.Question{Owner: tc.o, Action: dangerous}); !errors.Is(err, broker.ErrNoChannel) {
				t.Fatalf("broker.Ask: %v, want ErrNoChannel", err)
			}
		})
	}
	if n := obs.creates.Load(); n != 0 {
		t.Fatalf("%d request rows created", n)
	}
	if p, err := th.broker.Pending(t.Context(), ""); err != nil || len(p) != 0 {
		t.Fatalf("pending: %v %v", p, err)
	}
	select {
	case e := <-events:
		t.Fatalf("broker event %s for %s", e.Type, e.Request.ID)
	default:
	}
	recs, err := th.st.Decisions(t.Context(), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(owners) {
		t.Fatalf("%d audit records, want %d", len(recs), len(owners))
	}
	for _, r := range recs {
		if r.RequestID != "" || r.Verdict == string(gate.Ask) {
			t.Errorf("record %d: %s request %q", r.Seq, r.Verdict, r.RequestID)
		}
	}
}

// fakeChannel is an answer channel attached where one cannot help: to
// a sub-agent whose lineage is unattended.
type fakeChannel struct{}

func (fakeChannel) Surface() string { return "test" }

// TestInvariant04_AnswersGoHome: two sessions each have a pending
// request. Answering one (through the admin API, as the console and
// warden approvals do) ends only that one and wakes only its waiter;
// resolving "all of session A" leaves B alone; a watcher of session A
// never sees B's events.
func TestInvariant04_AnswersGoHome(t *testing.T) {
	th := startHost(t, newConfig(t))
	watchCtx, stopWatch := context.WithCancel(t.Context())
	defer stopWatch()
	watchA := th.broker.Watch(watchCtx, "A")
	work := t.TempDir()

	a := startExec(t.Context(), th.client, localapi.ExecRequest{Session: "A", Command: "rm -rf a-build", Dir: work})
	b := startExec(t.Context(), th.client, localapi.ExecRequest{Session: "B", Command: "rm -rf b-build", Dir: work})
	pa, _ := a.until(t, localapi.EventPending)
	pb, _ := b.until(t, localapi.EventPending)

	// The same command in both sessions is still two questions.
	a2 := startExec(t.Context(), th.client, localapi.ExecRequest{Session: "A", Command: "rm -rf shared", Dir: work})
	b2 := startExec(t.Context(), th.client, localapi.ExecRequest{Session: "B", Command: "rm -rf shared", Dir: work})
	pa2, _ := a2.until(t, localapi.EventPending)
	pb2, _ := b2.until(t, localapi.EventPending)
	if pa2.ID == pb2.ID {
		t.Fatal("identical commands of two sessions coalesced into one request")
	}

	if _, err := th.client.Approve(t.Context(), pa.ID, localapi.ApproveRequest{}); err != nil {
		t.Fatal(err)
	}
	if e, _ := a.until(t, localapi.EventExit); *e.Code != 0 {
		t.Fatalf("A: exit %d", *e.Code)
	}
	// A's answer and "everything of A" leave B waiting.
	if _, err := th.broker.ResolveAll(t.Context(), "A", broker.Answer{Approve: false, Reason: "not now", By: "test", Surface: "test"}); err != nil {
		t.Fatal(err)
	}
	if e, _ := a2.until(t, localapi.EventDenied); e.State != string(store.Denied) {
		t.Fatalf("A's second request: %+v", e)
	}
	select {
	case e := <-b.events:
		t.Fatalf("B woke after A's answers: %+v", e)
	case e := <-b2.events:
		t.Fatalf("B woke after A's answers: %+v", e)
	case <-time.After(300 * time.Millisecond):
	}
	for _, id := range []string{pb.ID, pb2.ID} {
		r, err := th.st.GetRequest(t.Context(), id)
		if err != nil || r.State != store.Pending {
			t.Fatalf("B's request %s: %s %v", id, r.State, err)
		}
	}
	pendB, err := th.broker.Pending(t.Context(), "B")
	if err != nil || len(pendB) != 2 {
		t.Fatalf("B pending: %d %v", len(pendB), err)
	}

	if _, err := th.client.Deny(t.Context(), pb.ID, localapi.DenyRequest{Reason: "B's own reason"}); err != nil {
		t.Fatal(err)
	}
	if e, _ := b.until(t, localapi.EventDenied); e.State != string(store.Denied) {
		t.Fatalf("B: %+v", e)
	}
	if _, err := th.client.Approve(t.Context(), pb2.ID, localapi.ApproveRequest{}); err != nil {
		t.Fatal(err)
	}
	b2.until(t, localapi.EventExit)

	stopWatch()
	n := 0
	for e := range watchA {
		n++
		if e.Request.Session != "A" {
			t.Errorf("session A's watcher saw %s of session %s (%s)", e.Type, e.Request.Session, e.Request.ID)
		}
	}
	if n != 4 { // two created, two ended
		t.Errorf("session A's watcher saw %d events, want 4", n)
	}
}
