package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/internal/store"
)

var _ store.ChatPosts = (*DB)(nil)

const chatPostCols = `platform, request, chat, thread, message, posted`

func scanChatPost(sc scanner) (store.ChatPost, error) {
	var (
		p      store.ChatPost
		posted string
	)
	if err := sc.Scan(&p.Platform, &p.Request, &p.Chat, &p.Thread, &p.Message, &posted); err != nil {
		return store.ChatPost{}, err
	}
	t, err := decTime(posted)
	if err != nil {
		return store.ChatPost{}, fmt.Errorf("chat post %s/%s: %w", p.Platform, p.Request, err)
	}
	p.Posted = t
	return p, nil
}

// ClaimChatPost records p unless the request already has a post on the
// platform.
func (db *DB) ClaimChatPost(ctx context.Context, p store.ChatPost) (bool, error) {
	if p.Platform == "" || p.Request == "" {
		return false, errors.New("claim chat post: empty platform or request")
	}
	posted, err := encTime(p.Posted)
	if err != nil {
		return false, fmt.Errorf("claim chat post %s/%s: %w", p.Platform, p.Request, err)
	}
	res, err := db.w.ExecContext(ctx, `INSERT INTO chat_posts (`+chatPostCols+`) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (platform, request) DO NOTHING`, p.Platform, p.Request, p.Chat, p.Thread, p.Message, posted)
	if err != nil {
		return false, fmt.Errorf("claim chat post %s/%s: %w", p.Platform, p.Request, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("claim chat post %s/%s: %w", p.Platform, p.Request, err)
	}
	return n == 1, nil
}

// SetChatMessage records a claimed post's message id.
func (db *DB) SetChatMessage(ctx context.Context, platform, request, message string) error {
	res, err := db.w.ExecContext(ctx, `UPDATE chat_posts SET message = ? WHERE platform = ? AND request = ?`, message, platform, request)
	if err == nil {
		var n int64
		if n, err = res.RowsAffected(); err == nil && n == 0 {
			err = store.ErrNotFound
		}
	}
	if err != nil {
		return fmt.Errorf("set chat message %s/%s: %w", platform, request, err)
	}
	return nil
}

// ChatPostsOf lists a platform's posts, oldest first.
func (db *DB) ChatPostsOf(ctx context.Context, platform string) ([]store.ChatPost, error) {
	out, err := queryRows(ctx, db.r, scanChatPost, `SELECT `+chatPostCols+` FROM chat_posts WHERE platform = ? ORDER BY posted, request`, platform)
	if err != nil {
		return nil, fmt.Errorf("list %s chat posts: %w", platform, err)
	}
	return out, nil
}

// GetChatPost reads one post.
func (db *DB) GetChatPost(ctx context.Context, platform, request string) (store.ChatPost, error) {
	p, err := scanChatPost(db.r.QueryRowContext(ctx, `SELECT `+chatPostCols+` FROM chat_posts WHERE platform = ? AND request = ?`, platform, request))
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.ChatPost{}, fmt.Errorf("get chat post %s/%s: %w", platform, request, err)
	}
	return p, nil
}

// DropChatPost forgets a post.
func (db *DB) DropChatPost(ctx context.Context, platform, request string) error {
	if _, err := db.w.ExecContext(ctx, `DELETE FROM chat_posts WHERE platform = ? AND request = ?`, platform, request); err != nil {
		return fmt.Errorf("drop chat post %s/%s: %w", platform, request, err)
	}
	return nil
}
