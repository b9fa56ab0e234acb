package sqldb

import (
	"context"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
)

const chatPostCols = `platform, request, chat, thread, message, posted`

func scanChatPost(sc codec.Scanner) (store.ChatPost, error) {
	var (
		p      store.ChatPost
		posted string
	)
	if err := sc.Scan(&p.Platform, &p.Request, &p.Chat, &p.Thread, &p.Message, &posted); err != nil {
		return store.ChatPost{}, err
	}
	t, err := codec.ParseTime(posted)
	if err != nil {
		return store.ChatPost{}, fmt.Errorf("chat post %s/%s: %w", p.Platform, p.Request, err)
	}
	p.Posted = t
	return p, nil
}

// ClaimChatPost records p unless the request already has a post on the
// platform: of several hosts (or surfaces) claiming one request, one
// wins (the primary key decides).
func (b *Base) ClaimChatPost(ctx context.Context, p store.ChatPost) (bool, error) {
	if p.Platform == "" || p.Request == "" {
		return false, errors.New("claim chat post: empty platform or request")
	}
	posted, err := codec.Time(p.Posted)
	if err != nil {
		return false, fmt.Errorf("claim chat post %s/%s: %w", p.Platform, p.Request, err)
	}
	n, err := b.w.Exec(ctx, `INSERT INTO chat_posts (`+chatPostCols+`) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (platform, request) DO NOTHING`, p.Platform, p.Request, p.Chat, p.Thread, p.Message, posted)
	if err != nil {
		return false, fmt.Errorf("claim chat post %s/%s: %w", p.Platform, p.Request, b.note(err))
	}
	return n == 1, nil
}

// SetChatMessage records a claimed post's message id.
func (b *Base) SetChatMessage(ctx context.Context, platform, request, message string) error {
	n, err := b.w.Exec(ctx, `UPDATE chat_posts SET message = ? WHERE platform = ? AND request = ?`, message, platform, request)
	switch {
	case err != nil:
		return fmt.Errorf("set chat message %s/%s: %w", platform, request, b.note(err))
	case n == 0:
		return fmt.Errorf("set chat message %s/%s: %w", platform, request, store.ErrNotFound)
	}
	return nil
}

// ChatPostsOf lists a platform's posts, oldest first.
func (b *Base) ChatPostsOf(ctx context.Context, platform string) ([]store.ChatPost, error) {
	out, err := QueryRows(ctx, b.r, scanChatPost, `SELECT `+chatPostCols+` FROM chat_posts WHERE platform = ? ORDER BY posted, request`, platform)
	if err != nil {
		return nil, fmt.Errorf("list %s chat posts: %w", platform, b.note(err))
	}
	return out, nil
}

// GetChatPost reads one post.
func (b *Base) GetChatPost(ctx context.Context, platform, request string) (store.ChatPost, error) {
	p, err := scanChatPost(b.r.QueryRow(ctx, `SELECT `+chatPostCols+` FROM chat_posts WHERE platform = ? AND request = ?`, platform, request))
	if err != nil {
		return store.ChatPost{}, fmt.Errorf("get chat post %s/%s: %w", platform, request, b.note(notFound(err)))
	}
	return p, nil
}

// DropChatPost forgets a post.
func (b *Base) DropChatPost(ctx context.Context, platform, request string) error {
	if _, err := b.w.Exec(ctx, `DELETE FROM chat_posts WHERE platform = ? AND request = ?`, platform, request); err != nil {
		return fmt.Errorf("drop chat post %s/%s: %w", platform, request, b.note(err))
	}
	return nil
}
