package host

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/llm/llmtest"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
)

// kanbanModel is a worker's model: for a task titled "tidy DIR" it runs
// a safe command, tries a dangerous one (denied: kanban_mode deny),
// comments, and completes; for "stuck" it blocks the task; for "quiet"
// it only answers in words.
func kanbanModel(r llmtest.Request) llmtest.Reply {
	var user string
	tools := 0
	for _, m := range r.Messages {
		if m.Role == "user" && user == "" {
			user = m.Content
		}
		if m.Role == "tool" {
			tools++
		}
	}
	title := user[strings.LastIndex(user, "Your kanban task: ")+len("Your kanban task: "):]
	switch {
	case strings.HasPrefix(title, "tidy "):
		dir := strings.TrimPrefix(title, "tidy ")
		steps := []llmtest.ToolCall{
			llmtest.Call("terminal", `{"command":"echo checked && env > env.txt"}`),
			// Relative to the task's workspace: a path under /tmp (or a cd
			// there) would make the delete a temporary one.
			llmtest.Call("terminal", mustJSON(map[string]string{"command": "rm -rf " + filepath.Base(dir)})),
			llmtest.Call("kanban_comment", `{"body":"could not delete; needs a human"}`),
			llmtest.Call("kanban_complete", `{"summary":"checked; deletion refused"}`),
		}
		if tools < len(steps) {
			return llmtest.Calls(steps[tools])
		}
		return llmtest.Text("finished")
	case title == "stuck":
		if tools == 0 {
			return llmtest.Calls(llmtest.Call("kanban_block", `{"reason":"needs credentials"}`))
		}
		return llmtest.Text("blocked it")
	}
	return llmtest.Text("nothing to do for " + title)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestKanbanPromptTask: a prompt task's worker runs the agent loop
// itself, its model calls answered by the host with the host's key; its
// tool calls are decided as the task's run (the host's record), run in
// the worker's workspace, and the kanban tools act on that task only.
// The model's key reaches the model and never the worker's steps, even
// when tools.env_passthrough names it.
func TestKanbanPromptTask(t *testing.T) {
	const key = "sk-wloop-host-only-4242"
	model := llmtest.New(t, kanbanModel)
	cfg := newConfig(t)
	cfg.Environ = append(cfg.Environ, "WLOOP_MODEL_KEY="+key)
	conf := fmt.Sprintf("llm:\n  base_url: %s\n  model: m\n  max_retries: 0\n  api_key_env: WLOOP_MODEL_KEY\ntools:\n  env_passthrough: [WLOOP_MODEL_KEY]\n", model.URL())
	writeConfig(t, cfg, conf)
	th := startHost(t, cfg)
	ctx := t.Context()
	ws := t.TempDir()
	target := filepath.Join(ws, "keep")
	mkdir(t, target)

	tidy, err := th.client.AddKanbanTask(ctx, localapi.KanbanAddRequest{Title: "tidy " + target, Prompt: "Tidy up.", Workspace: "dir:" + ws})
	if err != nil {
		t.Fatal(err)
	}
	card := waitTask(t, th.client, tidy.ID, store.TaskDone)
	if _, err := os.Stat(target); err != nil {
		t.Fatalf("the denied command ran: %v", err)
	}
	// The run's history is the host's decisions, one step per action.
	if step := stepOutput(t, card, "echo checked && env > env.txt"); step.Verdict != "allow" || step.ExitCode != 0 || step.Output != "checked\n" {
		t.Errorf("the safe command's step: %+v", step)
	}
	if step := stepOutput(t, card, "rm -rf keep"); step.Verdict != "deny" || step.Rule != gate.RuleKanbanMode || step.ExitCode != -1 {
		t.Errorf("the dangerous command's step: %+v", step)
	}
	env, err := os.ReadFile(filepath.Join(ws, "env.txt"))
	if err != nil {
		t.Fatalf("the safe command did not run in the workspace: %v", err)
	}
	if strings.Contains(string(env), key) || strings.Contains(string(env), "WLOOP_MODEL_KEY") || !strings.Contains(string(env), "PATH=") {
		t.Errorf("the worker's command's environment:\n%s", env)
	}
	for _, r := range model.Requests() {
		if got := r.Header.Get("Authorization"); got != "Bearer "+key {
			t.Errorf("model request %d: Authorization %q: the host's key was not used", r.Seq, got)
		}
	}
	var comments []string
	for _, c := range card.Comments {
		comments = append(comments, c.Author+": "+c.Body)
		if !strings.HasPrefix(c.Author, "kanban:"+tidy.ID) {
			t.Errorf("comment by %s", c.Author)
		}
	}
	if got := strings.Join(comments, "|"); !strings.Contains(got, "could not delete; needs a human") || !strings.Contains(got, "checked; deletion refused") {
		t.Errorf("comments: %s", got)
	}
	ds := th.decisions(t)
	denied := 0
	for _, d := range ds {
		if !strings.HasPrefix(d.OwnerText, "kanban:"+tidy.ID) {
			t.Errorf("decided as %s: %s", d.OwnerText, d.Payload)
		}
		if d.Verdict == "deny" && d.Rule == gate.RuleKanbanMode {
			denied++
		}
	}
	if denied != 1 {
		t.Errorf("%d kanban_mode denials, want 1: %+v", denied, ds)
	}

	stuck, err := th.client.AddKanbanTask(ctx, localapi.KanbanAddRequest{Title: "stuck", Prompt: "Deploy."})
	if err != nil {
		t.Fatal(err)
	}
	if card := waitTask(t, th.client, stuck.ID, store.TaskBlocked); !strings.Contains(card.LastError+fmt.Sprint(card.Comments), "needs credentials") {
		t.Errorf("blocked task: %+v", card)
	}

	quiet, err := th.client.AddKanbanTask(ctx, localapi.KanbanAddRequest{Title: "quiet", Prompt: "Look around."})
	if err != nil {
		t.Fatal(err)
	}
	card = waitTask(t, th.client, quiet.ID, store.TaskDone)
	if len(card.Comments) != 1 || card.Comments[0].Body != "nothing to do for quiet" {
		t.Errorf("a task the agent ended in words: %+v", card.Comments)
	}
}

// TestKanbanPromptWithoutModel: with no model the prompt task's runs
// fail with the reason until the task is blocked.
func TestKanbanPromptWithoutModel(t *testing.T) {
	th := startHost(t, newConfig(t))
	task, err := th.client.AddKanbanTask(t.Context(), localapi.KanbanAddRequest{Title: "think", Prompt: "Think."})
	if err != nil {
		t.Fatal(err)
	}
	card := waitTask(t, th.client, task.ID, store.TaskBlocked)
	if !strings.Contains(card.LastError, "no model configured") {
		t.Fatalf("last error %q", card.LastError)
	}
}
