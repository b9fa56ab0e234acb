package web

// A minimal OpenAI-compatible Chat Completions model over real HTTP, for
// the composer's agent tests: a scripted httptest server and an
// llm.Client that POSTs /chat/completions to it. It stands in for
// internal/llm/llmtest and internal/llm/openai until those are merged,
// and should then be replaced by them.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/wardenhq/warden/internal/llm"
)

// Chat Completions wire types (only the fields the tests use).
type (
	chatRequest struct {
		Model    string        `json:"model"`
		Messages []chatMessage `json:"messages"`
		Tools    []chatTool    `json:"tools,omitempty"`
	}
	chatMessage struct {
		Role       string         `json:"role"`
		Content    *string        `json:"content"`
		ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
		ToolCallID string         `json:"tool_call_id,omitempty"`
	}
	chatToolCall struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	chatTool struct {
		Type     string `json:"type"`
		Function struct {
			Name        string         `json:"name"`
			Description string         `json:"description,omitempty"`
			Parameters  map[string]any `json:"parameters,omitempty"`
		} `json:"function"`
	}
	chatResponse struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Choices []struct {
			Index        int         `json:"index"`
			Message      chatMessage `json:"message"`
			FinishReason string      `json:"finish_reason"`
		} `json:"choices"`
	}
)

// modelTurn is the fake model's reply to one request: words, or tool
// calls (name and JSON arguments).
type modelTurn struct {
	Content string
	Calls   [][2]string
	// Status, if set, fails the request with this HTTP status.
	Status int
}

// fakeModel is a scripted Chat Completions server. Each request gets the
// reply its script function returns for the conversation it was sent;
// the requests are kept for the test to inspect.
type fakeModel struct {
	t      testing.TB
	srv    *httptest.Server
	script func(n int, req chatRequest) modelTurn

	mu       sync.Mutex
	requests []chatRequest
}

func newFakeModel(t testing.TB, script func(n int, req chatRequest) modelTurn) *fakeModel {
	m := &fakeModel{t: t, script: script}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *fakeModel) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/chat/completions" || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.requests = append(m.requests, req)
	n := len(m.requests)
	m.mu.Unlock()
	turn := m.script(n, req)
	if turn.Status != 0 {
		http.Error(w, `{"error":{"message":"scripted failure"}}`, turn.Status)
		return
	}

	var resp chatResponse
	resp.ID, resp.Object = fmt.Sprintf("chatcmpl-%d", n), "chat.completion"
	resp.Choices = make([]struct {
		Index        int         `json:"index"`
		Message      chatMessage `json:"message"`
		FinishReason string      `json:"finish_reason"`
	}, 1)
	ch := &resp.Choices[0]
	ch.Message.Role, ch.FinishReason = "assistant", "stop"
	if turn.Content != "" {
		ch.Message.Content = &turn.Content
	}
	for i, c := range turn.Calls {
		var tc chatToolCall
		tc.ID, tc.Type = fmt.Sprintf("call_%d_%d", n, i), "function"
		tc.Function.Name, tc.Function.Arguments = c[0], c[1]
		ch.Message.ToolCalls = append(ch.Message.ToolCalls, tc)
		ch.FinishReason = "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// sent returns the requests the model received so far.
func (m *fakeModel) sent() []chatRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]chatRequest(nil), m.requests...)
}

// client returns an llm.Client speaking to the fake model.
func (m *fakeModel) client() llm.Client {
	return chatClient{base: m.srv.URL, model: "fake-model", hc: m.srv.Client()}
}

// chatClient is a minimal Chat Completions llm.Client: non-streaming,
// no retries.
type chatClient struct {
	base, model string
	hc          *http.Client
}

func (c chatClient) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	body := chatRequest{Model: c.model}
	if req.Model != "" {
		body.Model = req.Model
	}
	for _, m := range req.Messages {
		cm := chatMessage{Role: string(m.Role), ToolCallID: m.ToolCallID}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			s := m.Content
			cm.Content = &s
		}
		for _, tc := range m.ToolCalls {
			var w chatToolCall
			w.ID, w.Type = tc.ID, "function"
			w.Function.Name, w.Function.Arguments = tc.Name, tc.Arguments
			cm.ToolCalls = append(cm.ToolCalls, w)
		}
		body.Messages = append(body.Messages, cm)
	}
	for _, t := range req.Tools {
		var w chatTool
		w.Type = "function"
		w.Function.Name, w.Function.Description, w.Function.Parameters = t.Name, t.Description, t.Parameters
		body.Tools = append(body.Tools, w)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return llm.Response{}, fmt.Errorf("%w: encode: %v", llm.ErrRefused, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/chat/completions", bytes.NewReader(b))
	if err != nil {
		return llm.Response{}, fmt.Errorf("%w: %v", llm.ErrUnavailable, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(hreq)
	if err != nil {
		return llm.Response{}, fmt.Errorf("%w: %v", llm.ErrUnavailable, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return llm.Response{}, fmt.Errorf("%w: read: %v", llm.ErrUnavailable, err)
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return llm.Response{}, fmt.Errorf("%w: %s: %s", llm.ErrUnavailable, resp.Status, raw)
	case resp.StatusCode != http.StatusOK:
		return llm.Response{}, fmt.Errorf("%w: %s: %s", llm.ErrRefused, resp.Status, raw)
	}
	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil || len(cr.Choices) == 0 {
		return llm.Response{}, fmt.Errorf("%w: malformed response %q", llm.ErrUnavailable, raw)
	}
	ch := cr.Choices[0]
	out := llm.Response{FinishReason: ch.FinishReason, Message: llm.Message{Role: llm.Role(ch.Message.Role)}}
	if ch.Message.Content != nil {
		out.Message.Content = *ch.Message.Content
	}
	for _, tc := range ch.Message.ToolCalls {
		out.Message.ToolCalls = append(out.Message.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return out, nil
}
