package llmtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func post(t *testing.T, ctx context.Context, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer k")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

const body = `{"model":"m","max_completion_tokens":99,"temperature":0,
 "response_format":{"type":"json_schema","json_schema":{"name":"v","strict":true,"schema":{"type":"object"}}},
 "tools":[{"type":"function","function":{"name":"shell","description":"d","parameters":{"type":"object"}}}],
 "messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
  {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"shell","arguments":"{}"}}]},
  {"role":"tool","tool_call_id":"c1","content":"out"}]%s}`

func TestDecode(t *testing.T) {
	srv := New(t, Script(Text("x")))
	post(t, context.Background(), srv.URL(), fmt.Sprintf(body, ""))
	r := srv.Requests()[0]
	if r.Model != "m" || r.MaxCompletionTokens != 99 || r.Temperature == nil || *r.Temperature != 0 || r.Stream {
		t.Errorf("fields %+v", r)
	}
	if f := r.ResponseFormat; f == nil || f.Type != "json_schema" || f.Name != "v" || !f.Strict || string(f.Schema) != `{"type":"object"}` {
		t.Errorf("format %+v", r.ResponseFormat)
	}
	if names := r.ToolNames(); len(names) != 1 || names[0] != "shell" || r.Tools[0].Description != "d" {
		t.Errorf("tools %+v", r.Tools)
	}
	m := r.Messages
	if len(m) != 4 || m[1].Content != "ab" || m[2].ToolCalls[0] != (ToolCall{ID: "c1", Name: "shell", Arguments: "{}"}) || m[3].ToolCallID != "c1" || m[3].Content != "out" {
		t.Errorf("messages %+v", m)
	}
	if r.Header.Get("Authorization") != "Bearer k" {
		t.Errorf("header %v", r.Header)
	}
}

func TestCompletion(t *testing.T) {
	srv := New(t, Script(Reply{Text: "hi", ToolCalls: []ToolCall{Call("shell", `{"c":1}`)}, PromptTokens: 3, CompletionTokens: 4}))
	res := post(t, context.Background(), srv.URL(), fmt.Sprintf(body, ""))
	var got struct {
		Object  string
		Choices []struct {
			Message struct {
				Role      string
				Content   string
				ToolCalls []wireToolCall `json:"tool_calls"`
			}
			FinishReason string `json:"finish_reason"`
		}
		Usage wireUsage
	}
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	c := got.Choices[0]
	if got.Object != "chat.completion" || c.Message.Role != "assistant" || c.Message.Content != "hi" || c.FinishReason != "tool_calls" {
		t.Errorf("%+v", got)
	}
	if tc := c.Message.ToolCalls[0]; tc.ID != "call_0_0" || tc.Type != "function" || tc.Function.Name != "shell" || tc.Function.Arguments != `{"c":1}` {
		t.Errorf("tool call %+v", tc)
	}
	if got.Usage != (wireUsage{3, 4, 7}) {
		t.Errorf("usage %+v", got.Usage)
	}
}

// TestStreamFraming reads the SSE stream by hand: data lines, arguments
// split across chunks, a finish chunk, a usage chunk, then [DONE].
func TestStreamFraming(t *testing.T) {
	srv := New(t, Script(Reply{Text: "héllo", ToolCalls: []ToolCall{Call("shell", `{"command":"ls"}`)}, ChunkSize: 2, PromptTokens: 1, CompletionTokens: 2}))
	res := post(t, context.Background(), srv.URL(), fmt.Sprintf(body, `,"stream":true,"stream_options":{"include_usage":true}`))
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var text, args, finish string
	var usage *wireUsage
	done := false
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || done {
			t.Fatalf("unexpected line %q (done %v)", line, done)
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var ch struct {
			Object  string
			Choices []struct {
				Delta struct {
					Content   string
					ToolCalls []wireToolCall `json:"tool_calls"`
				}
				FinishReason *string `json:"finish_reason"`
			}
			Usage *wireUsage
		}
		if err := json.Unmarshal([]byte(data), &ch); err != nil || ch.Object != "chat.completion.chunk" {
			t.Fatalf("chunk %s: %v", data, err)
		}
		if ch.Usage != nil {
			usage = ch.Usage
		}
		for _, c := range ch.Choices {
			text += c.Delta.Content
			for _, tc := range c.Delta.ToolCalls {
				if *tc.Index != 0 {
					t.Errorf("index %d", *tc.Index)
				}
				args += tc.Function.Arguments
			}
			if c.FinishReason != nil {
				finish = *c.FinishReason
			}
		}
	}
	if !done || text != "héllo" || args != `{"command":"ls"}` || finish != "tool_calls" || usage == nil || usage.TotalTokens != 3 {
		t.Errorf("done %v text %q args %q finish %q usage %+v", done, text, args, finish, usage)
	}
}

func TestErrorReply(t *testing.T) {
	srv := New(t, Script(Reply{Status: 429, ErrorMessage: "slow", ErrorCode: "rate_limit_exceeded", RetryAfter: 1500 * time.Millisecond}))
	res := post(t, context.Background(), srv.URL(), fmt.Sprintf(body, ""))
	var e struct {
		Error struct{ Message, Type, Code string }
	}
	if err := json.NewDecoder(res.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 429 || e.Error.Message != "slow" || e.Error.Code != "rate_limit_exceeded" || e.Error.Type != "requests" {
		t.Errorf("%d %+v", res.StatusCode, e)
	}
	if res.Header.Get("Retry-After-Ms") != "1500" || res.Header.Get("Retry-After") != "2" {
		t.Errorf("retry headers %v", res.Header)
	}
}

// TestDelayHonoursCancel: a client that gives up ends the delay, so
// timeout tests do not wait for it.
func TestDelayHonoursCancel(t *testing.T) {
	srv := New(t, Script(Reply{Text: "late", Delay: time.Hour}))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"chat/completions", strings.NewReader(`{"model":"m","messages":[]}`))
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err == nil {
		res.Body.Close()
		t.Fatal("the delayed reply arrived")
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("the delay ignored the cancelled request")
	}
	// Closing the server (cleanup) must not wait an hour either; goleak
	// in TestMain checks nothing is left behind.
}

func TestBadRequest(t *testing.T) {
	srv := New(t, Script())
	res := post(t, context.Background(), srv.URL(), `{"messages":[{"role":"user","content":7}]}`)
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 400 || !strings.Contains(string(b), "neither a string") {
		t.Errorf("%d %s", res.StatusCode, b)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("an undecodable request was recorded: %d", n)
	}
}

// recorder is a testing.TB that records Errorf instead of failing.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func TestScriptExhaustedFailsTheTest(t *testing.T) {
	rec := &recorder{TB: t}
	srv := New(rec, Script(Text("only")))
	for range 2 {
		post(t, context.Background(), srv.URL(), `{"model":"m","messages":[]}`)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "request 1 has no scripted reply") {
		t.Errorf("errors %q", rec.errs)
	}
}

func TestPieces(t *testing.T) {
	got := pieces("aé✓b", 1)
	if strings.Join(got, "|") != "a|é|✓|b" {
		t.Errorf("%q", got)
	}
}
