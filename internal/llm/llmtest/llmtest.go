// Package llmtest is a fake OpenAI-compatible Chat Completions server for
// tests: real HTTP on 127.0.0.1, the real wire JSON, non-streaming and SSE
// streaming replies, tool calls and OpenAI-shaped errors.
//
// It is an independent implementation of the wire protocol (it does not
// import any provider SDK), so a test that passes through it exercises the
// adapter's encoding and decoding for real.
//
// A test scripts the model with a Handler that sees each decoded request
// and returns a Reply:
//
//	srv := llmtest.New(t, llmtest.Script(
//		llmtest.Calls(llmtest.Call("shell", `{"command":"ls"}`)),
//		llmtest.Text("done"),
//	))
//	client, _ := openai.New(openai.Options{BaseURL: srv.URL(), Model: "m"})
//	…
//	reqs := srv.Requests() // what the model was sent, in order
//
// The server is closed by t.Cleanup. Handlers run on the server's
// goroutines, so they must not call t.FailNow; return a Reply instead.
package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Request is a chat completion request as the server decoded it.
type Request struct {
	// Seq numbers the requests this server received, from 0; a retried
	// request gets a new number.
	Seq   int
	Model string
	// Messages are the conversation, in order.
	Messages []Message
	// Tools are the function tools offered.
	Tools []Tool
	// MaxCompletionTokens and MaxTokens are the two budget fields of the
	// protocol (max_tokens is the legacy one); 0 when absent.
	MaxCompletionTokens int
	MaxTokens           int
	// Temperature is nil when absent.
	Temperature *float64
	// ResponseFormat is nil when absent.
	ResponseFormat *ResponseFormat
	// Stream is the stream flag; IncludeUsage is stream_options.include_usage.
	Stream       bool
	IncludeUsage bool
	// Header is the HTTP request header (Authorization, retry counters…).
	Header http.Header
	// Body is the raw request body.
	Body []byte
}

// ToolNames returns the names of the offered tools.
func (r Request) ToolNames() []string {
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Name
	}
	return names
}

// Message is one message of a request.
type Message struct {
	Role string
	// Content is the text; a content array's text parts are joined.
	Content string
	// ToolCalls are an assistant message's calls.
	ToolCalls []ToolCall
	// ToolCallID is the call a tool message answers.
	ToolCallID string
}

// Tool is one offered function tool.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema text of the arguments.
	Parameters json.RawMessage
}

// ResponseFormat is the request's response_format.
type ResponseFormat struct {
	// Type is "text", "json_object" or "json_schema".
	Type string
	// Name, Schema and Strict are json_schema's fields.
	Name   string
	Schema json.RawMessage
	Strict bool
}

// ToolCall is a function call, in a request's assistant message or in a
// Reply.
type ToolCall struct {
	// ID is the call id. In a Reply it may be left empty and the server
	// assigns "call_<seq>_<index>".
	ID        string
	Name      string
	Arguments string
}

// Reply is what the scripted model answers. The zero Reply is an empty
// assistant message with finish reason "stop".
type Reply struct {
	// Text is the assistant's content.
	Text string
	// ToolCalls are the calls the assistant makes.
	ToolCalls []ToolCall
	// FinishReason defaults to "tool_calls" when there are calls, else
	// "stop".
	FinishReason string
	// PromptTokens and CompletionTokens are reported as usage.
	PromptTokens, CompletionTokens int

	// Status, when set, answers with that HTTP status and an
	// OpenAI-shaped error body carrying ErrorMessage (default: the status
	// text) and ErrorCode.
	Status       int
	ErrorMessage string
	ErrorCode    string
	// RetryAfter, when set, sends Retry-After-Ms (and Retry-After in
	// whole seconds, rounded up) with the reply.
	RetryAfter time.Duration

	// Delay waits before answering. It ends early when the client gives
	// up (the request's context), so timeout tests end promptly.
	Delay time.Duration
	// ChunkDelay waits between the chunks of a streamed reply.
	ChunkDelay time.Duration
	// ChunkSize is how many bytes of text or arguments one streamed
	// chunk carries (default 4), so clients must accumulate.
	ChunkSize int
	// Truncate ends a streamed reply without a finish reason and without
	// "data: [DONE]", as a dropped connection does.
	Truncate bool

	// Raw, when set, is sent verbatim as a 200 reply body instead of a
	// generated one (with the streaming content type if the request
	// streamed), for testing malformed replies.
	Raw string

	exhausted bool
}

// Handler answers one request.
type Handler func(Request) Reply

// Text is a reply with assistant text.
func Text(s string) Reply { return Reply{Text: s} }

// Call is a tool call for Calls; the server assigns its id.
func Call(name, args string) ToolCall { return ToolCall{Name: name, Arguments: args} }

// Calls is a reply making tool calls.
func Calls(calls ...ToolCall) Reply { return Reply{ToolCalls: calls} }

// Error is an HTTP error reply with an OpenAI-shaped body.
func Error(status int, message string) Reply {
	return Reply{Status: status, ErrorMessage: message}
}

// Script answers with replies in order. A request beyond the last reply
// is answered with HTTP 500 and fails the test.
func Script(replies ...Reply) Handler {
	var mu sync.Mutex
	next := 0
	return func(Request) Reply {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(replies) {
			return Reply{Status: http.StatusInternalServerError, ErrorMessage: "llmtest: script exhausted", exhausted: true}
		}
		next++
		return replies[next-1]
	}
}

// Server is a running fake. Its methods are safe for concurrent use.
type Server struct {
	t       testing.TB
	h       Handler
	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []Request
	created int64
}

// New starts a server answering with h on 127.0.0.1. It is closed when
// the test ends.
func New(t testing.TB, h Handler) *Server {
	t.Helper()
	s := &Server{t: t, h: h, created: time.Now().Unix()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.serve)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "llmtest: no route "+r.Method+" "+r.URL.Path, "")
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the API base URL, ending in "/v1/".
func (s *Server) URL() string { return s.srv.URL + "/v1/" }

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.reqs))
	copy(out, s.reqs)
	return out
}

// wire types of the request body.
type (
	wireRequest struct {
		Model               string          `json:"model"`
		Messages            []wireMessage   `json:"messages"`
		Tools               []wireTool      `json:"tools"`
		MaxCompletionTokens int             `json:"max_completion_tokens"`
		MaxTokens           int             `json:"max_tokens"`
		Temperature         *float64        `json:"temperature"`
		ResponseFormat      *wireFormat     `json:"response_format"`
		Stream              bool            `json:"stream"`
		StreamOptions       *wireStreamOpts `json:"stream_options"`
	}
	wireMessage struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCalls  []wireToolCall  `json:"tool_calls,omitempty"`
		ToolCallID string          `json:"tool_call_id,omitempty"`
	}
	wireToolCall struct {
		Index    *int   `json:"index,omitempty"`
		ID       string `json:"id,omitempty"`
		Type     string `json:"type,omitempty"`
		Function struct {
			Name      string `json:"name,omitempty"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	wireTool struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	wireFormat struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		} `json:"json_schema"`
	}
	wireStreamOpts struct {
		IncludeUsage bool `json:"include_usage"`
	}
	wireUsage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
)

// content decodes a message content: a string, null, or an array of
// parts whose text parts are joined.
func content(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content is neither a string nor an array of parts: %w", err)
	}
	var b bytes.Buffer
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

func decode(body []byte) (Request, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return Request{}, err
	}
	r := Request{
		Model: w.Model, MaxCompletionTokens: w.MaxCompletionTokens, MaxTokens: w.MaxTokens,
		Temperature: w.Temperature, Stream: w.Stream, Body: body,
	}
	if w.StreamOptions != nil {
		r.IncludeUsage = w.StreamOptions.IncludeUsage
	}
	for i, m := range w.Messages {
		c, err := content(m.Content)
		if err != nil {
			return Request{}, fmt.Errorf("message %d: %w", i, err)
		}
		msg := Message{Role: m.Role, Content: c, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		r.Messages = append(r.Messages, msg)
	}
	for _, t := range w.Tools {
		r.Tools = append(r.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	if f := w.ResponseFormat; f != nil {
		r.ResponseFormat = &ResponseFormat{Type: f.Type}
		if f.JSONSchema != nil {
			r.ResponseFormat.Name, r.ResponseFormat.Schema, r.ResponseFormat.Strict = f.JSONSchema.Name, f.JSONSchema.Schema, f.JSONSchema.Strict
		}
	}
	return r, nil
}

func (s *Server) serve(w http.ResponseWriter, hr *http.Request) {
	body, err := readBody(hr)
	if err != nil {
		writeError(w, http.StatusBadRequest, "llmtest: read body: "+err.Error(), "")
		return
	}
	req, err := decode(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "llmtest: decode request: "+err.Error(), "invalid_request")
		return
	}
	req.Header = hr.Header.Clone()
	s.mu.Lock()
	req.Seq = len(s.reqs)
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()

	rep := s.h(req)
	if rep.exhausted {
		s.t.Errorf("llmtest: request %d has no scripted reply", req.Seq)
	}
	if !wait(hr.Context(), rep.Delay) {
		return
	}
	if rep.RetryAfter > 0 {
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(rep.RetryAfter.Milliseconds(), 10))
		w.Header().Set("Retry-After", strconv.FormatInt(int64((rep.RetryAfter+time.Second-1)/time.Second), 10))
	}
	switch {
	case rep.Status != 0 && rep.Status != http.StatusOK:
		msg := rep.ErrorMessage
		if msg == "" {
			msg = http.StatusText(rep.Status)
		}
		writeError(w, rep.Status, msg, rep.ErrorCode)
	case rep.Raw != "":
		if req.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		_, _ = w.Write([]byte(rep.Raw))
	case req.Stream:
		s.stream(w, hr.Context(), req, rep)
	default:
		s.complete(w, req, rep)
	}
}

// readBody reads at most 8 MiB: a fake needs no more, and a runaway
// client should fail loudly.
func readBody(r *http.Request) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(http.MaxBytesReader(nil, r.Body, 8<<20))
	return b.Bytes(), err
}

// wait sleeps d or until ctx ends; it reports whether d elapsed.
func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func writeError(w http.ResponseWriter, status int, msg, code string) {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusTooManyRequests:
		typ = "requests"
	case status >= 500:
		typ = "server_error"
	}
	var c any
	if code != "" {
		c = code
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": c}})
}

func (rep Reply) finish() string {
	switch {
	case rep.FinishReason != "":
		return rep.FinishReason
	case len(rep.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func callID(seq, i int, tc ToolCall) string {
	if tc.ID != "" {
		return tc.ID
	}
	return fmt.Sprintf("call_%d_%d", seq, i)
}

func (s *Server) usage(rep Reply) wireUsage {
	return wireUsage{PromptTokens: rep.PromptTokens, CompletionTokens: rep.CompletionTokens, TotalTokens: rep.PromptTokens + rep.CompletionTokens}
}

func (s *Server) complete(w http.ResponseWriter, req Request, rep Reply) {
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if rep.Text != "" || len(rep.ToolCalls) == 0 {
		msg["content"] = rep.Text
	}
	if len(rep.ToolCalls) > 0 {
		calls := make([]map[string]any, len(rep.ToolCalls))
		for i, tc := range rep.ToolCalls {
			calls[i] = map[string]any{"id": callID(req.Seq, i, tc), "type": "function",
				"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}}
		}
		msg["tool_calls"] = calls
	}
	out := map[string]any{
		"id": fmt.Sprintf("chatcmpl-llmtest-%d", req.Seq), "object": "chat.completion",
		"created": s.created, "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": rep.finish(), "logprobs": nil}},
		"usage":   s.usage(rep),
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// pieces splits s into chunks of n bytes without splitting a UTF-8
// sequence.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		k := min(n, len(s))
		for k < len(s) && s[k]&0xC0 == 0x80 { // continuation byte
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

func (s *Server) stream(w http.ResponseWriter, ctx context.Context, req Request, rep Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	size := rep.ChunkSize
	if size <= 0 {
		size = 4
	}
	id := fmt.Sprintf("chatcmpl-llmtest-%d", req.Seq)
	first := true
	send := func(delta map[string]any, finish any, usage *wireUsage) bool {
		if !first && !wait(ctx, rep.ChunkDelay) {
			return false
		}
		first = false
		choices := []any{}
		if delta != nil {
			choices = append(choices, map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil})
		}
		chunk := map[string]any{"id": id, "object": "chat.completion.chunk", "created": s.created, "model": req.Model, "choices": choices}
		if usage != nil {
			chunk["usage"] = usage
		}
		b, err := json.Marshal(chunk)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		return true
	}
	if !send(map[string]any{"role": "assistant", "content": ""}, nil, nil) {
		return
	}
	for _, p := range pieces(rep.Text, size) {
		if !send(map[string]any{"content": p}, nil, nil) {
			return
		}
	}
	for i, tc := range rep.ToolCalls {
		head := map[string]any{"index": i, "id": callID(req.Seq, i, tc), "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": ""}}
		if !send(map[string]any{"tool_calls": []any{head}}, nil, nil) {
			return
		}
		for _, p := range pieces(tc.Arguments, size) {
			part := map[string]any{"index": i, "function": map[string]any{"arguments": p}}
			if !send(map[string]any{"tool_calls": []any{part}}, nil, nil) {
				return
			}
		}
	}
	if rep.Truncate {
		return
	}
	if !send(map[string]any{}, rep.finish(), nil) {
		return
	}
	if req.IncludeUsage {
		u := s.usage(rep)
		if !send(nil, nil, &u) {
			return
		}
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}
