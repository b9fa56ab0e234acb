package mcpclient_test

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/mcpclient"
	"github.com/wardenhq/warden/internal/mcpclient/mcptest"
	"github.com/wardenhq/warden/internal/owner"
)

type markerKey struct{}

// TestInvariant04_ElicitationGoesHome is the bug this package exists to
// prevent: owners call confirm_delete on the same server at once; each
// question reaches its own owner's human, the cron owner's is declined at
// once without asking anybody, and each answer goes back to the call
// that asked. Run for both elicitation styles, both protocol versions
// where they work, in process and over a real stdio subprocess.
func TestInvariant04_ElicitationGoesHome(t *testing.T) {
	cases := []struct {
		name  string
		style mcptest.Style
		proto string
		stdio bool
		// viaCall: the handler's ctx descends from the Call's (the SDK
		// fulfils InputRequests inside CallTool); on the legacy path it
		// does not, which is why routing is by session.
		viaCall bool
	}{
		{"legacy/2025-11-25/inprocess", mcptest.Legacy, "", false, false},
		{"inputrequests/2026-07-28/inprocess", mcptest.InputRequests, mcpclient.LatestProtocolVersion, false, true},
		{"inputrequests/2025-11-25/inprocess", mcptest.InputRequests, "", false, false},
		{"legacy/2025-11-25/stdio", mcptest.Legacy, "", true, false},
		{"inputrequests/2026-07-28/stdio", mcptest.InputRequests, mcpclient.LatestProtocolVersion, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHuman()
			opts := mcpclient.Options{Elicit: h, ProtocolVersion: tc.proto, ElicitTimeout: time.Hour}
			var m *mcpclient.Manager
			var fake *mcptest.Fake
			if tc.stdio {
				opts.Servers = []config.MCPServer{{Name: "fake", Command: mcptest.Command(tc.style)}}
				opts = stdioOptions(t, opts)
				opts.Logger = testLogger(t)
				m = mcpclient.New(opts)
				t.Cleanup(func() { _ = m.Close() })
			} else {
				m, fake = inProcess(t, tc.style, opts)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()

			webA, webB, cron := webOwner(t, "A"), webOwner(t, "B"), cronOwner(t, "nightly")
			callA := goCall(context.WithValue(ctx, markerKey{}, "A"), m, webA, "fake", "confirm_delete", map[string]any{"path": "/a"})
			callB := goCall(context.WithValue(ctx, markerKey{}, "B"), m, webB, "fake", "confirm_delete", map[string]any{"path": "/b"})
			asks := map[string]ask{}
			for range 2 {
				a := h.next(t)
				asks[a.o.String()] = a
			}
			qa, qb := asks[webA.String()], asks[webB.String()]
			if qa.reply == nil || qb.reply == nil {
				t.Fatalf("questions went to %v, want one each for %s and %s", keys(asks), webA, webB)
			}
			for _, c := range []struct {
				a    ask
				o    owner.Owner
				path string
			}{{qa, webA, "/a"}, {qb, webB, "/b"}} {
				if !c.a.o.Equal(c.o) || !c.a.o.CanAnswer() {
					t.Errorf("question for %s reached owner %s (can answer %v)", c.o, c.a.o, c.a.o.CanAnswer())
				}
				want := mcpclient.Question{Server: "fake", Message: "Delete " + c.path + "?", Mode: mcpclient.ModeForm}
				got := c.a.q
				got.Schema = nil
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s was asked %+v, want %+v", c.o, got, want)
				}
				if !strings.Contains(string(c.a.q.Schema), `"confirm"`) || !strings.Contains(string(c.a.q.Schema), `"note"`) {
					t.Errorf("schema %s lacks confirm and note", c.a.q.Schema)
				}
				v, _ := c.a.ctx.Value(markerKey{}).(string)
				if want := strings.ToUpper(c.path[1:]); tc.viaCall && v != want || !tc.viaCall && v != "" {
					t.Errorf("handler ctx marker %q for %s; viaCall=%v", v, c.o, tc.viaCall)
				}
			}

			// While both humans think, the cron run asks too: declined
			// at once, without reaching anybody.
			start := time.Now()
			rc := wait(t, goCall(ctx, m, cron, "fake", "confirm_delete", map[string]any{"path": "/c"}))
			if rc.err != nil || rc.res.Text != "declined" {
				t.Fatalf("cron call = %+v, %v; want declined", rc.res, rc.err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("cron decline took %v", d)
			}
			select {
			case a := <-h.asks:
				t.Fatalf("the cron owner's question reached a human as %s", a.o)
			default:
			}

			// Answer B first, then A: each answer returns to its call.
			qb.reply <- mcpclient.Answer{Action: mcpclient.ActionDecline}
			if r := wait(t, callB); r.err != nil || r.res.Text != "declined" {
				t.Errorf("B = %+v, %v; want declined", r.res, r.err)
			}
			qa.reply <- mcpclient.Answer{Action: mcpclient.ActionAccept, Content: map[string]any{"confirm": true, "note": "ok"}}
			if r := wait(t, callA); r.err != nil || r.res.Text != "accepted: confirm=true note=ok" || r.res.IsError {
				t.Errorf("A = %+v, %v; want accepted: confirm=true note=ok", r.res, r.err)
			}
			if n := len(h.asked()); n != 2 {
				t.Errorf("the human was asked %d times, want 2", n)
			}
			if fake != nil && fake.Sessions() != 3 {
				t.Errorf("%d server sessions, want 3 (one per owner)", fake.Sessions())
			}
		})
	}
}

func keys(m map[string]ask) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestLegacyElicitOnLatestProtocol records why DefaultProtocolVersion is
// 2025-11-25: on 2026-07-28 a server eliciting mid-call fails its call.
func TestLegacyElicitOnLatestProtocol(t *testing.T) {
	h := newHuman()
	m, _ := inProcess(t, mcptest.Legacy, mcpclient.Options{Elicit: h, ProtocolVersion: mcpclient.LatestProtocolVersion})
	res, err := m.Call(t.Context(), webOwner(t, "A"), "fake", "confirm_delete", map[string]any{"path": "/a"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Text, "InputRequests") {
		t.Errorf("got %+v; want the SDK's isError telling the server to use InputRequests", res)
	}
	if len(h.asked()) != 0 {
		t.Error("the human was asked")
	}
}

// TestElicitOutcomes covers each way an elicitation ends, for both
// styles.
func TestElicitOutcomes(t *testing.T) {
	sub, err := owner.Subagent("s1")
	if err != nil {
		t.Fatal(err)
	}
	sub, err = sub.WithChannel(&chatChannel{})
	if err != nil {
		t.Fatal(err)
	}
	subOfCron, err := sub.WithParent(cronOwner(t, "j"))
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer close(release)
	cases := []struct {
		name     string
		o        owner.Owner
		elicitor mcpclient.Elicitor // nil: no Elicitor configured
		want     string
		asked    bool
	}{
		{"accept", webOwner(t, "A"), answer(mcpclient.Answer{Action: "accept", Content: map[string]any{"confirm": false}}), "accepted: confirm=false note=<nil>", true},
		{"decline", webOwner(t, "A"), answer(mcpclient.Answer{Action: "decline", Content: map[string]any{"confirm": true}}), "declined", true},
		{"cancel", webOwner(t, "A"), answer(mcpclient.Answer{Action: "cancel"}), "cancelled", true},
		{"unknown action is cancel", webOwner(t, "A"), answer(mcpclient.Answer{Action: "yes"}), "cancelled", true},
		{"elicitor error is cancel", webOwner(t, "A"), fail(errors.New("surface gone")), "cancelled", true},
		{"timeout is cancel", webOwner(t, "A"), blockOnCtx(), "cancelled", true},
		{"elicitor ignoring ctx is cancel", webOwner(t, "A"), ignoreCtx(release), "cancelled", true},
		{"cron declined", cronOwner(t, "j"), answer(mcpclient.Answer{Action: "accept"}), "declined", false},
		{"api without channel declined", owner.API(), answer(mcpclient.Answer{Action: "accept"}), "declined", false},
		{"attended subagent of cron declined", subOfCron, answer(mcpclient.Answer{Action: "accept"}), "declined", false},
		{"no elicitor declined", webOwner(t, "A"), nil, "declined", false},
	}
	for _, style := range []mcptest.Style{mcptest.Legacy, mcptest.InputRequests} {
		for _, tc := range cases {
			t.Run(style.String()+"/"+tc.name, func(t *testing.T) {
				var rec *recorder
				opts := mcpclient.Options{ElicitTimeout: 100 * time.Millisecond}
				if style == mcptest.InputRequests {
					opts.ProtocolVersion = mcpclient.LatestProtocolVersion
				}
				if tc.elicitor != nil {
					rec = &recorder{next: tc.elicitor}
					opts.Elicit = rec
				}
				m, _ := inProcess(t, style, opts)
				res, err := m.Call(t.Context(), tc.o, "fake", "confirm_delete", map[string]any{"path": "/x"})
				if err != nil {
					t.Fatal(err)
				}
				if res.Text != tc.want {
					t.Errorf("got %q, want %q", res.Text, tc.want)
				}
				if asked := rec != nil && rec.n.Load() > 0; asked != tc.asked {
					t.Errorf("elicitor called: %v, want %v", asked, tc.asked)
				}
			})
		}
	}
}

// TestCallEndWithdrawsQuestion: when the tool call that asked ends (the
// agent's turn was cancelled), its pending question is withdrawn — on the
// legacy path too, where the handler's ctx is not the call's.
func TestCallEndWithdrawsQuestion(t *testing.T) {
	for _, style := range []mcptest.Style{mcptest.Legacy, mcptest.InputRequests} {
		t.Run(style.String(), func(t *testing.T) {
			h := newHuman()
			opts := mcpclient.Options{Elicit: h, ElicitTimeout: time.Hour}
			if style == mcptest.InputRequests {
				opts.ProtocolVersion = mcpclient.LatestProtocolVersion
			}
			m, _ := inProcess(t, style, opts)
			ctx, cancel := context.WithCancel(t.Context())
			call := goCall(ctx, m, webOwner(t, "A"), "fake", "confirm_delete", map[string]any{"path": "/a"})
			a := h.next(t)
			cancel()
			if r := wait(t, call); !errors.Is(r.err, context.Canceled) {
				t.Errorf("cancelled call = %+v, %v; want context.Canceled", r.res, r.err)
			}
			select {
			case <-a.ctx.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the question outlived its call")
			}
		})
	}
}

// TestURLMode: URL-mode questions are declined unless enabled, and then
// reach the Elicitor with the URL to show.
func TestURLMode(t *testing.T) {
	for _, enabled := range []bool{false, true} {
		t.Run(strconv.FormatBool(enabled), func(t *testing.T) {
			var got mcpclient.Question
			el := mcpclient.ElicitorFunc(func(_ context.Context, _ owner.Owner, q mcpclient.Question) (mcpclient.Answer, error) {
				got = q
				return mcpclient.Answer{Action: mcpclient.ActionAccept}, nil
			})
			m, _ := inProcess(t, mcptest.Legacy, mcpclient.Options{Elicit: el, URLMode: enabled})
			r, err := m.Call(t.Context(), webOwner(t, "A"), "fake", "open_url", map[string]any{"url": "https://example.com/auth"})
			if err != nil {
				t.Fatal(err)
			}
			// Not advertised, the server refuses to ask at all.
			want, wantErr, wantQ := "client does not support \"url\" elicitation", true, mcpclient.Question{}
			if enabled {
				want, wantErr = "accepted: confirm=<nil> note=<nil>", false
				wantQ = mcpclient.Question{Server: "fake", Message: "Sign in", Mode: mcpclient.ModeURL, URL: "https://example.com/auth"}
			}
			if !strings.Contains(r.Text, want) || r.IsError != wantErr {
				t.Errorf("got %+v, want %q (isError %v)", r, want, wantErr)
			}
			if !reflect.DeepEqual(got, wantQ) {
				t.Errorf("asked %+v, want %+v", got, wantQ)
			}
		})
	}
}

// TestInvariant09_QuestionsNobodyCanAnswerAreDeclined: for every owner
// nobody attends — cron and kanban runs, single queries, an API caller
// without a channel, and a web session's sub-agent started by a cron run
// — a server's question is declined without reaching the Elicitor (which
// here would answer accept at once, so a wrong route would show).
func TestInvariant09_QuestionsNobodyCanAnswerAreDeclined(t *testing.T) {
	mk := func(o owner.Owner, err error) owner.Owner {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	kanban := mk(owner.Kanban("b", "T1", "R1"))
	single := mk(owner.SingleQuery().WithSession("q1"))
	api := mk(owner.API().WithSession("api1"))
	sub := mk(mk(owner.Subagent("s1")).WithChannel(&chatChannel{name: "sub"}))
	sub = mk(sub.WithParent(cronOwner(t, "parent")))
	owners := []owner.Owner{cronOwner(t, "nightly"), kanban, single, api, sub}

	var asked int
	accept := mcpclient.ElicitorFunc(func(context.Context, owner.Owner, mcpclient.Question) (mcpclient.Answer, error) {
		asked++
		return mcpclient.Answer{Action: mcpclient.ActionAccept, Content: map[string]any{"confirm": true}}, nil
	})
	m, _ := inProcess(t, mcptest.Legacy, mcpclient.Options{Elicit: accept, ElicitTimeout: time.Hour})
	for _, o := range owners {
		r := wait(t, goCall(t.Context(), m, o, "fake", "confirm_delete", map[string]any{"path": "/x"}))
		if r.err != nil || r.res.Text != "declined" {
			t.Errorf("%s: %+v %v, want declined", o, r.res, r.err)
		}
	}
	if asked != 0 {
		t.Fatalf("the Elicitor was asked %d times for owners nobody attends", asked)
	}
	// The same server and Elicitor do reach an attended owner.
	if r := wait(t, goCall(t.Context(), m, webOwner(t, "W"), "fake", "confirm_delete", map[string]any{"path": "/x"})); r.res.Text != "accepted: confirm=true note=" && !strings.HasPrefix(r.res.Text, "accepted: confirm=true") {
		t.Fatalf("attended owner: %+v %v", r.res, r.err)
	}
	if asked != 1 {
		t.Fatalf("asked %d times, want 1 (the web owner)", asked)
	}
}
