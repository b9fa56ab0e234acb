package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqldb"
)

// The committer (sqldb.Committer: group commit) runs on PostgreSQL as
// follows. Each batch's transaction first takes the audit advisory
// lock, so the head it reads is the chain's head across every host. A
// batch with a decision or a human answer commits with
// synchronous_commit on; one of system transitions only (asks,
// expiries, withdrawals) with it off: a server crash may lose the last
// of them together with their rows (one transaction), and nothing runs
// on any of them. Only durable heads are remembered and anchored. The
// request changes a batch made are announced (NOTIFY) in its
// transaction, so only committed changes are. A batch is bounded by
// commitTimeout; an unreachable server is a transient fault, which the
// next commit or Ping that goes through clears.

// commitTimeout bounds one batch against a server that stopped
// answering.
const commitTimeout = 30 * time.Second

// Errors a store that stopped accepting work wraps, with
// store.ErrUnavailable.
var (
	// ErrUnreachable: the server cannot be reached or refuses work (a
	// connection failure, the server shutting down or out of space).
	// The store tries again with each write and each Ping.
	ErrUnreachable = errors.New("database unreachable")
	// ErrLogShrank: the audit log lost records that this store wrote
	// or had seen. Permanent.
	ErrLogShrank = sqldb.ErrLogShrank
)

// engine is PostgreSQL's side of the committer (sqldb.Engine).
type engine struct{ db *DB }

// Begin opens a batch's transaction under the audit lock, refusing
// while the store has a permanent fault.
func (e engine) Begin(ctx context.Context, durable bool) (sqldb.Batch, error) {
	db := e.db
	if err := db.refuse(); err != nil {
		return nil, err
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	b := batch{Q: pgq{tx}, tx: tx, db: db}
	if !durable {
		if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
			b.Rollback()
			return nil, err
		}
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "warden.audit."+db.schema); err != nil {
		b.Rollback()
		return nil, err
	}
	return b, nil
}

// Classify is noteConn: an unreachable server is a transient fault.
func (e engine) Classify(err error) error { return e.db.noteConn(err) }

// batch is a batch's transaction.
type batch struct {
	sqldb.Q
	tx pgx.Tx
	db *DB
}

// Commit announces the batch's request changes and commits.
func (b batch) Commit(ctx context.Context, c *sqldb.Chain) error {
	if changes := c.Changes(); len(changes) > 0 {
		notices := make([]string, len(changes))
		for i, ch := range changes {
			kind := changeCreated
			if ch.Ended {
				kind = changeEnded
			}
			notices[i] = encodeChange(kind, b.db.o.Origin, ch.Request)
		}
		if _, err := b.tx.Exec(ctx, `SELECT pg_notify($1, n) FROM unnest($2::text[]) AS n`, b.db.channel, notices); err != nil {
			return err
		}
	}
	return b.tx.Commit(ctx)
}

// Rollback rolls back unless committed.
func (b batch) Rollback() { _ = b.tx.Rollback(context.Background()) }

// refuse returns the fault while the store has a permanent one.
func (db *DB) refuse() error { return db.c.Refuse() }

// clearTransient clears a transient fault after a write or Ping went
// through.
func (db *DB) clearTransient() { db.c.ClearTransient() }

// noteConn turns an error that says the server cannot be reached (or
// cannot take work: shutting down, out of disk, out of connections)
// into a transient fault, which the next successful commit or Ping
// clears. Other errors are returned as they are.
func (db *DB) noteConn(err error) error {
	if err == nil || errors.Is(err, store.ErrUnavailable) {
		return err
	}
	if !unreachable(err) {
		return err
	}
	return db.fail(fmt.Errorf("%w: %w: %w", store.ErrUnavailable, ErrUnreachable, err), true)
}

// unreachable reports errors of the connection or the server's
// resources rather than of the statement.
func unreachable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code[:2] {
		case "08", // connection exception
			"53", // insufficient resources (disk full, out of memory, too many connections)
			"57", // operator intervention (admin shutdown, crash shutdown)
			"58": // system error (I/O)
			return true
		}
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) || pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ce *pgconn.ConnectError
	return errors.As(err, &ce) || pgconn.SafeToRetry(err)
}

// fail records err as the store's fault (sqldb.Committer.Fail).
func (db *DB) fail(err error, transient bool) error { return db.c.Fail(err, transient) }
