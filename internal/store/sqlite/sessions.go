package sqlite

import (
	"context"
	"fmt"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqldb"
)

// sqlSessionInsert is the committer's prepared session insert
// (writer.go preparedSQL).
const sqlSessionInsert = sqldb.SessionInsert

// UpsertSession creates the session s.Key, or leaves an existing one
// exactly as it is (its owner, yolo switch and end included). It is
// SQLite's own (sqldb.Base has one statement on the writer): a reader
// answers the common case, and new sessions share the committer's
// batches.
func (db *DB) UpsertSession(ctx context.Context, s store.SessionRow) error {
	if err := db.upsertSession(ctx, s); err != nil {
		return fmt.Errorf("upsert session %s: %w", s.Key, err)
	}
	return nil
}

func (db *DB) upsertSession(ctx context.Context, s store.SessionRow) error {
	args, err := sqldb.SessionArgs(s)
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
		_, err := tx.ExecContext(ctx, sqlSessionInsert, args...)
		return err
	})
}
