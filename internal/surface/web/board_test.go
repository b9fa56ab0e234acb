package web

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/store"
)

// TestBoardPage: the board shows tasks in columns by status; a task's
// drawer shows its runs with each step's verdict, rule, exit code and
// (escaped) output, and its comments; the comment form needs the CSRF
// token and a login.
func TestBoardPage(t *testing.T) {
	f := newFixture(t, fixtureOptions{board: true})
	c := f.loggedIn()
	ctx := t.Context()

	p := c.get("/board")
	if p.status != http.StatusOK || !strings.Contains(p.body, `<a href="/board" aria-current="page">Board</a>`) {
		t.Fatalf("empty board: %d %s", p.status, p.body)
	}

	now := time.Now()
	ready, err := f.db.AddTask(ctx, store.Task{ID: "t-ready", Title: "<i>tidy</i>", Workspace: store.WorkspaceScratch, Script: []string{"echo hi"}, Created: now})
	must(t, err, "add task")
	_, err = f.db.AddTask(ctx, store.Task{ID: "t-todo", Title: "child", Workspace: store.WorkspaceScratch, Script: []string{"true"}, Parents: []string{ready.ID}, Created: now})
	must(t, err, "add child")
	_, run, err := f.db.ClaimTask(ctx, store.TaskClaim{Run: "r-1", Log: "/tmp/r-1.log", At: now})
	must(t, err, "claim")
	_, err = f.db.AppendRunStep(ctx, run.ID, store.TaskStep{Command: "rm -rf build", Verdict: "deny", Rule: "unattended.kanban_mode", ExitCode: -1, Output: "warden blocked <this>", Started: now, Finished: now})
	must(t, err, "step")
	_, err = f.db.FinishRun(ctx, run.ID, store.RunFinish{Status: store.TaskRunBlocked, Reason: "denied", At: now})
	must(t, err, "finish")

	p = c.get("/board")
	for _, want := range []string{
		`<section class="column status-blocked">`, `id="task-t-ready"`, html.EscapeString("<i>tidy</i>"),
		`<section class="column status-todo">`, `id="task-t-todo"`,
	} {
		if !strings.Contains(p.body, want) {
			t.Errorf("board lacks %q", want)
		}
	}
	blocked := p.body[strings.Index(p.body, "status-blocked"):]
	blocked = blocked[:strings.Index(blocked, "</section>")]
	if !strings.Contains(blocked, "t-ready") || strings.Contains(blocked, "t-todo") {
		t.Errorf("blocked column: %s", blocked)
	}

	p = c.get("/board?task=t-ready")
	for _, want := range []string{
		`id="drawer"`, `id="run-r-1"`, "<code class=\"runcmd\">rm -rf build</code>", "unattended.kanban_mode", "exit -1",
		html.EscapeString("warden blocked <this>"), `action="/board/t-ready/comment"`, `name="csrf" value="` + c.csrf + `"`,
	} {
		if !strings.Contains(p.body, want) {
			t.Errorf("drawer lacks %q", want)
		}
	}
	if p := c.get("/board?task=nosuch"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/board" {
		t.Errorf("unknown task: %d to %q", p.status, p.header.Get("Location"))
	} else if p := c.get("/board"); !strings.Contains(flashOf(p.body), "no task") {
		t.Errorf("unknown task: flash %q", flashOf(p.body))
	}

	// Without the CSRF token or a login the comment is refused.
	if r := c.post("/board/t-ready/comment", url.Values{"csrf": {""}, "body": {"x"}}); r.status != http.StatusForbidden {
		t.Fatalf("comment without CSRF: %d", r.status)
	}
	if r := f.client().post("/board/t-ready/comment", url.Values{"body": {"x"}}); r.status != http.StatusUnauthorized {
		t.Fatalf("comment without login: %d", r.status)
	}
	if cs, _ := f.db.Comments(ctx, "t-ready"); len(cs) != 0 {
		t.Fatalf("comments after refused posts: %v", cs)
	}
	r := c.post("/board/t-ready/comment", url.Values{"body": {"<b>looked</b>"}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/board?task=t-ready" {
		t.Fatalf("comment: %d to %q", r.status, r.header.Get("Location"))
	}
	p = c.get(r.header.Get("Location"))
	if !strings.Contains(p.body, html.EscapeString("<b>looked</b>")) || !strings.Contains(p.body, "operator (console)") {
		t.Errorf("comment not shown: %s", p.body)
	}
}

// TestBoardUnavailable: without a board store the page says so.
func TestBoardUnavailable(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	c := f.loggedIn()
	if p := c.get("/board"); !strings.Contains(p.body, "not available") {
		t.Errorf("board without a store: %s", p.body)
	}
}
