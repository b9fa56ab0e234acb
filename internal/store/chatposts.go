package store

import (
	"context"
	"time"
)

// ChatPost is where a chat surface showed one request: the platform's
// message, so the message can be edited when the request ends (no live
// button is left behind) and a request is posted once, even across
// restarts and reconnections.
type ChatPost struct {
	// Platform ("discord", "slack", "telegram") and Request (the
	// request id) identify the post.
	Platform string `json:"platform"`
	Request  string `json:"request"`
	// Chat and Thread are where the message is (a channel, a thread).
	Chat   string `json:"chat"`
	Thread string `json:"thread,omitempty"`
	// Message is the platform's message id; "" while the post is
	// claimed but not yet sent (or its sending failed).
	Message string    `json:"message,omitempty"`
	Posted  time.Time `json:"posted_at"`
}

// ChatPosts keeps the chat surfaces' posts of pending requests. A post
// is claimed before the message is sent, so two adapters (or one that
// reconnects) never send a request twice; it is dropped once its message
// shows how the request ended.
type ChatPosts interface {
	// ClaimChatPost records p (Message may be empty) unless a post of
	// p.Request on p.Platform exists; it reports whether p was recorded.
	ClaimChatPost(ctx context.Context, p ChatPost) (bool, error)
	// SetChatMessage records the message id of a claimed post;
	// ErrNotFound if there is no such post.
	SetChatMessage(ctx context.Context, platform, request, message string) error
	// ChatPostsOf lists platform's posts, oldest first.
	ChatPostsOf(ctx context.Context, platform string) ([]ChatPost, error)
	// GetChatPost reads one post, or ErrNotFound.
	GetChatPost(ctx context.Context, platform, request string) (ChatPost, error)
	// DropChatPost forgets a post (its message is final, or it was never
	// sent); dropping a missing post is not an error.
	DropChatPost(ctx context.Context, platform, request string) error
}
