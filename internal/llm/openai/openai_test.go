package openai

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wardenhq/warden/internal/llm"
	"github.com/wardenhq/warden/internal/llm/llmtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newClient(t *testing.T, srv *llmtest.Server, mod func(*Options)) *Client {
	t.Helper()
	o := Options{BaseURL: srv.URL(), Model: "test-model", APIKey: "sk-test-secret", MaxRetries: 0, Timeout: 5 * time.Second}
	if mod != nil {
		mod(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestEnvironmentIgnored proves the adapter never consults OPENAI_*:
// the base URL and key come from Options only.
func TestEnvironmentIgnored(t *testing.T) {
	decoy := llmtest.New(t, func(llmtest.Request) llmtest.Reply {
		t.Error("the request went to OPENAI_BASE_URL")
		return llmtest.Text("decoy")
	})
	t.Setenv("OPENAI_BASE_URL", decoy.URL())
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_ORG_ID", "org-env")
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:1")
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")

	srv := llmtest.New(t, func(llmtest.Request) llmtest.Reply { return llmtest.Text("ok") })
	for _, key := range []string{"sk-configured", ""} {
		c := newClient(t, srv, func(o *Options) { o.APIKey = key })
		r, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "hi"}}})
		if err != nil || r.Message.Content != "ok" {
			t.Fatalf("key %q: %v %+v", key, err, r)
		}
	}
	reqs := srv.Requests()
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer sk-configured" {
		t.Errorf("authorization %q, want the configured key", got)
	}
	if got := reqs[1].Header.Get("Authorization"); got != "" {
		t.Errorf("no key configured, yet authorization %q was sent", got)
	}
	for _, r := range reqs {
		if r.Header.Get("OpenAI-Organization") != "" {
			t.Errorf("organization header from the environment: %q", r.Header.Get("OpenAI-Organization"))
		}
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want error
	}{
		{"no base url", Options{Model: "m"}, llm.ErrNotConfigured},
		{"no model", Options{BaseURL: "http://127.0.0.1/v1/"}, llm.ErrNotConfigured},
		{"bad scheme", Options{BaseURL: "ftp://x/v1/", Model: "m"}, nil},
		{"negative retries", Options{BaseURL: "http://127.0.0.1/v1/", Model: "m", MaxRetries: -1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.o)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("got %v, want an error (%v)", err, tt.want)
			}
		})
	}
}

var conversation = []llm.Message{
	{Role: llm.System, Content: "be brief"},
	{Role: llm.User, Content: "list files"},
	{Role: llm.Assistant, ToolCalls: []llm.ToolCall{{ID: "call_a", Name: "shell", Arguments: `{"command":"ls"}`}, {ID: "call_b", Name: "read", Arguments: `{"path":"x"}`}}},
	{Role: llm.Tool, ToolCallID: "call_a", Content: "a.txt"},
	{Role: llm.Tool, ToolCallID: "call_b", Content: "denied: not allowed"},
	{Role: llm.Assistant, Content: "one file"},
	{Role: llm.User, Content: "ünïcode ✓"},
}

var shellTool = llm.ToolSpec{Name: "shell", Description: "run a command", Parameters: map[string]any{
	"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}, "required": []any{"command"},
}}

// TestComplete runs each case non-streamed and streamed: the mapping must
// not depend on the transport mode.
func TestComplete(t *testing.T) {
	zero := 0.0
	schema := map[string]any{"type": "object", "properties": map[string]any{"v": map[string]any{"type": "string"}}, "required": []any{"v"}, "additionalProperties": false}
	tests := []struct {
		name   string
		req    llm.Request
		reply  llmtest.Reply
		want   llm.Response
		checkQ func(t *testing.T, q llmtest.Request)
	}{
		{
			name:  "text",
			req:   llm.Request{Messages: conversation[:2]},
			reply: llmtest.Reply{Text: "hello, world — ok", PromptTokens: 12, CompletionTokens: 5},
			want:  llm.Response{Message: llm.Message{Role: llm.Assistant, Content: "hello, world — ok"}, FinishReason: "stop", Usage: llm.Usage{PromptTokens: 12, CompletionTokens: 5}},
		},
		{
			name: "conversation with tool calls and results",
			req:  llm.Request{Model: "other-model", Messages: conversation, Tools: []llm.ToolSpec{shellTool, {Name: "read"}}},
			reply: llmtest.Reply{Text: "running", ToolCalls: []llmtest.ToolCall{
				llmtest.Call("shell", `{"command":"rm -rf build/ && echo \"done\""}`),
				llmtest.Call("read", `{"path":"/etc/hosts"}`),
			}},
			want: llm.Response{Message: llm.Message{Role: llm.Assistant, Content: "running", ToolCalls: []llm.ToolCall{
				{ID: "call_0_0", Name: "shell", Arguments: `{"command":"rm -rf build/ && echo \"done\""}`},
				{ID: "call_0_1", Name: "read", Arguments: `{"path":"/etc/hosts"}`},
			}}, FinishReason: "tool_calls"},
			checkQ: func(t *testing.T, q llmtest.Request) {
				if q.Model != "other-model" {
					t.Errorf("model %q", q.Model)
				}
				want := []llmtest.Message{
					{Role: "system", Content: "be brief"},
					{Role: "user", Content: "list files"},
					{Role: "assistant", ToolCalls: []llmtest.ToolCall{{ID: "call_a", Name: "shell", Arguments: `{"command":"ls"}`}, {ID: "call_b", Name: "read", Arguments: `{"path":"x"}`}}},
					{Role: "tool", ToolCallID: "call_a", Content: "a.txt"},
					{Role: "tool", ToolCallID: "call_b", Content: "denied: not allowed"},
					{Role: "assistant", Content: "one file"},
					{Role: "user", Content: "ünïcode ✓"},
				}
				if !equalJSON(q.Messages, want) {
					t.Errorf("messages\n got %+v\nwant %+v", q.Messages, want)
				}
				if !slices.Equal(q.ToolNames(), []string{"shell", "read"}) || q.Tools[0].Description != "run a command" {
					t.Errorf("tools %+v", q.Tools)
				}
				var params map[string]any
				if err := json.Unmarshal(q.Tools[0].Parameters, &params); err != nil || params["type"] != "object" {
					t.Errorf("tool parameters %s: %v", q.Tools[0].Parameters, err)
				}
			},
		},
		{
			name:  "budget temperature and schema",
			req:   llm.Request{Messages: conversation[:2], MaxTokens: 2048, Temperature: &zero, JSONSchema: schema, SchemaName: "verdict"},
			reply: llmtest.Text(`{"v":"x"}`),
			want:  llm.Response{Message: llm.Message{Role: llm.Assistant, Content: `{"v":"x"}`}, FinishReason: "stop"},
			checkQ: func(t *testing.T, q llmtest.Request) {
				if q.MaxCompletionTokens != 2048 || q.MaxTokens != 0 {
					t.Errorf("budget: max_completion_tokens %d max_tokens %d", q.MaxCompletionTokens, q.MaxTokens)
				}
				if q.Temperature == nil || *q.Temperature != 0 {
					t.Errorf("temperature 0 was not sent: %v", q.Temperature)
				}
				f := q.ResponseFormat
				if f == nil || f.Type != "json_schema" || f.Name != "verdict" || !f.Strict {
					t.Fatalf("response format %+v", f)
				}
				var got map[string]any
				if err := json.Unmarshal(f.Schema, &got); err != nil || got["additionalProperties"] != false {
					t.Errorf("schema %s", f.Schema)
				}
			},
		},
		{
			name:  "defaults omit optional fields",
			req:   llm.Request{Messages: conversation[:2]},
			reply: llmtest.Reply{Text: "cut", FinishReason: "length"},
			want:  llm.Response{Message: llm.Message{Role: llm.Assistant, Content: "cut"}, FinishReason: "length"},
			checkQ: func(t *testing.T, q llmtest.Request) {
				if q.Model != "test-model" || q.Temperature != nil || q.ResponseFormat != nil || q.MaxCompletionTokens != 0 || len(q.Tools) != 0 {
					t.Errorf("unexpected fields: %s", q.Body)
				}
			},
		},
	}
	for _, stream := range []bool{false, true} {
		for _, tt := range tests {
			name := tt.name
			if stream {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				srv := llmtest.New(t, llmtest.Script(tt.reply))
				c := newClient(t, srv, nil)
				req := tt.req
				var deltas []string
				if stream {
					req.OnDelta = func(s string) { deltas = append(deltas, s) }
				}
				got, err := c.Complete(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				want := tt.want
				if stream && want.Usage == (llm.Usage{}) {
					want.Usage = got.Usage // streamed usage is checked in TestStream
				}
				if !equalJSON(got, want) {
					t.Errorf("response\n got %+v\nwant %+v", got, want)
				}
				q := srv.Requests()[0]
				if q.Stream != stream || q.IncludeUsage != stream {
					t.Errorf("stream %v include_usage %v, want %v", q.Stream, q.IncludeUsage, stream)
				}
				if stream && strings.Join(deltas, "") != tt.want.Message.Content {
					t.Errorf("deltas %q do not add up to %q", deltas, tt.want.Message.Content)
				}
				if tt.checkQ != nil {
					tt.checkQ(t, q)
				}
			})
		}
	}
}

func equalJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// TestStream checks that tool calls whose arguments arrive a few bytes
// at a time are reassembled whole, text arrives as several deltas, and
// usage from the final chunk is reported.
func TestStream(t *testing.T) {
	args := `{"command":"find . -name '*.go' -exec grep -l \"ünï\" {} +","timeout":30}`
	srv := llmtest.New(t, llmtest.Script(llmtest.Reply{
		Text:      "Let me look — carefully.",
		ToolCalls: []llmtest.ToolCall{llmtest.Call("shell", args), llmtest.Call("read", `{"path":"a"}`), {ID: "mine", Name: "shell", Arguments: `{}`}},
		ChunkSize: 3, PromptTokens: 100, CompletionTokens: 42,
	}))
	c := newClient(t, srv, nil)
	var deltas []string
	got, err := c.Complete(context.Background(), llm.Request{Messages: conversation[:2], OnDelta: func(s string) { deltas = append(deltas, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(deltas) < 5 || strings.Join(deltas, "") != "Let me look — carefully." {
		t.Errorf("deltas %q", deltas)
	}
	want := []llm.ToolCall{{ID: "call_0_0", Name: "shell", Arguments: args}, {ID: "call_0_1", Name: "read", Arguments: `{"path":"a"}`}, {ID: "mine", Name: "shell", Arguments: `{}`}}
	if !slices.Equal(got.Message.ToolCalls, want) {
		t.Errorf("tool calls\n got %+v\nwant %+v", got.Message.ToolCalls, want)
	}
	if got.FinishReason != "tool_calls" || got.Usage != (llm.Usage{PromptTokens: 100, CompletionTokens: 42}) {
		t.Errorf("finish %q usage %+v", got.FinishReason, got.Usage)
	}
}

func TestErrors(t *testing.T) {
	const key = "sk-test-secret"
	ask := llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "hi"}}}
	tests := []struct {
		name     string
		replies  []llmtest.Reply
		retries  int
		timeout  time.Duration
		stream   bool
		want     error  // sentinel
		text     string // in the error
		requests int
		minWait  time.Duration
		maxWait  time.Duration
	}{
		{name: "400 refused, not retried", replies: []llmtest.Reply{llmtest.Error(400, "max_completion_tokens is too large")}, retries: 2,
			want: llm.ErrRefused, text: "HTTP 400: max_completion_tokens is too large", requests: 1},
		{name: "401 refused", replies: []llmtest.Reply{{Status: 401, ErrorMessage: "Incorrect API key provided: " + key, ErrorCode: "invalid_api_key"}}, retries: 2,
			want: llm.ErrRefused, text: "HTTP 401: Incorrect API key provided: [redacted] (invalid_api_key)", requests: 1},
		{name: "429 until retries run out", replies: []llmtest.Reply{
			{Status: 429, ErrorMessage: "slow down", RetryAfter: 10 * time.Millisecond},
			{Status: 429, ErrorMessage: "slow down", RetryAfter: 10 * time.Millisecond},
			{Status: 429, ErrorMessage: "still slow", RetryAfter: 10 * time.Millisecond},
		}, retries: 2, want: llm.ErrUnavailable, text: "HTTP 429: still slow", requests: 3},
		{name: "429 then success honours Retry-After", replies: []llmtest.Reply{
			{Status: 429, ErrorMessage: "slow down", RetryAfter: 700 * time.Millisecond}, llmtest.Text("ok"),
		}, retries: 2, requests: 2, minWait: 700 * time.Millisecond},
		{name: "500 then success with backoff", replies: []llmtest.Reply{llmtest.Error(500, "boom"), llmtest.Text("ok")},
			retries: 1, requests: 2, minWait: 300 * time.Millisecond},
		{name: "503 without retries", replies: []llmtest.Reply{llmtest.Error(503, "overloaded")},
			want: llm.ErrUnavailable, text: "HTTP 503: overloaded", requests: 1},
		{name: "Retry-After beyond the timeout returns the 429 at once", replies: []llmtest.Reply{
			{Status: 429, ErrorMessage: "come back in a minute", RetryAfter: time.Minute},
		}, retries: 2, timeout: 2 * time.Second, want: llm.ErrUnavailable, text: "HTTP 429: come back in a minute", requests: 1, maxWait: time.Second},
		{name: "timeout", replies: []llmtest.Reply{{Text: "late", Delay: time.Minute}}, timeout: 200 * time.Millisecond,
			want: llm.ErrUnavailable, text: "timed out", requests: 1, maxWait: 5 * time.Second},
		{name: "stalled stream times out", replies: []llmtest.Reply{{Text: "a long reply", ChunkDelay: time.Minute}}, timeout: 300 * time.Millisecond, stream: true,
			want: llm.ErrUnavailable, text: "timed out", requests: 1, maxWait: 5 * time.Second},
		{name: "stream cut off", replies: []llmtest.Reply{{ToolCalls: []llmtest.ToolCall{llmtest.Call("shell", `{"command":"rm -rf /tmp/x"}`)}, Truncate: true}}, stream: true,
			want: llm.ErrUnavailable, text: "stream ended before the reply was complete", requests: 1},
		{name: "stream 429", replies: []llmtest.Reply{llmtest.Error(429, "slow down")}, stream: true,
			want: llm.ErrUnavailable, text: "HTTP 429: slow down", requests: 1},
		{name: "not JSON", replies: []llmtest.Reply{{Raw: "<html>gateway</html>"}},
			want: llm.ErrUnavailable, requests: 1},
		{name: "no choices", replies: []llmtest.Reply{{Raw: `{"id":"x","object":"chat.completion","choices":[]}`}},
			want: llm.ErrUnavailable, text: "no choices", requests: 1},
		{name: "stream error event", replies: []llmtest.Reply{{Raw: "data: {\"error\":{\"message\":\"overloaded mid-stream\"}}\n\n"}}, stream: true,
			want: llm.ErrUnavailable, text: "overloaded mid-stream", requests: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Script(tt.replies...))
			c := newClient(t, srv, func(o *Options) {
				o.APIKey, o.MaxRetries = key, tt.retries
				if tt.timeout > 0 {
					o.Timeout = tt.timeout
				}
			})
			req := ask
			if tt.stream {
				req.OnDelta = func(string) {}
			}
			start := time.Now()
			got, err := c.Complete(context.Background(), req)
			took := time.Since(start)
			if tt.want == nil {
				if err != nil || got.Message.Content != "ok" {
					t.Fatalf("got %+v %v, want ok", got, err)
				}
			} else {
				if !errors.Is(err, tt.want) {
					t.Fatalf("error %v, want %v", err, tt.want)
				}
				if !strings.Contains(err.Error(), tt.text) {
					t.Errorf("error %q lacks %q", err, tt.text)
				}
				if strings.Contains(err.Error(), key) {
					t.Errorf("error %q contains the API key", err)
				}
			}
			if n := len(srv.Requests()); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
			if took < tt.minWait {
				t.Errorf("took %s, want at least %s (retry delay)", took, tt.minWait)
			}
			if tt.maxWait > 0 && took > tt.maxWait {
				t.Errorf("took %s, want at most %s", took, tt.maxWait)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err := New(Options{BaseURL: "http://" + addr + "/v1/", Model: "m", APIKey: "sk-conn"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "x"}}})
	if !errors.Is(err, llm.ErrUnavailable) || strings.Contains(err.Error(), "sk-conn") {
		t.Fatalf("got %v", err)
	}
}

func TestCallerCancel(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script(llmtest.Reply{Text: "late", Delay: time.Minute}))
	c := newClient(t, srv, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := c.Complete(ctx, llm.Request{Messages: []llm.Message{{Role: llm.User, Content: "x"}}})
	if !errors.Is(err, llm.ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

func TestBadRequestIsNotSent(t *testing.T) {
	srv := llmtest.New(t, llmtest.Script())
	c := newClient(t, srv, nil)
	for _, m := range []llm.Message{{Role: "robot", Content: "x"}, {Role: llm.Tool, Content: "orphan"}} {
		_, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{m}})
		if !errors.Is(err, llm.ErrRefused) {
			t.Errorf("%+v: got %v", m, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestMaxRetryDelay(t *testing.T) {
	tests := []struct{ timeout, want time.Duration }{
		{0, time.Minute}, {10 * time.Minute, time.Minute}, {30 * time.Second, 15 * time.Second}, {time.Nanosecond, time.Millisecond},
	}
	for _, tt := range tests {
		if got := maxRetryDelay(tt.timeout); got != tt.want {
			t.Errorf("maxRetryDelay(%s) = %s, want %s", tt.timeout, got, tt.want)
		}
	}
}
