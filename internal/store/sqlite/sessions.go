package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/wardenhq/warden/internal/store"
)

const sessionCols = `session, owner, owner_text, yolo, created, ended`

func scanSession(sc scanner) (store.SessionRow, error) {
	var (
		s            store.SessionRow
		owner, ended sql.NullString
		created      string
	)
	if err := sc.Scan(&s.Key, &owner, &s.OwnerText, &s.Yolo, &created, &ended); err != nil {
		return store.SessionRow{}, err
	}
	s.Owner = decRaw(owner)
	var err1, err2 error
	s.Created, err1 = decTime(created)
	s.Ended, err2 = decOptTime(ended)
	if err := errors.Join(err1, err2); err != nil {
		return store.SessionRow{}, fmt.Errorf("session %s: %w", s.Key, err)
	}
	return s, nil
}

// UpsertSession creates the session s.Key, or leaves an existing one
// exactly as it is (its owner, yolo switch and end included).
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
	owner, err := encRaw("owner", s.Owner)
	if err != nil {
		return err
	}
	created, err := encTime(s.Created)
	if err != nil {
		return err
	}
	ended, err := encOptTime(s.Ended)
	if err != nil {
		return err
	}
	// Most calls find the session there (every exec of a web session
	// upserts it): a reader answers those without queueing behind the
	// writer's batches.
	var one int
	if err := db.r.QueryRowContext(ctx, `SELECT 1 FROM sessions WHERE session = ?`, s.Key).Scan(&one); err == nil {
		return nil
	}
	// A new session goes through the committer, so a burst of new
	// sessions (thousands of exec calls at once) shares its commits
	// instead of paying an fsync each. Like a question asked, it commits
	// at synchronous=NORMAL unless a durable write shares the batch: no
	// action runs on a session row alone, and the next durable commit
	// (its first decision's record) makes it durable too.
	return db.submit(ctx, false, func(ctx context.Context, tx *wtx, _ *chain) error {
		_, err := tx.ExecContext(ctx, sqlSessionInsert, s.Key, owner, s.OwnerText, s.Yolo, created, ended)
		return err
	})
}

const sqlSessionInsert = `INSERT INTO sessions (` + sessionCols + `) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (session) DO NOTHING`

// GetSession returns the session key, or store.ErrNotFound.
func (db *DB) GetSession(ctx context.Context, key string) (store.SessionRow, error) {
	s, err := scanSession(db.r.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE session = ?`, key))
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.SessionRow{}, fmt.Errorf("get session %s: %w", key, err)
	}
	return s, nil
}

// ListSessions lists every session, oldest first.
func (db *DB) ListSessions(ctx context.Context) ([]store.SessionRow, error) {
	out, err := queryRows(ctx, db.r, scanSession, `SELECT `+sessionCols+` FROM sessions ORDER BY created, rowid`)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

// EndSession marks the session ended at at (zero means now). Ending an
// ended session keeps its first end time; an unknown key is
// store.ErrNotFound.
func (db *DB) EndSession(ctx context.Context, key string, at time.Time) error {
	if at.IsZero() {
		at = time.Now()
	}
	ts, err := encTime(at)
	if err == nil {
		var res sql.Result
		res, err = db.w.ExecContext(ctx, `UPDATE sessions SET ended = coalesce(ended, ?) WHERE session = ?`, ts, key)
		if err == nil {
			err = oneRow(res)
		}
	}
	if err != nil {
		return fmt.Errorf("end session %s: %w", key, err)
	}
	return nil
}

// SetYolo turns the session's yolo switch on or off; an unknown key is
// store.ErrNotFound.
func (db *DB) SetYolo(ctx context.Context, key string, on bool) error {
	res, err := db.w.ExecContext(ctx, `UPDATE sessions SET yolo = ? WHERE session = ?`, on, key)
	if err == nil {
		err = oneRow(res)
	}
	if err != nil {
		return fmt.Errorf("set yolo of session %s: %w", key, err)
	}
	return nil
}

// SessionYolo reports whether the session's yolo switch is on. An
// unknown or ended session has none.
func (db *DB) SessionYolo(ctx context.Context, key string) (bool, error) {
	var on bool
	err := db.r.QueryRowContext(ctx, `SELECT yolo FROM sessions WHERE session = ? AND ended IS NULL`, key).Scan(&on)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("yolo of session %s: %w", key, err)
	}
	return on, nil
}

// oneRow turns an UPDATE or DELETE that matched nothing into
// store.ErrNotFound.
func oneRow(res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}
