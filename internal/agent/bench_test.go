package agent

import (
	"context"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/llm/llmtest"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/sandbox/sandboxtest"
	"github.com/wardenhq/warden/internal/tools"
)

// timedExec runs shell calls as the runner does (authorise, then run)
// and times the authorisation alone: the gate's decision and its
// durable audit record, which is what the gate adds to a tool call.
type timedExec struct {
	*runner.Runner
	term tools.Terminal
	mu   sync.Mutex
	d    []time.Duration
}

func (e *timedExec) Shell(ctx context.Context, command, dir string, stdout, stderr io.Writer) (runner.Outcome, int, error) {
	t0 := time.Now()
	out, err := e.Authorize(ctx, action.NewShell(command).In(dir))
	e.mu.Lock()
	e.d = append(e.d, time.Since(t0))
	e.mu.Unlock()
	if err != nil || !out.Allowed {
		return out, -1, err
	}
	code, err := e.term.Run(ctx, command, dir, stdout, stderr)
	return out, code, err
}

// BenchmarkToolCallGate is one agent turn of 10 safe terminal calls
// against the fake model on loopback; it reports the median time the
// gate added per tool call (decision + audit append, synchronous=FULL).
func BenchmarkToolCallGate(b *testing.B) {
	calls := make([]llmtest.ToolCall, 10)
	for i := range calls {
		calls[i] = llmtest.Call("terminal", `{"command":"git status --short"}`)
	}
	f := newFixture(b, "", func(r llmtest.Request) llmtest.Reply {
		if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" {
			return llmtest.Text("done")
		}
		return llmtest.Calls(calls...)
	})
	e := &timedExec{Runner: f.ag.o.Exec.(*runner.Runner), term: tools.Terminal{Env: []string{"PATH=/usr/bin:/bin"}, Timeout: time.Minute, Sandbox: sandboxtest.New(b)}}
	ag := New(Options{Model: f.ag.o.Model, Exec: e, MaxTurns: 3})
	ctx := cronCtx(b, "bench", "r")
	b.ResetTimer()
	for b.Loop() {
		if _, err := ag.Run(ctx, Run{Dir: f.dir}, "status please"); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	slices.Sort(e.d)
	if len(e.d) > 0 {
		b.ReportMetric(float64(e.d[len(e.d)/2].Microseconds()), "gate-µs/call")
	}
}
