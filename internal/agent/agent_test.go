package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wardenhq/warden/internal/llm"
	"github.com/wardenhq/warden/internal/llm/llmtest"
	"github.com/wardenhq/warden/internal/llm/openai"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner/runnertest"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
	"github.com/wardenhq/warden/internal/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture is the real thing: SQLite store, gate, runner with a
// terminal, and the model behind a fake Chat Completions server on
// loopback reached through the openai adapter.
type fixture struct {
	db  *sqlite.DB
	srv *llmtest.Server
	ag  *Agent
	dir string
}

func newFixture(t testing.TB, policy string, h llmtest.Handler) *fixture {
	t.Helper()
	dir := t.TempDir()
	rf := runnertest.New(t, runnertest.Options{Policy: policy, Dir: dir})
	srv := llmtest.New(t, h)
	model, err := openai.New(openai.Options{BaseURL: srv.URL(), Model: "test-model", MaxRetries: 0, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	files := tools.Files{Root: dir}
	if err := files.WriteFile("work/.keep", nil); err != nil {
		t.Fatal(err)
	}
	return &fixture{db: rf.DB, srv: srv, dir: work, ag: New(Options{Model: model, Exec: rf.Runner, Conversations: rf.DB, MaxTurns: 5})}
}

func as(t testing.TB, o owner.Owner, err error) context.Context {
	t.Helper()
	return runnertest.As(t, o, err)
}

func cronCtx(t testing.TB, job, run string) context.Context { return runnertest.Cron(t, job, run) }

// toolMessages are the tool results the model was sent, in order.
func toolMessages(reqs []llmtest.Request) []string {
	var out []string
	if len(reqs) == 0 {
		return nil
	}
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "tool" {
			out = append(out, m.Content)
		}
	}
	return out
}

func TestToolCallsAreDecidedAsTheOwner(t *testing.T) {
	tests := []struct {
		name     string
		policy   string
		call     llmtest.ToolCall
		wantTool string // substring of the tool result the model gets
		blocked  int
	}{
		{"safe command runs", "", llmtest.Call("terminal", `{"command":"echo hello from the tool"}`), "hello from the tool\n[exit status 0]", 0},
		{"dangerous command denied for cron", "", llmtest.Call("terminal", `{"command":"rm -rf ./build"}`), "BLOCKED:", 1},
		{"dangerous command approved by cron_mode", "approvals:\n  cron_mode: approve\n", llmtest.Call("terminal", `{"command":"rm -rf ./build && echo gone"}`), "gone", 0},
		{"hardline blocked even when approved", "approvals:\n  cron_mode: approve\n", llmtest.Call("terminal", `{"command":"rm -rf /"}`), "BLOCKED:", 1},
		{"code is decided", "", llmtest.Call("execute_code", `{"language":"sh","source":"rm -rf ./x"}`), "BLOCKED:", 1},
		{"write inside the work dir", "approvals:\n  cron_mode: approve\n", llmtest.Call("write_file", `{"path":"notes.txt","content":"hi"}`), "wrote 2 bytes to notes.txt", 0},
		{"invalid arguments", "", llmtest.Call("terminal", `{"command":`), "not a JSON object", 0},
		{"unknown tool", "", llmtest.Call("launch_rockets", `{}`), "there is no tool named launch_rockets", 0},
		{"kanban tools only for workers", "", llmtest.Call("kanban_complete", `{"summary":"x"}`), "there is no tool named kanban_complete", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.policy, llmtest.Script(llmtest.Calls(tc.call), llmtest.Text("all done")))
			var events []Event
			res, err := f.ag.Run(cronCtx(t, "j", "r1"), Run{Conversation: "c1", Dir: f.dir, Emit: func(e Event) { events = append(events, e) }}, "do the thing")
			if err != nil {
				t.Fatal(err)
			}
			if res.Reply != "all done" || res.Turns != 2 || res.Calls != 1 || res.Blocked != tc.blocked {
				t.Fatalf("result %+v", res)
			}
			got := toolMessages(f.srv.Requests())
			if len(got) != 1 || !strings.Contains(got[0], tc.wantTool) {
				t.Fatalf("tool result sent to the model: %q, want it to contain %q", got, tc.wantTool)
			}
			if tc.blocked > 0 && !strings.Contains(got[0], "Do not retry") {
				t.Errorf("a denial must tell the model not to retry variations: %q", got[0])
			}
			// The decision was audited as the cron run, never as anyone else.
			if tc.call.Name == "terminal" || tc.call.Name == "execute_code" || tc.call.Name == "write_file" {
				if !strings.Contains(tc.wantTool, "not a JSON") {
					ds, err := f.db.Decisions(t.Context(), store.AuditFilter{})
					if err != nil {
						t.Fatal(err)
					}
					if len(ds) == 0 || ds[len(ds)-1].OwnerText != "cron:j,run=r1" {
						t.Fatalf("audit: %+v", ds)
					}
				}
			}
		})
	}
}

func TestDenialGoesBackAndTheModelStops(t *testing.T) {
	// The model tries, is blocked, then answers in words: the run ends
	// with the words, and the blocked command never ran.
	f := newFixture(t, "", llmtest.Script(
		llmtest.Calls(llmtest.Call("terminal", `{"command":"touch made && rm -rf ./made"}`)),
		llmtest.Text("I could not delete it; it needs your approval."),
	))
	var kinds []EventKind
	res, err := f.ag.Run(cronCtx(t, "j", "r1"), Run{Dir: f.dir, Emit: func(e Event) { kinds = append(kinds, e.Kind) }}, "clean up")
	if err != nil {
		t.Fatal(err)
	}
	if res.Blocked != 1 || !strings.Contains(res.Reply, "needs your approval") {
		t.Fatalf("result %+v", res)
	}
	files := tools.Files{Root: f.dir}
	if _, err := files.ReadFile("made"); err == nil {
		t.Fatal("the blocked command ran")
	}
	want := []EventKind{ToolCall, Blocked, Text}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
}

func TestTurnCap(t *testing.T) {
	f := newFixture(t, "", func(llmtest.Request) llmtest.Reply {
		return llmtest.Calls(llmtest.Call("terminal", `{"command":"true"}`))
	})
	res, err := f.ag.Run(cronCtx(t, "j", "r1"), Run{Dir: f.dir}, "loop forever")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Capped || res.Turns != 5 || len(f.srv.Requests()) != 5 || !strings.Contains(res.Reply, "Stopped after 5") {
		t.Fatalf("result %+v after %d requests", res, len(f.srv.Requests()))
	}
}

func TestConversationContinues(t *testing.T) {
	f := newFixture(t, "", llmtest.Script(llmtest.Text("first answer"), llmtest.Text("second answer")))
	o, err := owner.SingleQuery().WithSession("k1")
	ctx := as(t, o, err)
	if _, err := f.ag.Run(ctx, Run{Conversation: "k1", Dir: f.dir}, "first question"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ag.Run(ctx, Run{Conversation: "k1", Dir: f.dir}, "second question"); err != nil {
		t.Fatal(err)
	}
	reqs := f.srv.Requests()
	var got []string
	for _, m := range reqs[1].Messages {
		got = append(got, m.Role+":"+m.Content)
	}
	want := []string{"system:" + DefaultSystem, "user:first question", "assistant:first answer", "user:second question"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("second request messages:\n%q\nwant\n%q", got, want)
	}
	stored, err := f.db.Messages(t.Context(), "k1", 0)
	if err != nil || len(stored) != 4 {
		t.Fatalf("stored %d messages (%v), want 4", len(stored), err)
	}
}

func TestStreamingEmitsDeltas(t *testing.T) {
	f := newFixture(t, "", llmtest.Script(llmtest.Reply{Text: "streamed reply text", ChunkSize: 3}))
	var b strings.Builder
	deltas := 0
	res, err := f.ag.Run(cronCtx(t, "j", "r"), Run{Dir: f.dir, Stream: true, Emit: func(e Event) {
		if e.Kind == Text && e.Delta {
			deltas++
			b.WriteString(e.Text)
		}
	}}, "hi")
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != "streamed reply text" || res.Reply != "streamed reply text" || deltas < 3 {
		t.Fatalf("deltas %d joined %q, reply %q", deltas, b.String(), res.Reply)
	}
	if !f.srv.Requests()[0].Stream {
		t.Fatal("the request was not streamed")
	}
}

func TestRunNeedsOwnerAndModel(t *testing.T) {
	f := newFixture(t, "", llmtest.Script())
	if _, err := f.ag.Run(context.Background(), Run{Dir: f.dir}, "hi"); !errors.Is(err, ErrNoOwner) {
		t.Errorf("without an owner: %v, want ErrNoOwner", err)
	}
	none := New(Options{Exec: f.ag.o.Exec})
	if none.Configured() {
		t.Error("an agent without a model says it is configured")
	}
	if _, err := none.Run(cronCtx(t, "j", "r"), Run{Dir: f.dir}, "hi"); !errors.Is(err, llm.ErrNotConfigured) {
		t.Errorf("without a model: %v, want ErrNotConfigured", err)
	}
	if len(f.srv.Requests()) != 0 {
		t.Error("the model was called")
	}
}

func TestModelErrorsEndTheRun(t *testing.T) {
	f := newFixture(t, "", llmtest.Script(llmtest.Error(500, "overloaded")))
	_, err := f.ag.Run(cronCtx(t, "j", "r"), Run{Dir: f.dir}, "hi")
	if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "overloaded") {
		t.Fatalf("err %v, want ErrUnavailable with the server's message", err)
	}
}

// TestConcurrentOwnersNeverMix: one Agent serves many owners at once;
// each tool call is decided and audited as the owner of its own run.
func TestConcurrentOwnersNeverMix(t *testing.T) {
	f := newFixture(t, "", func(r llmtest.Request) llmtest.Reply {
		for _, m := range r.Messages {
			if m.Role == "tool" {
				return llmtest.Text("done")
			}
		}
		// The job's name is in the prompt; echo it from a tool call.
		last := r.Messages[len(r.Messages)-1].Content
		return llmtest.Calls(llmtest.Call("terminal", fmt.Sprintf(`{"command":"echo %s"}`, last)))
	})
	const n = 12
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			job := fmt.Sprintf("job%d", i)
			if _, err := f.ag.Run(cronCtx(t, job, "r"), Run{Dir: f.dir}, job); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	ds, err := f.db.Decisions(t.Context(), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != n {
		t.Fatalf("%d decisions, want %d", len(ds), n)
	}
	for _, d := range ds {
		job := strings.TrimPrefix(d.Payload, "echo ")
		if d.OwnerText != "cron:"+job+",run=r" {
			t.Errorf("%q was decided as %s", d.Payload, d.OwnerText)
		}
	}
}

func TestTrimHistory(t *testing.T) {
	u := llm.Message{Role: llm.User, Content: "u"}
	a := llm.Message{Role: llm.Assistant, Content: "a"}
	tool := llm.Message{Role: llm.Tool, Content: "t", ToolCallID: "1"}
	tests := []struct {
		in, want []llm.Message
	}{
		{nil, nil},
		{[]llm.Message{tool, a}, nil},
		{[]llm.Message{tool, a, u, a}, []llm.Message{u, a}},
		{[]llm.Message{u, {Role: llm.System, Content: "s"}, a}, []llm.Message{u, a}},
	}
	for _, tc := range tests {
		if got := trimHistory(tc.in); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("trimHistory(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// releaseRecorder is the agent's view of the MCP servers with no tools;
// it records which owners' sessions were released.
type releaseRecorder struct {
	mu       sync.Mutex
	released []string
}

func (r *releaseRecorder) Tools(context.Context, owner.Owner) ([]MCPTool, error) { return nil, nil }
func (r *releaseRecorder) Call(context.Context, owner.Owner, string, string, map[string]any) (MCPResult, error) {
	return MCPResult{}, errors.New("no tools")
}
func (r *releaseRecorder) Release(_ context.Context, o owner.Owner) {
	r.mu.Lock()
	r.released = append(r.released, o.String())
	r.mu.Unlock()
}

// TestPromptReleasesMCPSessions: a one-shot run (cron, kanban) ends its
// owner's MCP sessions; a conversation's run keeps them.
func TestPromptReleasesMCPSessions(t *testing.T) {
	f := newFixture(t, "", llmtest.Script(llmtest.Text("one"), llmtest.Text("two")))
	rec := &releaseRecorder{}
	ag := New(Options{Model: f.ag.o.Model, Exec: f.ag.o.Exec, MCP: rec})
	if _, err := ag.Run(cronCtx(t, "j", "r1"), Run{Dir: f.dir}, "hi"); err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Prompt(cronCtx(t, "j", "r2"), "c", f.dir, "hi", nil); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rec.released) != "[cron:j,run=r2]" {
		t.Fatalf("released %v, want only the prompt run's owner", rec.released)
	}
}
