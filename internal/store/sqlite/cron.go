package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqldb"
)

// The cron store is sqldb's (Base); what differs here is that a run's
// steps and its end go through the committer.
var _ store.CronStore = (*DB)(nil)

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// queryRows runs q on db and scans every row with scan; no rows is an
// empty slice (sqldb.QueryRows).
func queryRows[T any](ctx context.Context, db querier, scan func(scanner) (T, error), q string, args ...any) ([]T, error) {
	return sqldb.QueryRows(ctx, sqldb.Std(db), scan, q, args...)
}

// AppendCronStep adds the run's next step, its output capped, through
// the committer: a burst of runs shares its commits (group commit), at
// synchronous=NORMAL unless a durable write shares the batch. The
// step's decision is already durable in the audit log.
func (db *DB) AppendCronStep(ctx context.Context, runID string, st store.CronStep) (store.CronStep, error) {
	return db.AppendCronStepVia(ctx, db.relaxedOp, runID, st)
}

// FinishCronRun ends a running run through the committer, as
// AppendCronStep.
func (db *DB) FinishCronRun(ctx context.Context, runID string, status store.RunStatus, at time.Time, msg string) (store.CronRun, error) {
	return db.FinishCronRunVia(ctx, db.relaxedOp, runID, status, at, msg)
}

// relaxedOp runs fn as an op of the committer that need not be durable
// at once (sqldb.WriteFunc).
func (db *DB) relaxedOp(ctx context.Context, fn func(ctx context.Context, tx sqldb.Q) error) error {
	return db.submit(ctx, false, func(ctx context.Context, tx *wtx, _ *chain) error { return fn(ctx, sqldb.Std(tx)) })
}
