package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wardenhq/warden/internal/store/codec"
)

// AppendMessages adds msgs at the end of conversation in one
// transaction (with synchronous_commit off: a conversation is not a
// decision), numbering them after the last one stored, under an
// advisory lock of the conversation, so that two appends to one
// conversation from two hosts number apart.
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
	ts, err := codec.Time(time.Now())
	if err != nil {
		return err
	}
	return db.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "warden.messages."+conversation); err != nil {
			return err
		}
		var last int64
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM messages WHERE conversation = $1`, conversation).Scan(&last); err != nil {
			return err
		}
		for i, m := range msgs {
			b, err := codec.JSON("message", m)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO messages (conversation, seq, message, created) VALUES ($1, $2, $3, $4)`,
				conversation, last+int64(i)+1, b, ts); err != nil {
				return err
			}
		}
		return nil
	})
}

// Messages returns the last limit messages of conversation in order;
// limit <= 0 means all.
func (db *DB) Messages(ctx context.Context, conversation string, limit int) ([]json.RawMessage, error) {
	q := `SELECT message FROM messages WHERE conversation = $1 ORDER BY seq`
	args := []any{conversation}
	if limit > 0 {
		q = `SELECT message FROM (SELECT seq, message FROM messages WHERE conversation = $1 ORDER BY seq DESC LIMIT $2) AS last ORDER BY seq`
		args = append(args, limit)
	}
	out, err := queryRows(ctx, db.pool, func(sc scanner) (json.RawMessage, error) {
		var s string
		var m json.RawMessage
		if err := sc.Scan(&s); err != nil {
			return m, err
		}
		return m, codec.ParseJSON("message", s, &m)
	}, q, args...)
	if err != nil {
		return nil, fmt.Errorf("messages of %q: %w", conversation, db.noteConn(err))
	}
	return out, nil
}
