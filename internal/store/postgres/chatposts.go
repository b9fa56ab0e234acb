package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
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
func (db *DB) ClaimChatPost(ctx context.Context, p store.ChatPost) (bool, error) {
	if p.Platform == "" || p.Request == "" {
		return false, errors.New("claim chat post: empty platform or request")
	}
	posted, err := codec.Time(p.Posted)
	if err != nil {
		return false, fmt.Errorf("claim chat post %s/%s: %w", p.Platform, p.Request, err)
	}
	tag, err := db.pool.Exec(ctx, `INSERT INTO chat_posts (`+chatPostCols+`) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (platform, request) DO NOTHING`, p.Platform, p.Request, p.Chat, p.Thread, p.Message, posted)
	if err != nil {
		return false, fmt.Errorf("claim chat post %s/%s: %w", p.Platform, p.Request, db.noteConn(err))
	}
	return tag.RowsAffected() == 1, nil
}

// SetChatMessage records a claimed post's message id.
func (db *DB) SetChatMessage(ctx context.Context, platform, request, message string) error {
	tag, err := db.pool.Exec(ctx, `UPDATE chat_posts SET message = $1 WHERE platform = $2 AND request = $3`, message, platform, request)
	switch {
	case err != nil:
		return fmt.Errorf("set chat message %s/%s: %w", platform, request, db.noteConn(err))
	case tag.RowsAffected() == 0:
		return fmt.Errorf("set chat message %s/%s: %w", platform, request, store.ErrNotFound)
	}
	return nil
}

// ChatPostsOf lists a platform's posts, oldest first.
func (db *DB) ChatPostsOf(ctx context.Context, platform string) ([]store.ChatPost, error) {
	out, err := queryRows(ctx, db.pool, scanChatPost, `SELECT `+chatPostCols+` FROM chat_posts WHERE platform = $1 ORDER BY posted, request`, platform)
	if err != nil {
		return nil, fmt.Errorf("list %s chat posts: %w", platform, db.noteConn(err))
	}
	return out, nil
}

// GetChatPost reads one post.
func (db *DB) GetChatPost(ctx context.Context, platform, request string) (store.ChatPost, error) {
	p, err := scanChatPost(db.pool.QueryRow(ctx, `SELECT `+chatPostCols+` FROM chat_posts WHERE platform = $1 AND request = $2`, platform, request))
	if noRows(err) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.ChatPost{}, fmt.Errorf("get chat post %s/%s: %w", platform, request, db.noteConn(err))
	}
	return p, nil
}

// DropChatPost forgets a post.
func (db *DB) DropChatPost(ctx context.Context, platform, request string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM chat_posts WHERE platform = $1 AND request = $2`, platform, request); err != nil {
		return fmt.Errorf("drop chat post %s/%s: %w", platform, request, db.noteConn(err))
	}
	return nil
}
