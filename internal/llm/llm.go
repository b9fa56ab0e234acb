// Package llm is warden's view of a chat model: a conversation of
// messages, tool schemas the model may call, and one Complete call that
// returns the model's next message. The agent loop and the guardian use
// only this package; the provider adapters (internal/llm/openai) are the
// only code that knows a wire protocol, so nothing else imports a
// provider SDK.
package llm

import (
	"context"
	"errors"
)

// Role is who said a message.
type Role string

// Roles.
const (
	System    Role = "system"
	User      Role = "user"
	Assistant Role = "assistant"
	// Tool is a tool's result, answering the assistant's call ToolCallID.
	Tool Role = "tool"
)

// Message is one turn of a conversation.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message makes.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is the call a Tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// ToolCall is the model asking to call a tool.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the JSON object text the model wrote. It is untrusted
	// and may not even be valid JSON.
	Arguments string `json:"arguments"`
}

// ToolSpec describes a tool the model may call.
type ToolSpec struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments object.
	Parameters map[string]any
}

// Request is one model call.
type Request struct {
	// Model overrides the client's default model when set.
	Model    string
	Messages []Message
	Tools    []ToolSpec
	// MaxTokens bounds the completion; 0 leaves it to the server.
	MaxTokens int
	// Temperature is sent when set.
	Temperature *float64
	// JSONSchema, when set, asks for a reply that is a JSON object
	// matching this schema (structured output); SchemaName names it.
	JSONSchema map[string]any
	SchemaName string
	// OnDelta, when set, streams the reply: it is called with each piece
	// of assistant text as it arrives. Complete still returns the whole
	// message.
	OnDelta func(text string)
}

// Usage is what a call cost.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Response is the model's next message.
type Response struct {
	Message Message
	// FinishReason is the provider's reason ("stop", "tool_calls",
	// "length"…).
	FinishReason string
	Usage        Usage
}

// Client is a chat model.
type Client interface {
	// Complete sends req and returns the model's reply. Errors wrap
	// ErrUnavailable when the provider could not be reached or kept
	// failing after retries, and ErrRefused when it rejected the request.
	Complete(ctx context.Context, req Request) (Response, error)
}

// Sentinel errors of Complete.
var (
	// ErrUnavailable: the provider could not be reached, timed out, or
	// kept answering 429/5xx after the configured retries.
	ErrUnavailable = errors.New("model unavailable")
	// ErrRefused: the provider rejected the request (4xx other than 429).
	ErrRefused = errors.New("model request refused")
	// ErrNotConfigured: no model is configured (llm.base_url, llm.model).
	ErrNotConfigured = errors.New("no model configured: set llm.base_url and llm.model in the config file")
)
