package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// AppendMessages adds msgs at the end of conversation in one
// transaction, numbering them after the last one stored.
func (db *DB) AppendMessages(ctx context.Context, conversation string, msgs ...json.RawMessage) error {
	if err := db.appendMessages(ctx, conversation, msgs); err != nil {
		return fmt.Errorf("append messages to %q: %w", conversation, err)
	}
	return nil
}

func (db *DB) appendMessages(ctx context.Context, conversation string, msgs []json.RawMessage) error {
	if conversation == "" {
		return fmt.Errorf("empty conversation id")
	}
	if len(msgs) == 0 {
		return nil
	}
	now, err := encTime(time.Now())
	if err != nil {
		return err
	}
	tx, err := db.q.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var last int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM messages WHERE conversation = ?`, conversation).Scan(&last); err != nil {
		return err
	}
	for i, m := range msgs {
		b, err := encJSON("message", m)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (conversation, seq, message, created) VALUES (?, ?, ?, ?)`,
			conversation, last+int64(i)+1, b, now); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Messages returns the last limit messages of conversation in order;
// limit <= 0 means all.
func (db *DB) Messages(ctx context.Context, conversation string, limit int) ([]json.RawMessage, error) {
	q := `SELECT message FROM (SELECT seq, message FROM messages WHERE conversation = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq`
	if limit <= 0 {
		limit = -1
	}
	rows, err := db.r.QueryContext(ctx, q, conversation, limit)
	if err != nil {
		return nil, fmt.Errorf("messages of %q: %w", conversation, err)
	}
	defer rows.Close()
	out := []json.RawMessage{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("messages of %q: %w", conversation, err)
		}
		var m json.RawMessage
		if err := decJSON("message", s, &m); err != nil {
			return nil, fmt.Errorf("messages of %q: %w", conversation, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("messages of %q: %w", conversation, err)
	}
	return out, nil
}
