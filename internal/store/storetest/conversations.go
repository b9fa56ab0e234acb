package storetest

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/wardenhq/warden/internal/llm"
	"github.com/wardenhq/warden/internal/store"
)

// RunConversations runs the conversation suite; open returns a new,
// empty store for each subtest; if it is an io.Closer, RunConversations
// closes it when the subtest ends.
func RunConversations(t *testing.T, open func(t *testing.T) store.Conversations) {
	t.Helper()
	runCases(t, open, []testCase[store.Conversations]{
		{"append and read in order", func(t *testing.T, s store.Conversations) {
			ctx := t.Context()
			a := []llm.Message{
				{Role: llm.User, Content: "hi"},
				{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "terminal", Arguments: `{"command":"ls"}`}}},
			}
			must(t, "append", s.AppendMessages(ctx, "conv", raws(t, a...)...))
			b := llm.Message{Role: llm.Tool, ToolCallID: "c1", Content: "a\\nb"}
			must(t, "append", s.AppendMessages(ctx, "conv", raws(t, b)...))
			must(t, "append other", s.AppendMessages(ctx, "other", raws(t, llm.Message{Role: llm.User, Content: "elsewhere"})...))
			got, err := s.Messages(ctx, "conv", 0)
			must(t, "read", err)
			same(t, "all", got, append(a, b))
			got, err = s.Messages(ctx, "conv", 2)
			must(t, "read last 2", err)
			same(t, "last 2", got, []llm.Message{a[1], b})
			got, err = s.Messages(ctx, "none", 0)
			must(t, "read empty", err)
			same(t, "empty", got, []llm.Message{})
		}},
		{"many appends keep order", func(t *testing.T, s store.Conversations) {
			ctx := t.Context()
			var want []llm.Message
			for i := range 50 {
				m := llm.Message{Role: llm.User, Content: fmt.Sprint(i)}
				want = append(want, m)
				must(t, "append", s.AppendMessages(ctx, "c", raws(t, m)...))
			}
			got, err := s.Messages(ctx, "c", 0)
			must(t, "read", err)
			same(t, "order", got, want)
		}},
		{"empty id refused", func(t *testing.T, s store.Conversations) {
			if err := s.AppendMessages(t.Context(), "", raws(t, llm.Message{Role: llm.User})...); err == nil {
				t.Fatal("empty conversation id accepted")
			}
		}},
	})
}

// raws encodes msgs as the agent stores them.
func raws(t *testing.T, msgs ...llm.Message) []json.RawMessage {
	t.Helper()
	out := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		b, err := json.Marshal(m)
		must(t, "encode message", err)
		out[i] = b
	}
	return out
}
