package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/store"
)

// request is a pending request fixture.
func request(id, session, host string, created time.Time) store.Request {
	return store.Request{
		ID:        id,
		Session:   session,
		Owner:     json.RawMessage(`{"kind":"web","session":"` + session + `","parent":{"kind":"cli"}}`),
		OwnerText: "web:" + session + " < cli",
		Action:    action.NewShell("rm -rf build").In("/src"),
		Digest:    "digest-" + id,
		Classes:   []string{"delete.recursive"},
		Analysis:  json.RawMessage(`{"findings":[{"class":"delete.recursive","span":[0,6]}]}`),
		Rule:      "ask.attended",
		Notice:    "the reviewer is unreachable",
		Created:   created,
		Deadline:  created.Add(5 * time.Minute),
		Host:      host,
		State:     store.Pending,
	}
}

func normRequest(r store.Request) store.Request {
	r.Created, r.Deadline, r.Resolved = utc(r.Created), utc(r.Deadline), utc(r.Resolved)
	return r
}

func sameRequest(t *testing.T, what string, got, want store.Request) {
	t.Helper()
	same(t, what, normRequest(got), normRequest(want))
}

func ids(rs []store.Request) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

// wantState fails t unless the request id reads back in state want.
func wantState(t *testing.T, s store.Store, id string, want store.State) {
	t.Helper()
	got, err := s.GetRequest(t.Context(), id)
	must(t, "GetRequest", err)
	if got.State != want {
		t.Errorf("request %s is %q, want %q", id, got.State, want)
	}
}

// readsBack reads the request want.ID, fails t unless it reads as want,
// and returns it.
func readsBack(t *testing.T, s store.Store, what string, want store.Request) store.Request {
	t.Helper()
	got, err := s.GetRequest(t.Context(), want.ID)
	must(t, "GetRequest", err)
	sameRequest(t, what, got, want)
	return got
}

// ended is r as it reads after res.
func ended(r store.Request, res store.Resolution) store.Request {
	r.State, r.Scope, r.Grain = res.State, res.Scope, res.Grain
	r.By, r.Surface, r.Reason, r.Resolved = res.By, res.Surface, res.Reason, res.At
	r.Content = res.Content
	return r
}

var requestTests = []test{
	{"elicitation round trip", func(t *testing.T, s store.Store) {
		ctx := t.Context()
		r := request("e1", "s1", "h1", base)
		r.Action = action.NewMCP("files", "confirm_delete", nil, false)
		r.Elicit = &store.Elicitation{Server: "files", Message: "Delete 3 files?", Schema: json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}}}`)}
		must(t, "create", s.CreateRequest(ctx, r))
		readsBack(t, s, "pending elicitation", r)
		res := store.Resolution{State: store.Answered, Scope: store.Once, By: "ana", Surface: "web", At: base.Add(time.Second), Content: json.RawMessage(`{"confirm":true}`)}
		end, err := s.ResolveRequest(ctx, "e1", res)
		must(t, "resolve", err)
		sameRequest(t, "accepted elicitation", end, ended(r, res))
		readsBack(t, s, "accepted elicitation read back", ended(r, res))
	}},
	{"content only with answered", func(t *testing.T, s store.Store) {
		ctx := t.Context()
		must(t, "create", s.CreateRequest(ctx, request("e2", "s1", "h1", base)))
		_, err := s.ResolveRequest(ctx, "e2", store.Resolution{State: store.Denied, At: base.Add(time.Second), Content: json.RawMessage(`{"x":1}`)})
		if err == nil {
			t.Fatal("a denial with content was accepted")
		}
		wantState(t, s, "e2", store.Pending)
	}},
	{"a human answer at or after the deadline is refused", func(t *testing.T, s store.Store) {
		ctx := t.Context()
		r := request("late", "a", "h1", base)
		must(t, "CreateRequest", s.CreateRequest(ctx, r))
		for _, st := range []store.State{store.Answered, store.Denied} {
			got, err := s.ResolveRequest(ctx, "late", store.Resolution{State: st, Scope: store.Once, By: "x", At: r.Deadline})
			if !errors.Is(err, store.ErrNotPending) || got.State != store.Pending {
				t.Fatalf("%s at the deadline: %v, state %s", st, err, got.State)
			}
		}
		got, err := s.ResolveRequest(ctx, "late", store.Resolution{State: store.Expired, At: r.Deadline})
		if err != nil || got.State != store.Expired {
			t.Fatalf("expiry: %v %s", err, got.State)
		}
	}},
	{"create and get", func(t *testing.T, s store.Store) {
		ctx := t.Context()
		r := request("r1", "a", "h1", base.In(elsewhere))
		r.Action = action.NewMCP("fs", "delete", json.RawMessage(`{"path": "/x"}`), false)
		must(t, "CreateRequest", s.CreateRequest(ctx, r))
		got := readsBack(t, s, "GetRequest", r)
		if !got.Created.Equal(r.Created) || !got.Deadline.Equal(r.Deadline) {
			t.Errorf("times: got %v, %v; want %v, %v", got.Created, got.Deadline, r.Created, r.Deadline)
		}
	}},
	{"nil and empty fields", func(t *testing.T, s store.Store) {
		ctx := t.Context()
		r := store.Request{ID: "r1", Session: "a", Created: base, Deadline: base.Add(time.Second)}
		must(t, "CreateRequest", s.CreateRequest(ctx, r))
		r.State = store.Pending
		got := readsBack(t, s, "GetRequest", r)
		if got.Classes != nil || got.Owner != nil || got.Analysis != nil {
			t.Errorf("nil fields came back as %q, %q, %q", got.Classes, got.Owner, got.Analysis)
		}

		r2 := store.Request{ID: "r2", Session: "a", Classes: []string{}, Created: base, Deadline: base}
		must(t, "CreateRequest", s.CreateRequest(ctx, r2))
		got, err := s.GetRequest(ctx, "r2")
		must(t, "GetRequest", err)
		if got.Classes == nil || len(got.Classes) != 0 {
			t.Errorf("empty classes came back as %#v", got.Classes)
		}
	}},
	{"create refuses a duplicate id", func(t *testing.T, s store.Store) {
		ctx := t.Context()
		r := request("r1", "a", "h1", base)
		must(t, "CreateRequest", s.CreateRequest(ctx, r))
		dup := request("r1", "b", "h2", base.Add(time.Hour))
		if err := s.CreateRequest(ctx, dup); err == nil {
			t.Fatal("second CreateRequest with the same id: no error")
		}
		readsBack(t, s, "after the duplicate", r)
	}},
	{"create starts pending", func(t *testing.T, s store.Store) {
		ctx := t.Context()
		r := request("r1", "a", "h1", base)
		r.State = ""
		must(t, "CreateRequest", s.CreateRequest(ctx, r))
		wantState(t, s, "r1", store.Pending)
		r2 := request("r2", "a", "h1", base)
		r2.State = store.Answered
		if err := s.CreateRequest(ctx, r2); err == nil {
			t.Error("CreateRequest of an answered request: no error")
		}
	}},
	{"get unknown", func(t *testing.T, s store.Store) {
		_, err := s.GetRequest(t.Context(), "nope")
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetRequest(unknown) = %v, want ErrNotFound", err)
		}
	}},
	{"pending oldest first", func(t *testing.T, s store.Store) {
		ctx := t.Context()
		for _, r := range []store.Request{
			request("r3", "a", "h1", base.Add(3*time.Second)),
			request("r1", "a", "h1", base.Add(1*time.Second).In(elsewhere)),
			request("r2", "b", "h1", base.Add(2*time.Second)),
			request("r0", "a", "h1", base),
		} {
			must(t, "CreateRequest "+r.ID, s.CreateRequest(ctx, r))
		}
		_, err := s.ResolveRequest(ctx, "r0", store.Resolution{State: store.Expired, At: base.Add(time.Minute)})
		must(t, "ResolveRequest", err)
		for _, tc := range []struct {
			session string
			want    []string
		}{
			{"", []string{"r1", "r2", "r3"}},
			{"a", []string{"r1", "r3"}},
			{"b", []string{"r2"}},
			{"c", []string{}},
		} {
			got, err := s.PendingRequests(ctx, tc.session)
			must(t, "PendingRequests", err)
			same(t, fmt.Sprintf("PendingRequests(%q)", tc.session), ids(got), tc.want)
		}
		got, err := s.PendingRequests(ctx, "b")
		must(t, "PendingRequests", err)
		if len(got) == 1 {
			sameRequest(t, "pending row", got[0], request("r2", "b", "h1", base.Add(2*time.Second)))
		}
	}},
	{"resolve ends once", func(t *testing.T, s store.Store) {
		for _, res := range []store.Resolution{
			{State: store.Answered, Scope: store.Always, Grain: grant.Prefix, By: "ann", Surface: "web", At: base.Add(time.Minute).In(elsewhere)},
			{State: store.Answered, Scope: store.Once, Grain: grant.Exact, By: "ann", Surface: "terminal", At: base.Add(time.Minute)},
			{State: store.Denied, By: "bob", Surface: "telegram", Reason: "not on prod", At: base.Add(time.Minute)},
			{State: store.Expired, At: base.Add(5 * time.Minute)},
			{State: store.Withdrawn, Reason: "session ended", At: base.Add(time.Second)},
		} {
			t.Run(string(res.State)+"/"+string(res.Scope), func(t *testing.T) {
				ctx := t.Context()
				id := "r-" + string(res.State) + string(res.Scope)
				r := request(id, "a", "h1", base)
				must(t, "CreateRequest", s.CreateRequest(ctx, r))
				got, err := s.ResolveRequest(ctx, id, res)
				must(t, "ResolveRequest", err)
				want := ended(r, res)
				sameRequest(t, "ResolveRequest", got, want)
				if !got.Resolved.Equal(res.At) {
					t.Errorf("Resolved %v, want %v", got.Resolved, res.At)
				}
				readsBack(t, s, "GetRequest after resolve", want)

				late := store.Resolution{State: store.Answered, Scope: store.Once, By: "late", Surface: "web", At: base.Add(time.Hour)}
				again, err := s.ResolveRequest(ctx, id, late)
				if !errors.Is(err, store.ErrNotPending) {
					t.Fatalf("second ResolveRequest = %v, want ErrNotPending", err)
				}
				sameRequest(t, "row returned with ErrNotPending", again, want)
				readsBack(t, s, "GetRequest after late answer", want)
			})
		}
	}},
	{"resolve unknown", func(t *testing.T, s store.Store) {
		_, err := s.ResolveRequest(t.Context(), "nope", store.Resolution{State: store.Answered, Scope: store.Once, At: base})
		if !errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrNotPending) {
			t.Errorf("ResolveRequest(unknown) = %v, want ErrNotFound", err)
		}
	}},
	{"resolve refuses a state that is not an end", func(t *testing.T, s store.Store) {
		ctx := t.Context()
		must(t, "CreateRequest", s.CreateRequest(ctx, request("r1", "a", "h1", base)))
		for _, st := range []store.State{"", store.Pending, "approved"} {
			if _, err := s.ResolveRequest(ctx, "r1", store.Resolution{State: st, At: base}); err == nil {
				t.Errorf("ResolveRequest to %q: no error", st)
			}
		}
		wantState(t, s, "r1", store.Pending)
	}},
	{"resolve with zero time means now", func(t *testing.T, s store.Store) {
		ctx := t.Context()
		must(t, "CreateRequest", s.CreateRequest(ctx, request("r1", "a", "h1", base)))
		before := time.Now()
		got, err := s.ResolveRequest(ctx, "r1", store.Resolution{State: store.Expired})
		must(t, "ResolveRequest", err)
		after := time.Now()
		if got.Resolved.Before(before.Add(-time.Second)) || got.Resolved.After(after.Add(time.Second)) {
			t.Errorf("Resolved %v, want about now (%v)", got.Resolved, before)
		}
	}},
	{"resolve races: exactly one of 50 wins", func(t *testing.T, s store.Store) {
		ctx := t.Context()
		r := request("r1", "a", "h1", base)
		must(t, "CreateRequest", s.CreateRequest(ctx, r))
		const n = 50
		type result struct {
			r   store.Request
			err error
		}
		results := make([]result, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				<-start
				res := store.Resolution{State: store.Answered, Scope: store.Once, By: fmt.Sprintf("human-%d", i), Surface: "web", At: base.Add(time.Duration(i) * time.Millisecond)}
				if i%2 == 1 {
					res = store.Resolution{State: store.Denied, By: fmt.Sprintf("human-%d", i), Reason: "no", At: base.Add(time.Duration(i) * time.Millisecond)}
				}
				got, err := s.ResolveRequest(ctx, "r1", res)
				results[i] = result{got, err}
			})
		}
		close(start)
		wg.Wait()
		var winners []int
		for i, res := range results {
			switch {
			case res.err == nil:
				winners = append(winners, i)
			case !errors.Is(res.err, store.ErrNotPending):
				t.Errorf("resolver %d: %v, want nil or ErrNotPending", i, res.err)
			}
		}
		if len(winners) != 1 {
			t.Fatalf("%d resolvers won (%v), want exactly 1", len(winners), winners)
		}
		win := results[winners[0]].r
		if win.By != fmt.Sprintf("human-%d", winners[0]) {
			t.Errorf("winner %d got the row of %q", winners[0], win.By)
		}
		for i, res := range results {
			if res.err != nil {
				sameRequest(t, fmt.Sprintf("loser %d's row", i), res.r, win)
			}
		}
		readsBack(t, s, "stored row", win)
	}},
	{"withdraw other hosts' pending requests", func(t *testing.T, s store.Store) {
		ctx := t.Context()
		for _, r := range []store.Request{
			request("old1", "a", "h-old", base),
			request("old2", "b", "h-older", base.Add(time.Second)),
			request("old-answered", "a", "h-old", base.Add(2*time.Second)),
			request("mine", "a", "h-new", base.Add(3*time.Second)),
		} {
			must(t, "CreateRequest "+r.ID, s.CreateRequest(ctx, r))
		}
		answer := store.Resolution{State: store.Answered, Scope: store.Session, Grain: grant.Exact, By: "ann", Surface: "web", At: base.Add(time.Minute)}
		answered, err := s.ResolveRequest(ctx, "old-answered", answer)
		must(t, "ResolveRequest", err)

		cause := store.Resolution{Reason: "host restarted", At: base.Add(time.Hour)}
		n, err := s.WithdrawHostRequests(ctx, "h-new", cause)
		must(t, "WithdrawHostRequests", err)
		if n != 2 {
			t.Errorf("withdrew %d, want 2", n)
		}
		for _, id := range []string{"old1", "old2"} {
			got, err := s.GetRequest(ctx, id)
			must(t, "GetRequest", err)
			if got.State != store.Withdrawn || got.Reason != "host restarted" || !got.Resolved.Equal(cause.At) {
				t.Errorf("%s: state %q reason %q resolved %v, want withdrawn, %q, %v", id, got.State, got.Reason, got.Resolved, cause.Reason, cause.At)
			}
		}
		readsBack(t, s, "an ended request is left alone", answered)
		pending, err := s.PendingRequests(ctx, "")
		must(t, "PendingRequests", err)
		same(t, "still pending", ids(pending), []string{"mine"})

		n, err = s.WithdrawHostRequests(ctx, "h-new", cause)
		must(t, "WithdrawHostRequests again", err)
		if n != 0 {
			t.Errorf("second withdraw: %d, want 0", n)
		}
		if _, err := s.WithdrawHostRequests(ctx, "h-new", store.Resolution{State: store.Answered}); err == nil {
			t.Error("WithdrawHostRequests with state answered: no error")
		}
	}},
}

// lifecycleTests: every state change of a request writes its audit
// record with it (asked, answered, denied, expired, withdrawn, withdrawn
// at restart), carrying the request id; a refused change writes none.
var lifecycleTests = []test{
	{"every transition is audited with the request id", func(t *testing.T, s store.Store) {
		ctx := t.Context()
		type want struct {
			id, verdict, rule, by string
		}
		var wants []want
		create := func(r store.Request) {
			t.Helper()
			must(t, "CreateRequest "+r.ID, s.CreateRequest(ctx, r))
			wants = append(wants, want{r.ID, "ask", r.Rule, ""})
		}
		for _, tc := range []struct {
			id      string
			res     store.Resolution
			verdict string
			rule    string
		}{
			{"once", store.Resolution{State: store.Answered, Scope: store.Once, By: "ann", Surface: "web", At: base.Add(time.Second)}, "allow", "human.once"},
			{"always", store.Resolution{State: store.Answered, Scope: store.Always, Grain: grant.Prefix, By: "ann", Surface: "web", At: base.Add(time.Second)}, "allow", "human.always"},
			{"denied", store.Resolution{State: store.Denied, By: "bob", Reason: "no", At: base.Add(time.Second)}, "deny", "human.denied"},
			{"expired", store.Resolution{State: store.Expired, At: base.Add(time.Hour)}, "deny", "human.expired"},
			{"withdrawn", store.Resolution{State: store.Withdrawn, Reason: "session ended", At: base.Add(time.Second)}, "deny", "human.withdrawn"},
		} {
			create(request(tc.id, "a", "h1", base))
			if _, err := s.ResolveRequest(ctx, tc.id, tc.res); err != nil {
				t.Fatalf("resolve %s: %v", tc.id, err)
			}
			wants = append(wants, want{tc.id, tc.verdict, tc.rule, tc.res.By})
			// A late answer changes nothing and writes nothing.
			if _, err := s.ResolveRequest(ctx, tc.id, store.Resolution{State: store.Answered, Scope: store.Once, At: base.Add(2 * time.Second)}); !errors.Is(err, store.ErrNotPending) {
				t.Fatalf("late answer to %s: %v", tc.id, err)
			}
		}
		el := request("elicit", "a", "h1", base)
		el.Rule, el.Elicit = "mcp.elicitation", &store.Elicitation{Server: "files", Message: "ok?"}
		create(el)
		if _, err := s.ResolveRequest(ctx, "elicit", store.Resolution{State: store.Denied, By: "ann", At: base.Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
		wants = append(wants, want{"elicit", "deny", "mcp.elicitation.decline", "ann"})
		create(request("gone1", "b", "h-dead", base.Add(time.Second)))
		create(request("gone2", "a", "h-dead", base.Add(2*time.Second)))
		n, err := s.WithdrawHostRequests(ctx, "h-new", store.Resolution{Reason: "host restarted", At: base.Add(time.Minute)})
		if err != nil || n != 2 {
			t.Fatalf("WithdrawHostRequests = %d, %v", n, err)
		}
		wants = append(wants, want{"gone1", "deny", "human.withdrawn", ""}, want{"gone2", "deny", "human.withdrawn", ""})

		recs, err := s.Decisions(ctx, store.AuditFilter{})
		must(t, "Decisions", err)
		if len(recs) != len(wants) {
			t.Fatalf("%d audit records, want %d: %+v", len(recs), len(wants), recs)
		}
		for i, w := range wants {
			d := recs[i]
			if d.RequestID != w.id || d.Verdict != w.verdict || d.Rule != w.rule || d.By != w.by {
				t.Errorf("record %d = %s %s %s by %q, want %s %s %s by %q", i+1, d.RequestID, d.Verdict, d.Rule, d.By, w.id, w.verdict, w.rule, w.by)
			}
			if d.Payload != "rm -rf build" || d.Kind != action.Shell || d.Session == "" || d.OwnerText == "" {
				t.Errorf("record %d lacks the request's action or owner: %+v", i+1, d)
			}
		}
		if n, err := s.VerifyChain(ctx); err != nil || n != len(wants) {
			t.Fatalf("VerifyChain = %d, %v", n, err)
		}
	}},
}
