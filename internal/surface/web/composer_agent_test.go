package web

import (
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/store"
)

// content is a wire message's text.
func content(m chatMessage) string {
	if m.Content == nil {
		return ""
	}
	return *m.Content
}

// lastUser is the text of the conversation's last user message.
func lastUser(req chatRequest) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return content(req.Messages[i])
		}
	}
	return ""
}

// terminalModel is a model that, asked to "run: CMD", calls the terminal
// tool with CMD, and once the tool answered replies with what happened:
// "done: <first line>" on exit status 0, "could not: <result>"
// otherwise. Anything else it answers in words.
func terminalModel(_ int, req chatRequest) modelTurn {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == "tool" {
		out := content(last)
		if strings.HasSuffix(out, "[exit status 0]") {
			return modelTurn{Content: "done: " + strings.SplitN(strings.TrimSuffix(out, "[exit status 0]"), "\n", 2)[0]}
		}
		return modelTurn{Content: "could not: " + out}
	}
	if cmd, ok := strings.CutPrefix(lastUser(req), "run: "); ok {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		return modelTurn{Calls: [][2]string{{"terminal", string(args)}}}
	}
	return modelTurn{Content: "you said: " + lastUser(req)}
}

// runsText is a session's live runs fragment, unescaped for matching.
func runsText(c *client, key string) string {
	return html.UnescapeString(c.get(sessionURL(key) + "/runs").body)
}

// TestComposerAgentSafeCommand: a message goes to the agent; the model
// calls terminal with echo hi, the command runs as the web session, and
// the transcript shows the call, its result and the reply. The next
// message continues the conversation.
func TestComposerAgentSafeCommand(t *testing.T) {
	m := newFakeModel(t, terminalModel)
	f := newFixture(t, fixtureOptions{agent: true, model: m.client()})
	c := f.inSession("talk")
	if p := c.get("/sessions/talk").body; !strings.Contains(p, `placeholder="Ask the agent, or !command to run a shell command"`) {
		t.Errorf("composer placeholder: %s", p)
	}

	r := c.bearerPost("/sessions/talk/run", url.Values{"line": {"run: echo hi"}})
	if r.status != http.StatusAccepted || !strings.Contains(r.body, "the agent is working on your message") {
		t.Fatalf("send: %d %q", r.status, r.body)
	}
	eventually(t, "agent run done", func() (bool, string) {
		b := runsText(c, "talk")
		return strings.Contains(b, `class="run agent done"`), b
	})
	b := runsText(c, "talk")
	for _, want := range []string{
		`<span class="usermsg">run: echo hi</span>`,
		`<span class="kind">tool call</span><code>terminal</code> <code class="args">{"command":"echo hi"}</code>`,
		"<span class=\"kind\">result</span><code>terminal</code><pre class=\"out\">hi\n[exit status 0]</pre>",
		`<span class="text reply">done: hi</span>`,
	} {
		if !strings.Contains(b, want) {
			t.Errorf("transcript lacks %q:\n%s", want, b)
		}
	}
	reqs := m.sent()
	if len(reqs) != 2 || content(reqs[1].Messages[len(reqs[1].Messages)-1]) != "hi\n[exit status 0]" {
		t.Fatalf("the model did not get the command's result: %+v", reqs)
	}
	if len(reqs[0].Tools) == 0 || reqs[0].Tools[0].Function.Name != "terminal" {
		t.Errorf("tools sent: %+v", reqs[0].Tools)
	}
	// The command was audited as the web session.
	ds, err := f.db.Decisions(t.Context(), store.AuditFilter{Session: "talk"})
	must(t, err, "decisions")
	if len(ds) != 1 || !strings.Contains(ds[0].OwnerText, "gateway:web/talk") {
		t.Errorf("audit: %+v", ds)
	}

	// The session's conversation goes on.
	c.bearerPost("/sessions/talk/run", url.Values{"line": {"and again?"}})
	eventually(t, "second reply", func() (bool, string) {
		b := runsText(c, "talk")
		return strings.Contains(b, "you said: and again?"), b
	})
	third := m.sent()[2]
	var seen []string
	for _, msg := range third.Messages {
		seen = append(seen, msg.Role+":"+content(msg))
	}
	if !strings.Contains(strings.Join(seen, "|"), "user:run: echo hi|assistant:|tool:hi\n[exit status 0]|assistant:done: hi|user:and again?") {
		t.Errorf("the second message did not continue the conversation: %q", seen)
	}
}

// TestComposerAgentApproval: a dangerous command the model asks for
// waits in the session's queue with a link from the transcript; answered
// there, it runs (or, denied, is reported as blocked with the reason)
// and the model replies. While it waits, a second message is refused
// with 409 and a !command still runs.
func TestComposerAgentApproval(t *testing.T) {
	tests := []struct {
		name     string
		answer   url.Values
		victim   bool // still there afterwards
		want     []string
		wantRuns string
	}{
		{"approved", url.Values{"decision": {"once"}}, false, []string{`<span class="text reply">done:</span>`}, "done"},
		{"denied", url.Values{"decision": {"deny"}, "reason": {"keep it"}}, true, []string{
			`<span class="kind">blocked</span><code>terminal</code> <span class="text">`, "Their reason: keep it",
			`<span class="text reply">could not: BLOCKED: `,
		}, "done"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newFakeModel(t, terminalModel)
			f := newFixture(t, fixtureOptions{agent: true, model: m.client()})
			c := f.client()
			c.login()
			c.follow("/sessions", url.Values{"key": {"danger"}})
			victim := filepath.Join(f.dir, "victim")
			must(t, os.MkdirAll(filepath.Join(victim, "sub"), 0o755), "mkdir")

			c.bearerPost("/sessions/danger/run", url.Values{"line": {"run: rm -rf ./victim"}})
			id := f.onePending(t, "request in the queue", "danger")
			page := c.get("/sessions/danger").body
			if !strings.Contains(page, `id="req-`+id+`"`) {
				t.Fatalf("the session's queue lacks the card: %s", page)
			}
			eventually(t, "transcript links the request", func() (bool, string) {
				b := runsText(c, "danger")
				return strings.Contains(b, `<span class="kind">waiting for approval</span><code>terminal</code> · <a href="#req-`+id+`">`), b
			})

			r := c.bearerPost("/sessions/danger/run", url.Values{"line": {"hurry up"}})
			if r.status != http.StatusConflict || !strings.Contains(r.body, "the agent is still working on the previous message") {
				t.Errorf("second message while waiting: %d %q", r.status, r.body)
			}
			if r := c.bearerPost("/sessions/danger/run", url.Values{"line": {"!echo meanwhile"}}); r.status != http.StatusAccepted {
				t.Errorf("!command while the agent waits: %d %q", r.status, r.body)
			}

			tc.answer.Set("back", sessionURL("danger"))
			if r := c.post("/pending/"+id+"/answer", tc.answer); r.status != http.StatusSeeOther {
				t.Fatalf("answer: %d %q", r.status, r.body)
			}
			eventually(t, "agent run ended", func() (bool, string) {
				b := runsText(c, "danger")
				return strings.Contains(b, `class="run agent `+tc.wantRuns+`"`), b
			})
			b := runsText(c, "danger")
			for _, want := range tc.want {
				if !strings.Contains(b, want) {
					t.Errorf("transcript lacks %q:\n%s", want, b)
				}
			}
			if _, err := os.Stat(victim); (err == nil) != tc.victim {
				t.Errorf("victim exists=%v, want %v", err == nil, tc.victim)
			}
			if len(m.sent()) != 2 {
				t.Errorf("model calls %d, want 2 (the refused message never reached it)", len(m.sent()))
			}
			// Once the run ended, the session takes a new message.
			if r := c.bearerPost("/sessions/danger/run", url.Values{"line": {"thanks"}}); r.status != http.StatusAccepted {
				t.Errorf("message after the run: %d %q", r.status, r.body)
			}
			eventually(t, "third reply", func() (bool, string) {
				b := runsText(c, "danger")
				return strings.Contains(b, "you said: thanks"), b
			})
		})
	}
}

// TestComposerNoModel: without a model a message is refused with how to
// configure one, the page says so, and !commands still run.
func TestComposerNoModel(t *testing.T) {
	tests := []struct {
		name string
		fo   fixtureOptions
	}{
		{"no agent", fixtureOptions{}},
		{"agent without a model", fixtureOptions{agent: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.fo)
			c := f.client()
			c.login()
			c.follow("/sessions", url.Values{"key": {"quiet"}})
			page := html.UnescapeString(c.get("/sessions/quiet").body)
			if !strings.Contains(page, "No model configured: set llm.base_url and llm.model in the config file (README: Agents).") {
				t.Errorf("the hint does not say how to configure a model: %s", page)
			}
			r := c.bearerPost("/sessions/quiet/run", url.Values{"line": {"hello"}})
			if r.status != http.StatusServiceUnavailable || !strings.HasPrefix(r.body, "No model configured: set llm.base_url and llm.model in the config file (README: Agents).") {
				t.Errorf("message without a model: %d %q", r.status, r.body)
			}
			if r := c.bearerPost("/sessions/quiet/run", url.Values{"line": {"!echo still here"}}); r.status != http.StatusAccepted {
				t.Fatalf("!command: %d %q", r.status, r.body)
			}
			eventually(t, "shell run", func() (bool, string) {
				b := runsText(c, "quiet")
				return strings.Contains(b, "still here") && strings.Contains(b, "exit 0"), b
			})
			if r := c.bearerPost("/sessions/quiet/run", url.Values{"line": {"!"}}); r.status != http.StatusBadRequest {
				t.Errorf("a bare !: %d %q", r.status, r.body)
			}
		})
	}
}

// TestComposerAgentModelDown: a model that fails ends the run in error
// with the reason, escaped.
func TestComposerAgentModelDown(t *testing.T) {
	m := newFakeModel(t, func(int, chatRequest) modelTurn { return modelTurn{Status: http.StatusBadGateway} })
	f := newFixture(t, fixtureOptions{agent: true, model: m.client()})
	c := f.inSession("down")
	c.bearerPost("/sessions/down/run", url.Values{"line": {"<b>hello</b>"}})
	eventually(t, "run in error", func() (bool, string) {
		b := c.get("/sessions/down/runs").body
		return strings.Contains(b, `class="run agent error"`) && strings.Contains(b, "The model is unavailable"), b
	})
	if b := c.get("/sessions/down/runs").body; !strings.Contains(b, `<span class="usermsg">&lt;b&gt;hello&lt;/b&gt;</span>`) {
		t.Errorf("the message is not escaped: %s", b)
	}
}

// TestCloseWithdrawsAgentRuns: closing the console withdraws the
// approval an agent run waits for and ends the run.
func TestCloseWithdrawsAgentRuns(t *testing.T) {
	m := newFakeModel(t, terminalModel)
	f := newFixture(t, fixtureOptions{agent: true, model: m.client()})
	c := f.inSession("closing")
	c.bearerPost("/sessions/closing/run", url.Values{"line": {"run: rm -rf ./nothing"}})
	r := f.closeWithPending(t, "closing")
	if r.State != store.Withdrawn {
		t.Fatalf("request after Close: %s", r.State)
	}
	if runs := f.console.runViews("closing"); len(runs) != 1 || runs[0].State == runStarted {
		t.Fatalf("agent run after Close: %+v", runs)
	}
}
