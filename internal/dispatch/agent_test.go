package dispatch

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/wardenhq/warden/internal/board"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/llm/llmtest"
	"github.com/wardenhq/warden/internal/llm/openai"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
)

// modelKey is the host's model key in these tests: it must reach the
// model and nothing a worker sees.
const modelKey = "sk-host-model-key-93c1d7"

// agentScript is a prompt task's model: it runs a safe command, writes
// a file, runs a program, tries a dangerous command (denied under
// kanban_mode deny), reads back what the command made, comments and
// completes. Each request's last tool result is checked against what
// the worker must have told it, and recorded in seen.
func agentScript(seen *results) llmtest.Handler {
	steps := []llmtest.ToolCall{
		llmtest.Call("terminal", `{"command":"env > env.txt; echo made > made.txt; echo ran"}`),
		llmtest.Call("write_file", `{"path":"notes/out.txt","content":"written by the agent\n"}`),
		llmtest.Call("execute_code", `{"language":"sh","source":"echo code-ran > code.txt; echo 42"}`),
		llmtest.Call("terminal", `{"command":"rm -rf build"}`),
		llmtest.Call("read_file", `{"path":"made.txt"}`),
		llmtest.Call("kanban_comment", `{"body":"halfway"}`),
		llmtest.Call("kanban_complete", `{"summary":"made, wrote, ran; the delete was refused"}`),
	}
	return func(r llmtest.Request) llmtest.Reply {
		tools := 0
		last := ""
		for _, m := range r.Messages {
			if m.Role == "tool" {
				tools++
				last = m.Content
			}
		}
		if tools > 0 {
			seen.add(last)
		}
		if tools < len(steps) {
			return llmtest.Calls(steps[tools])
		}
		return llmtest.Text("all done")
	}
}

// results are the tool results the model was sent, in order.
type results struct {
	mu sync.Mutex
	s  []string
}

func (r *results) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.s = append(r.s, s)
}

func (r *results) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.s...)
}

// checkAgentRun checks what a prompt task's run left: the files its
// allowed actions made in the workspace, the directory its denied one
// did not delete, the host's verdicts in the run's history, the results
// the model was told, and that the model's key reached the model only.
func checkAgentRun(t *testing.T, h *testHost, srv *llmtest.Server, r *results, work, runID, workerSaw string) {
	t.Helper()
	seen := r.all()
	for name, want := range map[string]string{"made.txt": "made\n", "notes/out.txt": "written by the agent\n", "code.txt": "code-ran\n"} {
		if b, err := os.ReadFile(filepath.Join(work, name)); err != nil || string(b) != want {
			t.Errorf("%s in the workspace: %q, %v", name, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "build")); err != nil {
		t.Errorf("the denied delete ran: %v", err)
	}
	env, _ := os.ReadFile(filepath.Join(work, "env.txt"))
	if !strings.Contains(string(env), "PATH=") || strings.Contains(string(env), modelKey) || strings.Contains(string(env), "MODEL_KEY") {
		t.Errorf("the agent's command's environment:\n%s", env)
	}
	run, err := h.db.GetRun(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	type step struct{ cmd, verdict, rule string }
	var got []step
	for _, s := range run.Steps {
		got = append(got, step{s.Command, s.Verdict, s.Rule})
	}
	if len(run.Steps) != 4 || run.Status != store.TaskRunSucceeded ||
		run.Steps[0].Command != "env > env.txt; echo made > made.txt; echo ran" || run.Steps[0].Verdict != "allow" || run.Steps[0].ExitCode != 0 || run.Steps[0].Output != "ran\n" ||
		run.Steps[1].Command != "write_file "+filepath.Join(work, "notes/out.txt")+" (21 bytes)" || run.Steps[1].Verdict != "allow" || run.Steps[1].ExitCode != 0 ||
		!strings.HasPrefix(run.Steps[2].Command, "execute_code (sh):") || run.Steps[2].Verdict != "allow" || run.Steps[2].Output != "42\n" ||
		run.Steps[3].Command != "rm -rf build" || run.Steps[3].Verdict != "deny" || run.Steps[3].Rule != gate.RuleKanbanMode || run.Steps[3].ExitCode != -1 {
		t.Errorf("the run's history: %+v (%+v)", got, run)
	}
	// The model heard what the worker ran and what the host refused.
	want := []string{"ran\n[exit status 0]", "wrote 21 bytes to notes/out.txt", "42\n[exit status 0]", "BLOCKED: ", "made\n", "ok", "ok"}
	if len(seen) != len(want) {
		t.Fatalf("the model saw %d results, want %d: %q", len(seen), len(want), seen)
	}
	for i, w := range want {
		if !strings.HasPrefix(seen[i], w) {
			t.Errorf("result %d: %q, want %q…", i, seen[i], w)
		}
	}
	// The model was called with the host's key and the host's record of
	// the task, every time.
	for _, r := range srv.Requests() {
		if r.Header.Get("Authorization") != "Bearer "+modelKey {
			t.Errorf("model request %d: Authorization %q", r.Seq, r.Header.Get("Authorization"))
		}
		if len(r.Messages) < 2 || r.Messages[0].Role != "system" || !strings.HasPrefix(r.Messages[1].Content, "Tidy the workspace.") {
			t.Errorf("model request %d: %+v", r.Seq, r.Messages[:min(2, len(r.Messages))])
		}
	}
	// Nothing the worker had or was told holds the key or the model's
	// address.
	if workerSaw == "" || !strings.Contains(workerSaw, `"model":{"message"`) {
		t.Fatalf("no trace of what the worker was told:\n%s", workerSaw)
	}
	host := strings.TrimPrefix(strings.TrimSuffix(srv.URL(), "/v1/"), "http://")
	for _, secret := range []string{modelKey, host} {
		if strings.Contains(workerSaw, secret) {
			t.Errorf("the worker saw %q:\n%s", secret, workerSaw)
		}
	}
	comments, err := h.db.Comments(t.Context(), run.Task)
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, c := range comments {
		bodies = append(bodies, c.Body)
	}
	if strings.Join(bodies, "|") != "halfway|made, wrote, ran; the delete was refused" {
		t.Errorf("comments: %q", bodies)
	}
}

// hostSetupWithModel gives the host its model client: the test double with the host's
// key. The worker's environment carries the same variable, and the
// operator's passthrough names it: it is withheld all the same.
func hostSetupWithModel(t *testing.T, srv *llmtest.Server, s hostSetup) hostSetup {
	t.Helper()
	m, err := openai.New(openai.Options{BaseURL: srv.URL(), Model: "m", APIKey: modelKey})
	if err != nil {
		t.Fatal(err)
	}
	s.model = m
	s.environ = append(testEnviron(t), "HOST_MODEL_KEY="+modelKey)
	s.passthrough = []string{"HOST_MODEL_KEY"}
	s.withhold = []string{"HOST_MODEL_KEY"}
	return s
}

// TestLocalWorkerRunsTheAgent: a prompt task's local worker runs the
// agent loop itself; the host answers its model calls with the host's
// key and decides every action as the run.
func TestLocalWorkerRunsTheAgent(t *testing.T) {
	seen := &results{}
	srv := llmtest.New(t, agentScript(seen))
	h := startHost(t, hostSetupWithModel(t, srv, hostSetup{kanbanMode: "deny"}))
	work := t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "build"), 0o700); err != nil {
		t.Fatal(err)
	}
	tk := h.add(t, board.NewTask{Title: "tidy", Prompt: "Tidy the workspace.", Workspace: "dir:" + work})
	tk = h.waitTask(t, tk.ID, "done", status(store.TaskDone, store.TaskBlocked))
	card, err := h.board.Show(t.Context(), tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Status != store.TaskDone || len(card.Runs) != 1 {
		t.Fatalf("task %s: %+v", tk.Status, card)
	}
	log := readLog(t, card.Runs[0].Log)
	checkAgentRun(t, h, srv, seen, work, card.Runs[0].ID, log)
	if strings.Contains(log, "HOST_MODEL_KEY") {
		t.Errorf("the worker's environment names the model's key:\n%s", log)
	}
}

// TestRemoteWorkerRunsTheAgent: the same over TLS from "another
// machine": the remote worker runs the agent loop and its actions in its
// own sandbox and workspace.
func TestRemoteWorkerRunsTheAgent(t *testing.T) {
	seen := &results{}
	srv := llmtest.New(t, agentScript(seen))
	work := t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "build"), 0o700); err != nil {
		t.Fatal(err)
	}
	tk := store.Task{ID: "remote-agent", Title: "tidy", Prompt: "Tidy the workspace.", Workspace: store.WorkspaceScratch}
	var ticket Ticket
	h := startHost(t, hostSetupWithModel(t, srv, hostSetup{kanbanMode: "deny", remote: true, concurrency: 1, beforeRun: func(d *Dispatcher, db *sqlite.DB) {
		ticket = issue(t, d, db, tk)
	}}))
	w := startRemote(t, h, tk.ID, ticket.Token, h.pin, work)
	if err := w.wait(t); err != nil {
		t.Fatalf("remote worker: %v\nstdout:\n%s\nstderr:\n%s", err, w.stdout.String(), w.stderr.String())
	}
	got := h.waitTask(t, tk.ID, "done", status(store.TaskDone, store.TaskBlocked))
	if got.Status != store.TaskDone {
		t.Fatalf("task %s; worker:\n%s\n%s", got.Status, w.stdout.String(), w.stderr.String())
	}
	checkAgentRun(t, h, srv, seen, work, ticket.Run, w.stderr.String())
}

// TestWorkerAgentWithoutModel: with no model on the host, a prompt
// task's run fails with the reason (and the task is blocked at the
// failure limit); nothing ran.
func TestWorkerAgentWithoutModel(t *testing.T) {
	h := startHost(t, hostSetup{kanbanMode: "deny", failureLimit: 1})
	tk := h.add(t, board.NewTask{Title: "think", Prompt: "Think."})
	tk = h.waitTask(t, tk.ID, "blocked", status(store.TaskBlocked, store.TaskDone))
	if tk.Status != store.TaskBlocked || !strings.Contains(tk.LastError, "no model configured") {
		t.Fatalf("task %+v", tk)
	}
}

// TestWorkerAgentCannotReadTheHostKey: the agent in a worker tries to
// read the host's model key out of the host process's environment, in
// several spellings, as commands and as a program. Whatever the gate
// says of each, nothing in the workspace holds the key afterwards: the
// worker's commands and programs run in its sandbox, with the host's
// process out of sight, and the key was never in the worker's own
// environment.
func TestWorkerAgentCannotReadTheHostKey(t *testing.T) {
	t.Setenv("HOST_MODEL_KEY", modelKey) // as a real host has it
	pid := strconv.Itoa(os.Getpid())
	tries := []llmtest.ToolCall{
		llmtest.Call("terminal", mustJSON(map[string]string{"command": "cat /proc/" + pid + "/environ > leak1.txt"})),
		llmtest.Call("terminal", mustJSON(map[string]string{"command": "p=/proc/" + pid + "; tr '\\0' '\\n' < $p/environ > leak2.txt"})),
		llmtest.Call("terminal", `{"command":"for e in /proc/*/environ; do cat $e; done > leak3.txt 2>/dev/null; true"}`),
		llmtest.Call("execute_code", mustJSON(map[string]string{"language": "sh", "source": "cat /proc/" + pid + "/environ > leak4.txt"})),
		llmtest.Call("terminal", `{"command":"env > leak5.txt; cat /proc/self/environ /proc/$PPID/environ >> leak5.txt"}`),
	}
	srv := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		n := 0
		for _, m := range r.Messages {
			if m.Role == "tool" {
				n++
			}
		}
		if n < len(tries) {
			return llmtest.Calls(tries[n])
		}
		return llmtest.Text("done")
	})
	h := startHost(t, hostSetupWithModel(t, srv, hostSetup{kanbanMode: "approve"}))
	work := t.TempDir()
	tk := h.add(t, board.NewTask{Title: "peek", Prompt: "Find the key.", Workspace: "dir:" + work})
	tk = h.waitTask(t, tk.ID, "done", status(store.TaskDone, store.TaskBlocked))
	card, err := h.board.Show(t.Context(), tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(card.Runs) != 1 || len(card.Runs[0].Steps) != len(tries) {
		t.Fatalf("task %s, runs %+v", tk.Status, card.Runs)
	}
	ents, err := os.ReadDir(work)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(work, e.Name()))
		if strings.Contains(string(b), modelKey) {
			t.Errorf("%s holds the host's model key", e.Name())
		}
	}
	for _, s := range card.Runs[0].Steps {
		if strings.Contains(s.Output, modelKey) {
			t.Errorf("step %q printed the key", s.Command)
		}
	}
	if log := readLog(t, card.Runs[0].Log); strings.Contains(log, modelKey) {
		t.Errorf("the worker's log holds the key")
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
