package postgres

import (
	"context"
	"time"
)

// execN runs a write and returns how many rows it touched. (The
// statements still written for PostgreSQL alone use it; the shared ones
// have sqldb.Base's.)
func (db *DB) execN(ctx context.Context, sql string, args ...any) (int, error) {
	if err := db.refuse(); err != nil {
		return 0, err
	}
	tag, err := db.pool.Exec(ctx, sql, args...)
	if err != nil {
		return 0, db.noteConn(err)
	}
	return int(tag.RowsAffected()), nil
}

// now is the store's default for a zero time.
func now(at time.Time) time.Time {
	if at.IsZero() {
		return time.Now()
	}
	return at
}
