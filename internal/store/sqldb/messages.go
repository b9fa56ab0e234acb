package sqldb

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/wardenhq/warden/internal/store/codec"
)

// AppendMessages adds msgs at the end of conversation in one relaxed
// transaction (a conversation is not a decision), numbering them after
// the last one stored, under the conversation's lock where the engine
// has one, so that two appends to one conversation from two hosts
// number apart.
func (b *Base) AppendMessages(ctx context.Context, conversation string, msgs ...json.RawMessage) error {
	if err := b.appendMessages(ctx, conversation, msgs); err != nil {
		return fmt.Errorf("append messages to %q: %w", conversation, err)
	}
	return nil
}

func (b *Base) appendMessages(ctx context.Context, conversation string, msgs []json.RawMessage) error {
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
	return b.inTx(ctx, TxRelaxed, func(tx Q) error {
		if b.d.Lock != nil {
			if err := b.d.Lock(ctx, tx, "warden.messages."+conversation); err != nil {
				return err
			}
		}
		var last int64
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) FROM messages WHERE conversation = ?`, conversation).Scan(&last); err != nil {
			return err
		}
		for i, m := range msgs {
			s, err := codec.JSON("message", m)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO messages (conversation, seq, message, created) VALUES (?, ?, ?, ?)`,
				conversation, last+int64(i)+1, s, ts); err != nil {
				return err
			}
		}
		return nil
	})
}

// Messages returns conversation's messages in order: the last limit of
// them, or all when limit <= 0.
func (b *Base) Messages(ctx context.Context, conversation string, limit int) ([]json.RawMessage, error) {
	q := `SELECT message FROM messages WHERE conversation = ? ORDER BY seq`
	args := []any{conversation}
	if limit > 0 {
		q = `SELECT message FROM (SELECT seq, message FROM messages WHERE conversation = ? ORDER BY seq DESC LIMIT ?) AS last ORDER BY seq`
		args = append(args, limit)
	}
	out, err := QueryRows(ctx, b.r, func(sc codec.Scanner) (json.RawMessage, error) {
		var (
			s string
			m json.RawMessage
		)
		if err := sc.Scan(&s); err != nil {
			return m, err
		}
		return m, codec.ParseJSON("message", s, &m)
	}, q, args...)
	if err != nil {
		return nil, fmt.Errorf("messages of %q: %w", conversation, b.note(err))
	}
	return out, nil
}
