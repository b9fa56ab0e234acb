package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
)

const sessionCols = `session, owner, owner_text, yolo, created, ended`

// SessionInsert creates a session row unless the key has one; its
// arguments are SessionArgs'. The SQLite store's committer prepares it.
const SessionInsert = `INSERT INTO sessions (` + sessionCols + `) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (session) DO NOTHING`

// SessionArgs encodes s for SessionInsert.
func SessionArgs(s store.SessionRow) ([]any, error) {
	if s.Key == "" {
		return nil, errors.New("empty key")
	}
	owner, err1 := codec.Raw("owner", s.Owner)
	created, err2 := codec.Time(s.Created)
	ended, err3 := codec.OptTime(s.Ended)
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, err
	}
	return []any{s.Key, owner, s.OwnerText, s.Yolo, created, ended}, nil
}

func scanSession(sc codec.Scanner) (store.SessionRow, error) {
	var (
		s            store.SessionRow
		owner, ended *string
		created      string
	)
	if err := sc.Scan(&s.Key, &owner, &s.OwnerText, &s.Yolo, &created, &ended); err != nil {
		return store.SessionRow{}, err
	}
	s.Owner = codec.ParseRaw(owner)
	var err1, err2 error
	s.Created, err1 = codec.ParseTime(created)
	s.Ended, err2 = codec.ParseOptTime(ended)
	if err := errors.Join(err1, err2); err != nil {
		return store.SessionRow{}, fmt.Errorf("session %s: %w", s.Key, err)
	}
	return s, nil
}

// UpsertSession creates the session s.Key, or leaves an existing one
// exactly as it is (its owner, yolo switch and end included), with one
// statement on the write handle. (The SQLite store has its own, which
// batches new sessions in its committer.)
func (b *Base) UpsertSession(ctx context.Context, s store.SessionRow) error {
	args, err := SessionArgs(s)
	if err == nil {
		_, err = b.exec(ctx, SessionInsert, args...)
	}
	if err != nil {
		return fmt.Errorf("upsert session %s: %w", s.Key, err)
	}
	return nil
}

// GetSession returns the session key, or store.ErrNotFound.
func (b *Base) GetSession(ctx context.Context, key string) (store.SessionRow, error) {
	s, err := scanSession(b.r.QueryRow(ctx, `SELECT `+sessionCols+` FROM sessions WHERE session = ?`, key))
	if err != nil {
		return store.SessionRow{}, fmt.Errorf("get session %s: %w", key, b.note(notFound(err)))
	}
	return s, nil
}

// ListSessions lists every session, oldest first.
func (b *Base) ListSessions(ctx context.Context) ([]store.SessionRow, error) {
	out, err := QueryRows(ctx, b.r, scanSession, `SELECT `+sessionCols+` FROM sessions ORDER BY created, `+b.d.Ord)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", b.note(err))
	}
	return out, nil
}

// EndSession marks the session ended at at (zero means now). Ending an
// ended session keeps its first end time; an unknown key is
// store.ErrNotFound.
func (b *Base) EndSession(ctx context.Context, key string, at time.Time) error {
	if at.IsZero() {
		at = time.Now()
	}
	ts, err := codec.Time(at)
	if err == nil {
		err = b.exec1(ctx, `UPDATE sessions SET ended = coalesce(ended, ?) WHERE session = ?`, ts, key)
	}
	if err != nil {
		return fmt.Errorf("end session %s: %w", key, err)
	}
	return nil
}

// SetYolo turns the session's yolo switch on or off; an unknown key is
// store.ErrNotFound.
func (b *Base) SetYolo(ctx context.Context, key string, on bool) error {
	if err := b.exec1(ctx, `UPDATE sessions SET yolo = ? WHERE session = ?`, on, key); err != nil {
		return fmt.Errorf("set yolo of session %s: %w", key, err)
	}
	return nil
}

// SessionYolo reports whether the session's yolo switch is on, read
// from the row on every call (so a switch flipped on one host holds on
// every host at once). An unknown or ended session has none.
func (b *Base) SessionYolo(ctx context.Context, key string) (bool, error) {
	var on bool
	err := b.r.QueryRow(ctx, `SELECT yolo FROM sessions WHERE session = ? AND ended IS NULL`, key).Scan(&on)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("yolo of session %s: %w", key, b.note(err))
	}
	return on, nil
}
