package web

// The composer's agent tests talk to a scripted model through the real
// adapter (internal/llm/openai) and the fake Chat Completions server
// (internal/llm/llmtest) over loopback. These helpers keep the tests'
// own vocabulary: a script sees each request and returns a modelTurn.

import (
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/llm"
	"github.com/wardenhq/warden/internal/llm/llmtest"
	"github.com/wardenhq/warden/internal/llm/openai"
)

// chatRequest is a request as the model got it.
type chatRequest struct {
	Messages []chatMessage
	Tools    []chatTool
}

type chatMessage struct {
	Role    string
	Content *string
}

type chatTool struct {
	Function struct{ Name string }
}

// modelTurn is the fake model's reply to one request: words, or tool
// calls (name and JSON arguments).
type modelTurn struct {
	Content string
	Calls   [][2]string
	// Status, if set, fails the request with this HTTP status.
	Status int
}

type fakeModel struct {
	srv *llmtest.Server
}

func toChatRequest(r llmtest.Request) chatRequest {
	var out chatRequest
	for _, m := range r.Messages {
		c := m.Content
		out.Messages = append(out.Messages, chatMessage{Role: m.Role, Content: &c})
	}
	for _, name := range r.ToolNames() {
		var t chatTool
		t.Function.Name = name
		out.Tools = append(out.Tools, t)
	}
	return out
}

// newFakeModel starts a model answering each request with script(n,
// request), n counting from 0.
func newFakeModel(t testing.TB, script func(n int, req chatRequest) modelTurn) *fakeModel {
	srv := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		turn := script(r.Seq, toChatRequest(r))
		if turn.Status != 0 {
			return llmtest.Error(turn.Status, "scripted failure")
		}
		if len(turn.Calls) > 0 {
			calls := make([]llmtest.ToolCall, len(turn.Calls))
			for i, c := range turn.Calls {
				calls[i] = llmtest.Call(c[0], c[1])
			}
			return llmtest.Calls(calls...)
		}
		return llmtest.Text(turn.Content)
	})
	return &fakeModel{srv: srv}
}

// sent is what the model received, in order.
func (m *fakeModel) sent() []chatRequest {
	var out []chatRequest
	for _, r := range m.srv.Requests() {
		out = append(out, toChatRequest(r))
	}
	return out
}

// client is the model as the agent reaches it.
func (m *fakeModel) client() llm.Client {
	c, err := openai.New(openai.Options{BaseURL: m.srv.URL(), Model: "test-model", Timeout: 30 * time.Second})
	if err != nil {
		panic(err)
	}
	return c
}
