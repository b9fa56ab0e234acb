package workerapi

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/llm"
	"github.com/wardenhq/warden/internal/llm/llmtest"
	"github.com/wardenhq/warden/internal/llm/openai"
	"github.com/wardenhq/warden/internal/store"
)

// hostKey is the host's model key: the model must see it, a worker
// never.
const hostKey = "sk-host-only-7f3a9b"

// hostModel is the host's model client for srv, with the host's key.
func hostModel(t *testing.T, url string) llm.Client {
	t.Helper()
	m, err := openai.New(openai.Options{BaseURL: url, Model: "m", APIKey: hostKey})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// tape records every line the host sends a worker.
type tape struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *tape) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *tape) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// promptWorker says hello for a new prompt task and records what the
// host tells it.
func (e *env) promptWorker(t *testing.T) (*Client, Hello, store.TaskRun, *tape) {
	t.Helper()
	tk, r, secret := e.claimedTask(t, os.Getpid(), store.Task{Prompt: "Fix the build.", Body: "It fails on main."})
	c := e.dial(t)
	tp := &tape{}
	c.Trace(tp)
	h, err := c.Hello(t.Context(), secret, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	return c, h, r, tp
}

func hasCode(err error, code Code) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// TestModelIsTheHosts: the host holds a prompt task's conversation and
// calls its model with its own key; the worker adds only the results of
// the calls the model made — each once, none invented, none left out,
// none too large — and nothing after the model ended its turn or the
// run ended. The key and the model's address never reach the worker.
func TestModelIsTheHosts(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script(
		llmtest.Calls(llmtest.ToolCall{ID: "c1", Name: "terminal", Arguments: `{"command":"make"}`},
			llmtest.ToolCall{ID: "c2", Name: "read_file", Arguments: `{"path":"go.mod"}`}),
		llmtest.Text("fixed"),
	))
	e := newEnv(t, "deny", func(o *Options) { o.Model = hostModel(t, srv.URL()) })
	ctx := t.Context()
	c, h, r, tp := e.promptWorker(t)
	if h.Task.Prompt != "Fix the build." || h.MaxTurns <= 0 {
		t.Errorf("hello: %+v", h)
	}
	// Results before the model made any call are forged.
	if _, err := c.Model(ctx, []ToolResult{{CallID: "c1", Content: "ok"}}); !hasCode(err, CodeBadRequest) {
		t.Errorf("results before any call: %v", err)
	}
	rep, err := c.Model(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Message.ToolCalls) != 2 || rep.Message.Role != llm.Assistant {
		t.Fatalf("reply: %+v", rep)
	}
	for name, bad := range map[string][]ToolResult{
		"an invented call":  {{CallID: "c1", Content: "ok"}, {CallID: "c9", Content: "ok"}},
		"a call twice":      {{CallID: "c1", Content: "ok"}, {CallID: "c1", Content: "ok"}},
		"a call left out":   {{CallID: "c1", Content: "ok"}},
		"a result too long": {{CallID: "c1", Content: strings.Repeat("x", MaxToolResult+1)}, {CallID: "c2", Content: "ok"}},
	} {
		if _, err := c.Model(ctx, bad); !hasCode(err, CodeBadRequest) {
			t.Errorf("%s: %v, want bad_request", name, err)
		}
	}
	rep, err = c.Model(ctx, []ToolResult{{CallID: "c2", Content: "module x"}, {CallID: "c1", Content: "ok\n[exit status 0]"}})
	if err != nil || rep.Message.Content != "fixed" {
		t.Fatalf("second call: %+v, %v", rep, err)
	}
	// The turn is over: no more model calls for this run.
	if _, err := c.Model(ctx, nil); !errors.Is(err, ErrRefused) {
		t.Errorf("a model call after the model ended its turn: %v", err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2 (no refused call reached the model)", len(reqs))
	}
	last := reqs[1]
	if len(last.Messages) != 5 || last.Messages[0].Role != "system" || last.Messages[1].Content != "Fix the build.\n\nYour kanban task: "+h.Task.Title+"\n\nIt fails on main." ||
		last.Messages[3].ToolCallID != "c2" || last.Messages[4].Content != "ok\n[exit status 0]" {
		t.Errorf("the host's conversation: %+v", last.Messages)
	}
	if len(last.Tools) == 0 || last.Tools[0].Name != "terminal" {
		t.Errorf("tools offered: %v", last.ToolNames())
	}
	for _, q := range reqs {
		if q.Header.Get("Authorization") != "Bearer "+hostKey {
			t.Errorf("model request %d: Authorization %q", q.Seq, q.Header.Get("Authorization"))
		}
	}
	if _, err := c.Complete(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Model(ctx, nil); !errors.Is(err, ErrEnded) {
		t.Errorf("a model call after the run ended: %v", err)
	}
	saw := tp.String()
	if !strings.Contains(saw, `"fixed"`) {
		t.Fatalf("the tape missed the host's messages:\n%s", saw)
	}
	for _, secret := range []string{hostKey, strings.TrimSuffix(strings.TrimPrefix(srv.URL(), "http://"), "/v1/")} {
		if strings.Contains(saw, secret) {
			t.Errorf("the worker was told %q:\n%s", secret, saw)
		}
	}
	run, err := e.db.GetRun(ctx, r.ID)
	if err != nil || len(run.Steps) != 0 {
		t.Errorf("model calls are not steps: %+v, %v", run.Steps, err)
	}
}

// TestModelRefusals: no model on the host, a script task's run, the turn
// cap, a conversation over its bound, a failing model (whose error names
// the key, as providers' 401s do): each is refused without passing
// anything of the host's on.
func TestModelRefusals(t *testing.T) {
	ctx := t.Context()
	t.Run("no model", func(t *testing.T) {
		e := newEnv(t, "deny", nil)
		c, _, _, _ := e.promptWorker(t)
		if _, err := c.Model(ctx, nil); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "no model configured") {
			t.Errorf("model with no model: %v", err)
		}
	})
	t.Run("script task", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Script())
		e := newEnv(t, "deny", func(o *Options) { o.Model = hostModel(t, srv.URL()) })
		c, _, _, _ := e.worker(t, "true")
		if _, err := c.Model(ctx, nil); !errors.Is(err, ErrRefused) {
			t.Errorf("model for a script task: %v", err)
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("%d requests reached the model", n)
		}
	})
	t.Run("turn cap", func(t *testing.T) {
		srv := llmtest.New(t, func(llmtest.Request) llmtest.Reply {
			return llmtest.Calls(llmtest.ToolCall{ID: "c", Name: "terminal", Arguments: `{"command":"true"}`})
		})
		e := newEnv(t, "deny", func(o *Options) { o.Model = hostModel(t, srv.URL()); o.MaxTurns = 2 })
		c, h, _, _ := e.promptWorker(t)
		if h.MaxTurns != 2 {
			t.Errorf("hello says %d turns", h.MaxTurns)
		}
		res := []ToolResult{{CallID: "c", Content: "ok"}}
		if _, err := c.Model(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Model(ctx, res); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Model(ctx, res); !errors.Is(err, ErrRefused) {
			t.Errorf("a third call with max_turns 2: %v", err)
		}
		if n := len(srv.Requests()); n != 2 {
			t.Errorf("%d requests reached the model, want 2", n)
		}
	})
	t.Run("huge conversation", func(t *testing.T) {
		const calls = 14
		srv := llmtest.New(t, func(llmtest.Request) llmtest.Reply {
			var tcs []llmtest.ToolCall
			for i := range calls {
				tcs = append(tcs, llmtest.ToolCall{ID: "c" + string(rune('a'+i)), Name: "terminal", Arguments: `{"command":"true"}`})
			}
			return llmtest.Calls(tcs...)
		})
		e := newEnv(t, "deny", func(o *Options) { o.Model = hostModel(t, srv.URL()); o.MaxTurns = 100 })
		c, _, _, _ := e.promptWorker(t)
		if _, err := c.Model(ctx, nil); err != nil {
			t.Fatal(err)
		}
		var res []ToolResult
		for i := range calls {
			res = append(res, ToolResult{CallID: "c" + string(rune('a'+i)), Content: strings.Repeat("y", MaxToolResult-100)})
		}
		var err error
		sent := 0
		for sent = 0; sent < 10 && err == nil; sent++ {
			_, err = c.Model(ctx, res)
		}
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "conversation") {
			t.Fatalf("after %d turns of %d KiB: %v", sent, calls*MaxToolResult>>10, err)
		}
		for _, q := range srv.Requests() {
			if len(q.Body) > MaxConversation+MaxMessage {
				t.Errorf("request %d to the model: %d bytes", q.Seq, len(q.Body))
			}
		}
		// A line over MaxMessage is not read at all: the connection ends.
		c2, _, _, _ := e.promptWorker(t)
		var answered *Error
		if _, err := c2.Model(ctx, []ToolResult{{CallID: "x", Content: strings.Repeat("z", MaxMessage)}}); err == nil || errors.As(err, &answered) {
			t.Errorf("an oversized line: %v, want the connection closed", err)
		}
	})
	t.Run("model fails", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Script(llmtest.Error(401, "Incorrect API key provided: "+hostKey)))
		e := newEnv(t, "deny", func(o *Options) { o.Model = hostModel(t, srv.URL()) })
		c, _, _, tp := e.promptWorker(t)
		_, err := c.Model(ctx, nil)
		if !errors.Is(err, ErrInternal) || strings.Contains(err.Error(), hostKey) {
			t.Errorf("a failed model call: %v", err)
		}
		// Unreachable: the error would name the address.
		ln, lerr := net.Listen("tcp", "127.0.0.1:0")
		if lerr != nil {
			t.Fatal(lerr)
		}
		addr := ln.Addr().String()
		ln.Close()
		e2 := newEnv(t, "deny", func(o *Options) { o.Model = hostModel(t, "http://"+addr+"/v1/") })
		c2, _, _, tp2 := e2.promptWorker(t)
		if _, err := c2.Model(ctx, nil); !errors.Is(err, ErrInternal) || strings.Contains(err.Error(), addr) {
			t.Errorf("an unreachable model: %v", err)
		}
		for _, s := range []string{tp.String(), tp2.String()} {
			if strings.Contains(s, hostKey) || strings.Contains(s, addr) || strings.Contains(s, strings.TrimPrefix(srv.URL(), "http://")) {
				t.Errorf("the worker was told:\n%s", s)
			}
		}
	})
}

// TestDecideActions: decide carries the kinds of action a worker's agent
// takes — command, program, file write — and the host decides each as
// the run, in the run's workspace; the worker can neither ask about
// another kind, nor write outside its workspace, nor report a step it
// was not allowed or another than the one decided.
func TestDecideActions(t *testing.T) {
	e := newEnv(t, "deny", nil)
	ctx := t.Context()
	c, h, r, _ := e.promptWorker(t)

	d, err := c.DecideAction(ctx, WriteAct("notes/a.txt", 5))
	want := WriteAct(filepath.Join(h.Dir, "notes/a.txt"), 5)
	if err != nil || !d.Allowed || d.Action == nil || *d.Action != want {
		t.Fatalf("write: %+v, %v", d, err)
	}
	// The step must name the decided write: not another path, not
	// another kind.
	for name, a := range map[string]Act{
		"another path": WriteAct(filepath.Join(h.Dir, "b.txt"), 5),
		"another size": WriteAct(filepath.Join(h.Dir, "notes/a.txt"), 6),
		"a command":    ShellAct("notes/a.txt"),
	} {
		if _, err := c.StepAction(ctx, a, 0, ""); !hasCode(err, CodeBadRequest) {
			t.Errorf("step for %s: %v", name, err)
		}
	}
	if _, err := c.StepAction(ctx, want, 0, ""); err != nil {
		t.Errorf("step for the decided write: %v", err)
	}

	d, err = c.DecideAction(ctx, CodeAct("python", "print(1)"))
	if err != nil || !d.Allowed || d.Action == nil || *d.Action != CodeAct("python", "print(1)") {
		t.Fatalf("code: %+v, %v", d, err)
	}
	if _, err := c.StepAction(ctx, CodeAct("python", "print(2)"), 0, "2\n"); !hasCode(err, CodeBadRequest) {
		t.Errorf("a step for other code: %v", err)
	}
	if _, err := c.StepAction(ctx, CodeAct("python", "print(1)"), 0, "1\n"); err != nil {
		t.Errorf("the decided code's step: %v", err)
	}

	// A dangerous command is denied and recorded; reporting it as run
	// is refused.
	d, err = c.DecideAction(ctx, ShellAct("rm -rf build/"))
	if err != nil || d.Allowed || d.Rule != gate.RuleKanbanMode {
		t.Fatalf("rm: %+v, %v", d, err)
	}
	if _, err := c.StepAction(ctx, ShellAct("rm -rf build/"), 0, "gone"); !hasCode(err, CodeBadRequest) {
		t.Errorf("a step for a denied command: %v", err)
	}

	for name, a := range map[string]Act{
		"an MCP call":             {Kind: action.MCP, Command: "x"},
		"a plugin action":         {Kind: action.Plugin},
		"no kind":                 {Command: "true"},
		"a write outside":         WriteAct("../../etc/passwd", 1),
		"an absolute write away":  WriteAct("/etc/cron.d/x", 1),
		"the workspace itself":    WriteAct(".", 1),
		"a shell action with src": {Kind: action.Shell, Command: "true", Source: "rm -rf /"},
		"a write with a command":  {Kind: action.Write, Path: "a", Command: "rm -rf /"},
		"an unknown language":     CodeAct("cobol", "DISPLAY 1"),
		"a huge write":            WriteAct("big", 1<<40),
	} {
		if _, err := c.DecideAction(ctx, a); !hasCode(err, CodeBadRequest) {
			t.Errorf("%s: %v, want bad_request", name, err)
		}
	}

	run, err := e.db.GetRun(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, s := range run.Steps {
		cmds = append(cmds, s.Verdict+" "+s.Command)
	}
	wantSteps := []string{"allow write_file " + filepath.Join(h.Dir, "notes/a.txt") + " (5 bytes)", "allow execute_code (python):\nprint(1)", "deny rm -rf build/"}
	if strings.Join(cmds, "|") != strings.Join(wantSteps, "|") {
		t.Errorf("history:\n%q\nwant\n%q", cmds, wantSteps)
	}
	ds, err := e.db.Decisions(ctx, store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 3 {
		t.Fatalf("%d decisions, want 3 (nothing refused reached the gate)", len(ds))
	}
	for _, d := range ds {
		if !strings.HasPrefix(d.OwnerText, "kanban:"+h.Task.ID) || !strings.Contains(d.OwnerText, "run="+r.ID) {
			t.Errorf("decided as %q", d.OwnerText)
		}
	}
}
