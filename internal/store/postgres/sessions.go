package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
)

const sessionCols = `session, owner, owner_text, yolo, created, ended`

func scanSession(sc scanner) (store.SessionRow, error) {
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
// exactly as it is.
func (db *DB) UpsertSession(ctx context.Context, s store.SessionRow) error {
	if err := db.upsertSession(ctx, s); err != nil {
		return fmt.Errorf("upsert session %s: %w", s.Key, err)
	}
	return nil
}

func (db *DB) upsertSession(ctx context.Context, s store.SessionRow) error {
	if s.Key == "" {
		return errors.New("empty key")
	}
	owner, err := codec.Raw("owner", s.Owner)
	if err != nil {
		return err
	}
	created, err := codec.Time(s.Created)
	if err != nil {
		return err
	}
	ended, err := codec.OptTime(s.Ended)
	if err != nil {
		return err
	}
	if err := db.refuse(); err != nil {
		return err
	}
	_, err = db.pool.Exec(ctx, `INSERT INTO sessions (`+sessionCols+`) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (session) DO NOTHING`, s.Key, owner, s.OwnerText, s.Yolo, created, ended)
	return db.noteConn(err)
}

// GetSession returns the session key, or store.ErrNotFound.
func (db *DB) GetSession(ctx context.Context, key string) (store.SessionRow, error) {
	s, err := scanSession(db.pool.QueryRow(ctx, `SELECT `+sessionCols+` FROM sessions WHERE session = $1`, key))
	if noRows(err) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.SessionRow{}, fmt.Errorf("get session %s: %w", key, db.noteConn(err))
	}
	return s, nil
}

// ListSessions lists every session, oldest first.
func (db *DB) ListSessions(ctx context.Context) ([]store.SessionRow, error) {
	out, err := queryRows(ctx, db.pool, scanSession, `SELECT `+sessionCols+` FROM sessions ORDER BY created, ord`)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", db.noteConn(err))
	}
	return out, nil
}

// EndSession marks the session ended at at (zero means now); ending it
// again keeps the first end time.
func (db *DB) EndSession(ctx context.Context, key string, at time.Time) error {
	ts, err := codec.Time(now(at))
	if err == nil {
		err = db.exec1(ctx, `UPDATE sessions SET ended = coalesce(ended, $1) WHERE session = $2`, ts, key)
	}
	if err != nil {
		return fmt.Errorf("end session %s: %w", key, err)
	}
	return nil
}

// SetYolo turns the session's yolo switch on or off.
func (db *DB) SetYolo(ctx context.Context, key string, on bool) error {
	if err := db.exec1(ctx, `UPDATE sessions SET yolo = $1 WHERE session = $2`, on, key); err != nil {
		return fmt.Errorf("set yolo of session %s: %w", key, err)
	}
	return nil
}

// SessionYolo reports whether the session's yolo switch is on, read
// from the shared row on every call (so a switch flipped on one host
// holds on every host at once). An unknown or ended session has none.
func (db *DB) SessionYolo(ctx context.Context, key string) (bool, error) {
	var on bool
	err := db.pool.QueryRow(ctx, `SELECT yolo FROM sessions WHERE session = $1 AND ended IS NULL`, key).Scan(&on)
	switch {
	case noRows(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("yolo of session %s: %w", key, db.noteConn(err))
	}
	return on, nil
}
