// Package openai adapts an OpenAI-compatible Chat Completions endpoint to
// llm.Client. It is the only package that imports the openai-go SDK: the
// SDK is large and reads OPENAI_* environment variables when built with
// its NewClient, so warden keeps it here, builds only the chat completion
// service with explicit options, and never reads the environment.
package openai

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/wardenhq/warden/internal/llm"
)

// Options configure a Client. Nothing is read from the environment: the
// caller passes the key it resolved (config llm.api_key_env, read once by
// the CLI).
type Options struct {
	// BaseURL is the API root including the version, e.g.
	// "https://api.openai.com/v1/".
	BaseURL string
	// Model is sent when a request names none.
	Model string
	// APIKey is sent as a bearer token; "" sends none (local servers).
	APIKey string
	// Timeout bounds one HTTP attempt, the streamed body included; 0
	// leaves it to the caller's context. An attempt that times out ends
	// the call (the SDK does not retry it) with ErrUnavailable.
	Timeout time.Duration
	// MaxRetries is how often a 408, 409, 429 or 5xx reply or a
	// connection error is retried, with exponential backoff or the
	// server's Retry-After. 0 makes one attempt.
	MaxRetries int
	// HTTPClient carries the requests; nil uses a client whose transport
	// is http.DefaultTransport's settings without the proxy taken from
	// the environment (pass a client to use a proxy).
	HTTPClient *http.Client
	// Logger receives one debug line per failed attempt; nil discards.
	Logger *slog.Logger
}

// Client is an llm.Client speaking Chat Completions. It is safe for
// concurrent use.
type Client struct {
	svc    sdk.ChatCompletionService
	model  string
	apiKey string
	log    *slog.Logger
}

var _ llm.Client = (*Client)(nil)

// maxRetryDelay is the longest server-directed (Retry-After) or backoff
// wait before a retry. The SDK waits inside the attempt's timeout, so a
// wait longer than half the timeout would only end in a timeout; with
// this bound the SDK instead returns the 429 itself, whose message says
// why.
func maxRetryDelay(timeout time.Duration) time.Duration {
	const ceiling = time.Minute
	if timeout <= 0 || timeout/2 > ceiling {
		return ceiling
	}
	return max(timeout/2, time.Millisecond)
}

// New returns a Client. It fails when the base URL or model is missing
// or the options are out of range.
func New(o Options) (*Client, error) {
	if o.BaseURL == "" || o.Model == "" {
		return nil, llm.ErrNotConfigured
	}
	u, err := url.Parse(o.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm base url %q: want an http(s) URL such as https://api.openai.com/v1/", o.BaseURL)
	}
	if o.MaxRetries < 0 || o.Timeout < 0 {
		return nil, fmt.Errorf("llm options: negative retries (%d) or timeout (%s)", o.MaxRetries, o.Timeout)
	}
	hc := o.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.Proxy = nil // ProxyFromEnvironment would read HTTP(S)_PROXY
		hc = &http.Client{Transport: tr}
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Client{model: o.Model, apiKey: o.APIKey, log: log.With("component", "llm", "model", o.Model)}
	opts := []option.RequestOption{
		option.WithBaseURL(o.BaseURL),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(o.MaxRetries),
		option.WithMaxRetryDelay(maxRetryDelay(o.Timeout)),
		option.WithMiddleware(c.logAttempt),
	}
	if o.APIKey != "" {
		opts = append(opts, option.WithAPIKey(o.APIKey))
	}
	if o.Timeout > 0 {
		opts = append(opts, option.WithRequestTimeout(o.Timeout))
	}
	// NewChatCompletionService, unlike NewClient, applies only these
	// options: no OPENAI_* variable is consulted.
	c.svc = sdk.NewChatCompletionService(opts...)
	return c, nil
}

// logAttempt logs failed attempts (the SDK retries inside one call, so
// this is the only place a retry is visible). It logs no headers: the
// request carries the API key.
func (c *Client) logAttempt(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(r)
	attempt := r.Header.Get("X-Stainless-Retry-Count")
	switch {
	case err != nil:
		c.log.DebugContext(r.Context(), "model request failed", "attempt", attempt, "err", c.redact(err.Error()))
	case res.StatusCode >= 400:
		c.log.DebugContext(r.Context(), "model request answered with an error", "attempt", attempt, "status", res.StatusCode,
			"retry_after", res.Header.Get("Retry-After"))
	}
	return res, err
}

// Complete sends req and returns the model's reply. When req.OnDelta is
// set the reply is streamed and OnDelta sees each piece of text as it
// arrives; streamed tool calls are reassembled before they are returned,
// and a stream that ends without a finish reason is an error. A
// req.JSONSchema is sent as response_format json_schema with strict
// true, so it must follow the strict-mode rules (every property
// required, additionalProperties false).
func (c *Client) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	params, err := c.params(req)
	if err != nil {
		return llm.Response{}, fmt.Errorf("%w: %w", llm.ErrRefused, err)
	}
	if req.OnDelta == nil {
		cc, err := c.svc.New(ctx, params)
		if err != nil {
			return llm.Response{}, c.wrap(ctx, err)
		}
		return response(cc)
	}
	return c.stream(ctx, params, req.OnDelta)
}

func (c *Client) stream(ctx context.Context, params sdk.ChatCompletionNewParams, onDelta func(string)) (llm.Response, error) {
	params.StreamOptions = sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)}
	s := c.svc.NewStreaming(ctx, params)
	defer s.Close()
	var acc sdk.ChatCompletionAccumulator
	for s.Next() {
		chunk := s.Current()
		if !acc.AddChunk(chunk) {
			return llm.Response{}, fmt.Errorf("%w: model %s: malformed stream chunk", llm.ErrUnavailable, c.model)
		}
		for _, ch := range chunk.Choices {
			if ch.Index == 0 && ch.Delta.Content != "" {
				onDelta(ch.Delta.Content)
			}
		}
	}
	if err := s.Err(); err != nil {
		return llm.Response{}, c.wrap(ctx, err)
	}
	// A stream that stops without a finish reason was cut off; what
	// arrived may be half a tool call.
	if len(acc.Choices) == 0 || acc.Choices[0].FinishReason == "" {
		return llm.Response{}, fmt.Errorf("%w: model %s: the stream ended before the reply was complete", llm.ErrUnavailable, c.model)
	}
	return response(&acc.ChatCompletion)
}

// params maps a provider-neutral request to the SDK's.
func (c *Client) params(req llm.Request) (sdk.ChatCompletionNewParams, error) {
	model := req.Model
	if model == "" {
		model = c.model
	}
	p := sdk.ChatCompletionNewParams{Model: model}
	for i, m := range req.Messages {
		mp, err := message(m)
		if err != nil {
			return p, fmt.Errorf("message %d: %w", i, err)
		}
		p.Messages = append(p.Messages, mp)
	}
	for _, t := range req.Tools {
		if t.Name == "" {
			return p, errors.New("tool without a name")
		}
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(t.Parameters)}
		if t.Description != "" {
			fd.Description = sdk.String(t.Description)
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(fd))
	}
	// max_completion_tokens, not the deprecated max_tokens: reasoning
	// models reject max_tokens, and the budget covers their reasoning.
	if req.MaxTokens > 0 {
		p.MaxCompletionTokens = sdk.Int(int64(req.MaxTokens))
	}
	if req.Temperature != nil {
		p.Temperature = sdk.Float(*req.Temperature)
	}
	if req.JSONSchema != nil {
		name := req.SchemaName
		if name == "" {
			name = "reply"
		}
		p.ResponseFormat = sdk.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: name, Schema: req.JSONSchema, Strict: sdk.Bool(true)},
		}}
	}
	return p, nil
}

func message(m llm.Message) (sdk.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case llm.System:
		return sdk.SystemMessage(m.Content), nil
	case llm.User:
		return sdk.UserMessage(m.Content), nil
	case llm.Tool:
		if m.ToolCallID == "" {
			return sdk.ChatCompletionMessageParamUnion{}, errors.New("tool message without tool_call_id")
		}
		return sdk.ToolMessage(m.Content, m.ToolCallID), nil
	case llm.Assistant:
		var a sdk.ChatCompletionAssistantMessageParam
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = sdk.String(m.Content)
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID:       tc.ID,
					Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments},
				},
			})
		}
		return sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	}
	return sdk.ChatCompletionMessageParamUnion{}, fmt.Errorf("unknown role %q", m.Role)
}

// response maps the first choice. A refusal with no content becomes the
// content, so callers see why the model answered nothing.
func response(cc *sdk.ChatCompletion) (llm.Response, error) {
	if len(cc.Choices) == 0 {
		return llm.Response{}, fmt.Errorf("%w: the reply has no choices", llm.ErrUnavailable)
	}
	ch := cc.Choices[0]
	msg := llm.Message{Role: llm.Assistant, Content: ch.Message.Content}
	if msg.Content == "" {
		msg.Content = ch.Message.Refusal
	}
	for _, tc := range ch.Message.ToolCalls {
		// Only function tools are offered; a custom tool call is not
		// something warden asked for.
		if tc.Type != "" && tc.Type != "function" {
			continue
		}
		msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return llm.Response{
		Message:      msg,
		FinishReason: ch.FinishReason,
		Usage:        llm.Usage{PromptTokens: int(cc.Usage.PromptTokens), CompletionTokens: int(cc.Usage.CompletionTokens)},
	}, nil
}

// wrap classifies an SDK error as ErrUnavailable or ErrRefused. The SDK
// error itself is not wrapped: it holds the HTTP request, whose
// Authorization header is the API key.
func (c *Client) wrap(ctx context.Context, err error) error {
	if apiErr, ok := errors.AsType[*sdk.Error](err); ok {
		text := fmt.Sprintf("model %s: HTTP %d", c.model, apiErr.StatusCode)
		if m := strings.TrimSpace(apiErr.Message); m != "" {
			text += ": " + c.redact(m)
		}
		if apiErr.Code != "" {
			text += " (" + c.redact(apiErr.Code) + ")"
		}
		s := apiErr.StatusCode
		if s == http.StatusTooManyRequests || s == http.StatusRequestTimeout || s >= 500 {
			return fmt.Errorf("%w: %s", llm.ErrUnavailable, text)
		}
		return fmt.Errorf("%w: %s", llm.ErrRefused, text)
	}
	if se, ok := errors.AsType[*ssestream.StreamError](err); ok {
		return fmt.Errorf("%w: model %s: %s", llm.ErrUnavailable, c.model, c.redact(se.Message))
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: model %s: timed out: %w", llm.ErrUnavailable, c.model, context.DeadlineExceeded)
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return fmt.Errorf("%w: model %s: %w", llm.ErrUnavailable, c.model, context.Canceled)
	}
	return fmt.Errorf("%w: model %s: %s", llm.ErrUnavailable, c.model, c.redact(err.Error()))
}

// redact removes the API key from text a server or transport produced.
func (c *Client) redact(s string) string {
	if c.apiKey == "" {
		return s
	}
	return strings.ReplaceAll(s, c.apiKey, "[redacted]")
}
