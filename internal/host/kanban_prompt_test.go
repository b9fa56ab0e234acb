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
			llmtest.Call("terminal", `{"command":"echo checked"}`),
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

// TestKanbanPromptTask: a prompt task's worker has the host run the
// agent as the task's run; its tool calls are decided as that kanban
// owner, and the kanban tools act on that task only.
func TestKanbanPromptTask(t *testing.T) {
	model := llmtest.New(t, kanbanModel)
	cfg := newConfig(t)
	if err := os.WriteFile(cfg.ConfigPath, []byte(fmt.Sprintf("llm:\n  base_url: %s\n  model: m\n  max_retries: 0\n", model.URL())), 0o600); err != nil {
		t.Fatal(err)
	}
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
	step := stepOutput(t, card, "Tidy up.")
	if step.Verdict != "agent" || !strings.Contains(step.Output, "→ terminal") || !strings.Contains(step.Output, "BLOCKED") {
		t.Fatalf("the run's step: %+v", step)
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
	ds, err := th.st.Decisions(ctx, store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
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
