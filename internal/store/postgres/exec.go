package postgres

import (
	"context"
	"time"

	"github.com/wardenhq/warden/internal/store"
)

// execN runs a write and returns how many rows it touched.
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

// exec1 runs a write that must touch a row; none is store.ErrNotFound.
func (db *DB) exec1(ctx context.Context, sql string, args ...any) error {
	n, err := db.execN(ctx, sql, args...)
	if err == nil && n == 0 {
		err = store.ErrNotFound
	}
	return err
}

// now is the store's default for a zero time.
func now(at time.Time) time.Time {
	if at.IsZero() {
		return time.Now()
	}
	return at
}
