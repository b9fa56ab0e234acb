package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/wardenhq/warden/internal/owner"
)

// Transcript is an unattended run written down: what the agent called,
// what was refused, what it answered. Cron and kanban runs keep it as
// their record.
type Transcript struct {
	Text string
	// Calls is how many tool calls the agent made; Blocked how many of
	// them the gate or a human refused.
	Calls, Blocked int
	// Reply is the agent's last words.
	Reply string
}

// Prompt runs the agent once with prompt as the owner in ctx and writes
// the run down. board, if set, gives it the kanban tools of the task it
// works on.
func (a *Agent) Prompt(ctx context.Context, conversation, dir, prompt string, board Board) (Transcript, error) {
	var w transcriptWriter
	res, err := a.Run(ctx, Run{Conversation: conversation, Dir: dir, Board: board, Emit: w.add}, prompt)
	if o, ok := owner.From(ctx); ok && a.o.MCP != nil {
		// A cron or kanban run's owner never comes back: its MCP
		// sessions (and stdio servers) end with it.
		a.o.MCP.Release(context.WithoutCancel(ctx), o)
	}
	return Transcript{Text: w.String(), Calls: res.Calls, Blocked: res.Blocked, Reply: res.Reply}, err
}

// transcriptWriter renders events as lines. Emit may be called from the
// run's goroutine only, but the lock keeps String safe anyway.
type transcriptWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *transcriptWriter) add(e Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch e.Kind {
	case Text:
		fmt.Fprintf(&w.b, "agent: %s\n", e.Text)
	case ToolCall:
		fmt.Fprintf(&w.b, "→ %s %s\n", e.Tool, oneLine(e.Args, 400))
	case Pending:
		fmt.Fprintf(&w.b, "  waiting for approval (request %s)\n", e.Request)
	case Blocked:
		fmt.Fprintf(&w.b, "  BLOCKED: %s\n", oneLine(e.Text, 400))
	case ToolResult:
		fmt.Fprintf(&w.b, "  %s\n", strings.ReplaceAll(strings.TrimRight(clipHead(e.Text, 2000), "\n"), "\n", "\n  "))
	case Notice:
		fmt.Fprintf(&w.b, "warden: %s\n", e.Text)
	}
}

func (w *transcriptWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// oneLine folds s onto one line of at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	return clipHead(s, n)
}

// clipHead keeps the first n bytes of s (on a character boundary).
func clipHead(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
