package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
)

// markers are what the reference system's processes read their
// identity and approval mode from. Every process of these tests starts
// with them set; none may change a decision or reach a step.
var markers = []string{
	"WARDEN_YOLO=1", "HERMES_YOLO_MODE=1", "WARDEN_INTERACTIVE=1", "HERMES_INTERACTIVE=1",
	"HERMES_SESSION_KEY=stolen", "HERMES_CRON_SESSION=1", "WARDEN_APPROVALS_KANBAN_MODE=approve",
}

// consoleBrowser is an operator logged in to one host's web console
// with a one-time login link: a cookie jar and the last page's CSRF
// token, as a browser holds them.
type consoleBrowser struct {
	t    *testing.T
	hc   *http.Client
	base *url.URL
	csrf string
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// login logs in to host h's console as the operator (`warden console`
// on h's machine, then the link in a browser).
func (c *testCluster) login(h *clusterHost) *consoleBrowser {
	t := c.t
	t.Helper()
	out, err := c.cli("console", "--json", "--state", h.state)
	if err != nil {
		t.Fatalf("warden console on host %s: %v\n%s", h.name, err, out)
	}
	var link struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal([]byte(out), &link); err != nil {
		t.Fatalf("warden console --json: %v\n%s", err, out)
	}
	u, err := url.Parse(link.URL)
	if err != nil {
		t.Fatal(err)
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &consoleBrowser{t: t, hc: &http.Client{Jar: jar, Timeout: 30 * time.Second}, base: u.ResolveReference(&url.URL{Path: "/"})}
	if code, page := b.get(u.Path); code != http.StatusOK || !strings.Contains(page, "Pending") {
		t.Fatalf("login on host %s: %d\n%s", h.name, code, page)
	}
	return b
}

func (b *consoleBrowser) do(req *http.Request) (int, string) {
	b.t.Helper()
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	page, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	if m := csrfField.FindSubmatch(page); m != nil {
		b.csrf = string(m[1])
	}
	return resp.StatusCode, string(page)
}

func (b *consoleBrowser) get(path string) (int, string) {
	b.t.Helper()
	req, err := http.NewRequestWithContext(b.t.Context(), http.MethodGet, b.base.ResolveReference(&url.URL{Path: path}).String(), nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

// answer posts the pending page's answer form for request id.
func (b *consoleBrowser) answer(id string, form url.Values) (int, string) {
	b.t.Helper()
	form.Set("csrf", b.csrf)
	req, err := http.NewRequestWithContext(b.t.Context(), http.MethodPost, b.base.ResolveReference(&url.URL{Path: "/pending/" + id + "/answer"}).String(), strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// bearerAnswer is what a process holding only secret could try: answer
// with it as an API token, no cookie.
func bearerAnswer(t *testing.T, consoleURL, id, secret string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, consoleURL+"pending/"+id+"/answer", strings.NewReader("decision=once"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// consoleURL is host h's console address, as its login links name it.
func (c *testCluster) consoleURL(h *clusterHost) string {
	c.t.Helper()
	out, err := c.cli("console", "--json", "--state", h.state)
	if err != nil {
		c.t.Fatalf("warden console: %v\n%s", err, out)
	}
	var link struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal([]byte(out), &link); err != nil {
		c.t.Fatal(err)
	}
	base, _, ok := strings.Cut(link.URL, "login/")
	if !ok {
		c.t.Fatalf("login link %q", link.URL)
	}
	return base
}

// remoteTask adds a script task whose workspace is ws (on "the worker's
// machine", here a directory of the test) to the shared board through
// host h, and issues it to a remote worker: it returns the task id, the
// TLS address and pin of h's worker listener and the token file.
func (c *testCluster) remoteTask(h *clusterHost, name, ws string, steps ...string) (id, addr, pin, tok string) {
	t := c.t
	t.Helper()
	args := []string{"kanban", "add", name, "--json", "--workspace", "dir:" + ws, "--state", h.state}
	for _, s := range steps {
		args = append(args, "--step", s)
	}
	out, err := c.cli(args...)
	if err != nil {
		t.Fatalf("kanban add: %v\n%s", err, out)
	}
	var task struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(out), &task); err != nil {
		t.Fatalf("kanban add --json: %v\n%s", err, out)
	}
	tok = filepath.Join(c.root, "token-"+name)
	out, err = c.cli("kanban", "remote", task.ID, "--token-file", tok, "--json", "--state", h.state)
	if err != nil {
		t.Fatalf("kanban remote: %v\n%s", err, out)
	}
	var issued localapi.KanbanRemote
	if err := json.Unmarshal([]byte(out), &issued); err != nil {
		t.Fatalf("kanban remote --json: %v\n%s", err, out)
	}
	return task.ID, issued.Addr, issued.Fingerprint, tok
}

// worker starts `warden worker` in remote mode, as on another machine:
// its own state directory, the markers in its environment.
func (c *testCluster) worker(name, addr, pin, tok, task, ws string) *proc {
	env := append(append([]string(nil), c.env...), markers...)
	return startProc(c.t, env, ws, filepath.Join(c.root, "worker-"+name+".log"), c.bin,
		"worker", "--connect", addr, "--pin", pin, "--token-file", tok, "--task", task, "--workspace", ws,
		"--state", filepath.Join(c.root, "wstate-"+name))
}

// taskStatus reads a task's status from the shared store.
func taskStatus(t *testing.T, db interface {
	GetTask(ctx context.Context, id string) (store.Task, error)
}, id string) store.TaskStatus {
	t.Helper()
	tk, err := db.GetTask(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return tk.Status
}

// TestMultiHost_RemoteWorkerAsksOnAnotherHostsConsole is issue 19's
// remote-worker story under approvals.kanban_mode ask: two hosts on one
// PostgreSQL; a worker process in remote mode connects over TLS to host
// A and runs a script task whose second step deletes a directory in its
// workspace; the question shows on host B's web console, where the
// operator is logged in:
//
//  1. approved on B → the step runs on the worker (the directory is
//     gone), the task is done; the worker's one-time token, tried as a
//     console credential on either host, answers nothing; the step's
//     environment holds none of the markers every process started with;
//  2. denied on B → the directory stays, the task is blocked, the run's
//     history has the step denied with the operator's reason;
//  3. nobody answers → denied at the deadline (approvals.timeout,
//     reloaded to 3 s), the request expired, the directory stays.
func TestMultiHost_RemoteWorkerAsksOnAnotherHostsConsole(t *testing.T) {
	c := newCluster(t, 15, "")
	conf := func(timeout int) string {
		return fmt.Sprintf("approvals:\n  mode: manual\n  timeout: %d\n  kanban_mode: ask\ncluster:\n  lease: 15\n"+
			"kanban:\n  remote:\n    enabled: true\n    listen: 127.0.0.1:0\n    only: true\n", timeout)
	}
	if err := os.WriteFile(c.conf, []byte(conf(600)), 0o600); err != nil {
		t.Fatal(err)
	}
	c.env = append(c.env, markers...)
	a, b := c.serve("a"), c.serve("b")
	db := c.open()
	ctx := t.Context()
	op := c.login(b)
	urlA, urlB := c.consoleURL(a), c.consoleURL(b)

	// question waits for task's question on B's console and returns its id.
	question := func(task string) string {
		t.Helper()
		r := pendingOf(t, b, "kanban:"+task)
		if !strings.HasPrefix(r.OwnerText, "kanban:"+task) {
			t.Errorf("request %s of owner %s", r.ID, r.OwnerText)
		}
		code, page := op.get("/pending")
		if code != http.StatusOK || !strings.Contains(page, `id="req-`+r.ID+`"`) || !strings.Contains(page, "rm -rf victim") {
			t.Fatalf("B's console does not show %s: %d\n%s", r.ID, code, page)
		}
		return r.ID
	}
	finished := func(w *proc, name string) {
		t.Helper()
		if err := w.wait(t, 60*time.Second); err != nil {
			t.Logf("worker %s: %v", name, err)
		}
	}

	// 1. Approved on B.
	ws1 := filepath.Join(c.root, "ws1")
	mkdir(t, filepath.Join(ws1, "victim"))
	id1, addr, pin, tok := c.remoteTask(a, "approve", ws1, "env > env.txt", "rm -rf victim")
	secret, err := os.ReadFile(tok)
	if err != nil {
		t.Fatal(err)
	}
	w := c.worker("approve", addr, pin, tok, id1, ws1)
	req := question(id1)
	if _, err := os.Stat(filepath.Join(ws1, "victim")); err != nil {
		t.Fatalf("the step ran before its answer: %v", err)
	}
	for _, u := range []string{urlA, urlB} {
		if code := bearerAnswer(t, u, req, strings.TrimSpace(string(secret))); code != http.StatusUnauthorized {
			t.Errorf("the worker's token as a console credential on %s: %d, want 401", u, code)
		}
	}
	if r, err := db.GetRequest(ctx, req); err != nil || r.State != store.Pending {
		t.Fatalf("after the token's tries: %+v %v", r, err)
	}
	if code, page := op.answer(req, url.Values{"decision": {"once"}}); code != http.StatusOK || !strings.Contains(page, "Approved") {
		t.Fatalf("approve on B: %d\n%s", code, page)
	}
	finished(w, "approve")
	if _, err := os.Stat(filepath.Join(ws1, "victim")); !os.IsNotExist(err) {
		t.Errorf("approved, but the step did not run: %v\n%s", err, w.output())
	}
	if st := taskStatus(t, db, id1); st != store.TaskDone {
		t.Errorf("task %s is %s, want done\n%s", id1, st, w.output())
	}
	env, err := os.ReadFile(filepath.Join(ws1, "env.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range markers {
		name, _, _ := strings.Cut(m, "=")
		if strings.Contains(string(env), name) {
			t.Errorf("the step's environment holds %s", name)
		}
	}
	if strings.Contains(string(env), strings.TrimSpace(string(secret))) {
		t.Error("the step's environment holds the worker's token")
	}
	if r, _ := db.GetRequest(ctx, req); r.State != store.Answered || !strings.Contains(r.By, "console session") {
		t.Errorf("request %s: %s by %q", req, r.State, r.By)
	}

	// 2. Denied on B.
	ws2 := filepath.Join(c.root, "ws2")
	mkdir(t, filepath.Join(ws2, "victim"))
	id2, addr, pin, tok := c.remoteTask(a, "deny", ws2, "rm -rf victim")
	w = c.worker("deny", addr, pin, tok, id2, ws2)
	req = question(id2)
	if code, page := op.answer(req, url.Values{"decision": {"deny"}, "reason": {"not on a Friday"}}); code != http.StatusOK {
		t.Fatalf("deny on B: %d\n%s", code, page)
	}
	finished(w, "deny")
	if _, err := os.Stat(filepath.Join(ws2, "victim")); err != nil {
		t.Errorf("denied, but the step ran: %v", err)
	}
	if st := taskStatus(t, db, id2); st != store.TaskBlocked {
		t.Errorf("task %s is %s, want blocked", id2, st)
	}
	runs, err := db.TaskRuns(ctx, id2)
	if err != nil || len(runs) != 1 || len(runs[0].Steps) != 1 || runs[0].Steps[0].Verdict != "deny" || !strings.Contains(runs[0].Steps[0].Output, "not on a Friday") {
		t.Errorf("runs of %s: %+v %v", id2, runs, err)
	}

	// 3. Nobody answers: a deny at the deadline.
	short := conf(3)
	if err := os.WriteFile(c.conf, []byte(short), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(short))
	for _, h := range []*clusterHost{a, b} {
		waitFor(t, "host "+h.name+" to reload the config", func() bool {
			st, err := h.c.Status(ctx)
			return err == nil && strings.HasSuffix(st.Config.Digest, hex.EncodeToString(sum[:]))
		})
	}
	ws3 := filepath.Join(c.root, "ws3")
	mkdir(t, filepath.Join(ws3, "victim"))
	id3, addr, pin, tok := c.remoteTask(a, "silence", ws3, "rm -rf victim")
	w = c.worker("silence", addr, pin, tok, id3, ws3)
	finished(w, "silence")
	if _, err := os.Stat(filepath.Join(ws3, "victim")); err != nil {
		t.Errorf("unanswered, but the step ran: %v", err)
	}
	if st := taskStatus(t, db, id3); st != store.TaskBlocked {
		t.Errorf("task %s is %s, want blocked", id3, st)
	}
	recs, err := db.Decisions(ctx, store.AuditFilter{Session: "kanban:" + id3})
	if err != nil {
		t.Fatal(err)
	}
	var asked string
	for _, d := range recs {
		if d.RequestID != "" {
			asked = d.RequestID
		}
	}
	if r, err := db.GetRequest(ctx, asked); err != nil || r.State != store.Expired {
		t.Errorf("the unanswered request %q: %+v %v, want expired", asked, r, err)
	}
	for _, h := range []*clusterHost{a, b} {
		if out, err := c.cli("audit", "verify", "--state", h.state); err != nil || !strings.Contains(out, "audit chain ok") {
			t.Errorf("warden audit verify on host %s: %v\n%s", h.name, err, out)
		}
	}
	if t.Failed() {
		for _, h := range []*clusterHost{a, b} {
			t.Logf("host %s:\n%s", h.name, h.p.output())
		}
	}
}
