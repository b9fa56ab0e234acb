package host

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/llm/llmtest"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/mcpclient/mcptest"
	"github.com/wardenhq/warden/internal/store"
)

// storyModel plays the model for issue 6's story. What it does depends
// on the conversation's first user message, so cron runs and the web
// session can share it:
//
//	CRON-DANGER <dir>  calls terminal: rm -rf <dir>
//	CRON-MCP / WEB      call files__confirm_delete
//
// and once a tool answered it replies "result: <tool result>".
func storyModel(r llmtest.Request) llmtest.Reply {
	last := r.Messages[len(r.Messages)-1]
	if last.Role == "tool" {
		return llmtest.Text("result: " + last.Content)
	}
	var first string
	for _, m := range r.Messages {
		if m.Role == "user" {
			first = m.Content
			break
		}
	}
	switch {
	case strings.HasPrefix(first, "CRON-DANGER "):
		dir := strings.TrimPrefix(first, "CRON-DANGER ")
		// A project directory deleted relative to where the call runs:
		// a recursive delete that names /tmp/… (or follows a cd there) is
		// confined to a temporary directory and not dangerous.
		args, _ := json.Marshal(map[string]string{"command": "rm -rf " + filepath.Base(dir)})
		return llmtest.Calls(llmtest.Call("terminal", string(args)))
	case strings.HasPrefix(first, "CRON-MCP"), strings.HasPrefix(first, "WEB"):
		return llmtest.Calls(llmtest.Call("files__confirm_delete", `{"path":"/srv/reports"}`))
	}
	return llmtest.Text("I do not know what to do with: " + first)
}

// console is the web console as a script reaches it: the admin token as
// a bearer, no cookie, no CSRF token needed.
type console struct {
	t     *testing.T
	base  string
	token string
}

func newConsole(t *testing.T, th *testHost) *console {
	return &console{t: t, base: th.info.ConsoleURL, token: th.apiToken(t, "admin")}
}

func (c *console) do(method, path string, form url.Values) (int, string) {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(c.t.Context(), method, c.base+strings.TrimPrefix(path, "/"), body)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := cl.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var cardID = regexp.MustCompile(`id="req-([0-9A-Z]{26})"`)

// storyConf is the config of a story's host: cron runs denied, the
// model at modelURL, and the MCP server "files" run by command (JSON)
// with its tools allowed.
func storyConf(modelURL string, command []byte) string {
	return fmt.Sprintf(`approvals:
  cron_mode: deny
  timeout: 600
llm:
  base_url: %s
  model: story-model
  max_retries: 0
mcp:
  rules:
    - {match: "files/*", action: allow}
  servers:
    files:
      command: %s
`, modelURL, command)
}

// TestStory6_ElicitationGoesHome is issue 6's story end to end on a real
// host (SQLite, socket, console over HTTP), a real model protocol (the
// fake Chat Completions server through the openai adapter) and a real
// MCP server (this test binary over stdio, speaking the go-sdk
// protocol). In the reference system a cron run left the process judged
// as cron, so a chat user's MCP question went to a terminal with no
// stdin and was denied. Here:
//
//  1. a cron prompt job's agent calls a dangerous tool and is denied
//     under cron_mode: deny — the denial goes back to the agent;
//  2. then a web session's agent calls the eliciting MCP tool: the
//     question appears on the console in that session's queue, is
//     answered there, and the tool completes with the answer;
//  3. again with cron runs interleaved: while the web question is
//     pending, cron prompt runs whose agents call the same eliciting
//     tool get "declined" at once, and the web question stays the web
//     session's, answered in the end with its own content.
func TestStory6_ElicitationGoesHome(t *testing.T) {
	model := llmtest.New(t, storyModel)
	cfg := newConfig(t)
	server, _ := json.Marshal(mcptest.Command(mcptest.Legacy))
	writeConfig(t, cfg, storyConf(model.URL(), server))
	reqs := &requestLog{}
	cfg.wrap = func(s store.Store) store.Store { reqs.Store = s; return reqs }
	th := startHost(t, cfg)
	ctx := t.Context()
	if !strings.Contains(th.out.String(), "agents:  model story-model") || !strings.Contains(th.out.String(), "MCP servers: files") {
		t.Fatalf("banner:\n%s", th.out.String())
	}

	// 1. The cron prompt job's dangerous call is denied, and the agent
	// hears why.
	target := filepath.Join(cfg.ScratchDir, CronDir, "reports")
	if err := os.MkdirAll(target, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := th.client.AddCronJob(ctx, localapi.CronAddRequest{Name: "nightly", Every: "1h", Overlap: "allow", Prompt: "CRON-DANGER " + target}); err != nil {
		t.Fatal(err)
	}
	runJob := func(name string) store.CronRun {
		run, err := th.client.RunCronJob(ctx, name)
		if err == nil {
			run, err = th.client.CronRun(ctx, run.ID, true)
		}
		if err != nil {
			t.Error(err)
		}
		return run
	}
	run := runJob("nightly")
	if run.Status != store.RunSucceeded || len(run.Steps) != 1 {
		t.Fatalf("cron prompt run: %+v", run)
	}
	if out := run.Steps[0].Output; !strings.Contains(out, "BLOCKED") || !strings.Contains(out, "result: BLOCKED") {
		t.Fatalf("the denial did not reach the agent:\n%s", out)
	}
	if _, err := os.Stat(target); err != nil {
		t.Fatalf("the denied command ran: %v", err)
	}
	ds := th.decisions(t)
	if d := ds[len(ds)-1]; d.Verdict != "deny" || d.Rule != gate.RuleCronMode || !strings.HasPrefix(d.OwnerText, "cron:nightly,run=") {
		t.Fatalf("audit: %+v", d)
	}
	if len(reqs.created()) != 0 {
		t.Fatalf("the cron run asked a human: %v", reqs.created())
	}

	// 2. A web session's agent calls the eliciting tool: the question is
	// on the console, in that session's queue, and its answer completes
	// the tool call.
	con := newConsole(t, th)
	webTurn := func(key, note string, during func()) {
		t.Helper()
		if st, body := con.do(http.MethodPost, "/sessions", url.Values{"key": {key}}); st != http.StatusSeeOther && st != http.StatusOK {
			t.Fatalf("create session %s: %d %s", key, st, body)
		}
		if st, body := con.do(http.MethodPost, "/sessions/"+key+"/run", url.Values{"line": {"WEB please tidy the reports"}}); st != http.StatusSeeOther && st != http.StatusAccepted {
			t.Fatalf("send a message: %d %s", st, body)
		}
		var id string
		waitFor(t, "the question on the console", func() bool {
			_, page := con.do(http.MethodGet, "/pending/list?session="+key, nil)
			if m := cardID.FindStringSubmatch(page); m != nil && strings.Contains(page, "confirm") {
				id = m[1]
				return true
			}
			return false
		})
		r, err := th.st.GetRequest(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Elicit == nil || r.Session != key || r.OwnerText != "gateway:web/"+key+",session="+key || r.Elicit.Server != "files" {
			t.Fatalf("the question: %+v (elicit %+v)", r, r.Elicit)
		}
		if during != nil {
			during()
		}
		if r, _ := th.st.GetRequest(ctx, id); r.State != store.Pending {
			t.Fatalf("the web question ended (%s) before its answer", r.State)
		}
		st, body := con.do(http.MethodPost, "/pending/"+id+"/answer", url.Values{"decision": {"accept"}, "f.confirm": {"on"}, "f.note": {note}})
		if st != http.StatusSeeOther && st != http.StatusOK {
			t.Fatalf("answer: %d %s", st, body)
		}
		waitFor(t, "the agent's reply", func() bool {
			_, page := con.do(http.MethodGet, "/sessions/"+key+"/runs", nil)
			return strings.Contains(page, "result: accepted: confirm=true note="+note)
		})
		r, _ = th.st.GetRequest(ctx, id)
		if r.State != store.Answered || string(r.Content) == "" {
			t.Fatalf("the question ended %s with %s", r.State, r.Content)
		}
		// The question and its ending are in the audit chain, as the
		// web session's.
		ds, err := th.st.Decisions(ctx, store.AuditFilter{Session: key})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, d := range ds {
			if d.RequestID == id && d.Rule == RuleElicitation+".accept" && d.Verdict == "allow" && strings.Contains(d.Payload, "Delete") {
				found = true
			}
		}
		if !found {
			t.Fatalf("no audit record of the answered question %s: %+v", id, ds)
		}
	}
	webTurn("web-1", "ok", nil)

	// 3. Cron runs interleaved: while web-2's question waits, cron prompt
	// runs call the same eliciting tool. Theirs are declined at once (no
	// channel); web-2's stays pending, in web-2's queue, until answered.
	if _, err := th.client.AddCronJob(ctx, localapi.CronAddRequest{Name: "asker", Every: "1h", Overlap: "allow", Prompt: "CRON-MCP"}); err != nil {
		t.Fatal(err)
	}
	webTurn("web-2", "later", func() {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				start := time.Now()
				run := runJob("asker")
				if run.Status != store.RunSucceeded || len(run.Steps) != 1 || !strings.Contains(run.Steps[0].Output, "result: declined") {
					t.Errorf("cron MCP run: %+v", run)
				}
				if d := time.Since(start); d > 30*time.Second {
					t.Errorf("a cron run's question waited %v instead of being declined at once", d)
				}
			})
			run := runJob("nightly")
			if run.Status != store.RunSucceeded || !strings.Contains(run.Steps[0].Output, "result: BLOCKED") {
				t.Errorf("cron danger run: %+v", run)
			}
		}
		wg.Wait()
	})
	for _, o := range reqs.created() {
		if !strings.HasPrefix(o, "gateway:web/") {
			t.Errorf("a question was put to %s", o)
		}
	}
	if n := len(reqs.created()); n != 2 {
		t.Errorf("%d questions, want 2 (one per web turn)", n)
	}
}
