package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqldb"
)

// The committer (sqldb.Committer: group commit) runs on SQLite as
// follows.
//
// Durability. A batch holding a durable op — a decision, or a human's
// answer (approved or denied) — commits with synchronous=FULL on the
// writer connection. A batch of system transitions only (a question
// asked, expired or withdrawn) commits with synchronous=NORMAL on the
// second writer connection: it survives a crash of the process, and a
// power cut can lose it only together with its request row (one
// transaction), leaving a request that never was, or one still pending
// that the next start withdraws, with its record; nothing runs on such
// a transition. The WAL is append-only, so the next FULL commit's fsync
// makes every earlier commit durable too. Anchors only ever receive
// durable heads, so a power cut cannot leave an anchor ahead of the log.
//
// The head is read inside the immediate transaction, which holds the
// database's write lock: appends of this process and of others on the
// same file form one chain. The committer's statements are prepared
// once per writer connection (wtx). A full disk stops the store until
// space returns (classify, recover); a database file deleted or
// replaced stops it for good (checkFile).

// recoverEvery is how often a store whose disk filled up tries to
// recover (checkpoint its WAL and write again).
const recoverEvery = 500 * time.Millisecond

// Errors a store that stopped accepting work wraps, with
// store.ErrUnavailable.
var (
	// ErrDiskFull: a write failed for want of space (or an I/O error).
	// The store retries by itself and recovers when space returns.
	ErrDiskFull = errors.New("disk full or failing")
	// ErrFileGone: the database file was deleted or replaced while the
	// store had it open; writes would go to a file nobody will see
	// again. Permanent: restart the host once the file is restored.
	ErrFileGone = errors.New("database file deleted or replaced")
	// ErrLogShrank: the audit log lost records that this store wrote
	// (someone removed them behind its back). Permanent.
	ErrLogShrank = sqldb.ErrLogShrank
)

// chain is the audit log's head while a batch runs (sqldb.Chain).
type chain = sqldb.Chain

// submit hands fn to the committer and waits for its batch to commit
// (sqldb.Committer.Submit), for the writes of this package that share
// the committer's batches: fn gets the batch's transaction with its
// prepared statements.
func (db *DB) submit(ctx context.Context, durable bool, fn func(ctx context.Context, tx *wtx, c *chain) error) error {
	return db.c.Submit(ctx, durable, func(ctx context.Context, tx sqldb.Q, c *sqldb.Chain) error {
		return fn(ctx, tx.(batch).tx, c)
	})
}

// engine is SQLite's side of the committer (sqldb.Engine).
type engine struct{ db *DB }

// Begin opens a batch's immediate transaction: on the writer connection
// (synchronous=FULL) when durable, on the relaxed one otherwise. It
// refuses while the store has a fault it cannot recover from now, or
// its file is no longer the one it opened.
func (e engine) Begin(ctx context.Context, durable bool) (sqldb.Batch, error) {
	db := e.db
	if _, err := db.c.Fault(); err != nil && !db.recover(ctx) {
		return nil, err
	}
	if err := db.checkFile(); err != nil {
		return nil, err
	}
	pool := db.q
	if durable {
		pool = db.w
	}
	stmts, err := db.prepare(ctx, pool)
	if err != nil {
		return nil, err
	}
	tx, err := pool.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	w := &wtx{Tx: tx, stmts: stmts}
	return batch{Q: sqldb.Std(w), tx: w}, nil
}

// Classify is classify: a full disk is a transient fault.
func (e engine) Classify(err error) error { return e.db.classify(err) }

// Recover is recover.
func (e engine) Recover(ctx context.Context) bool { return e.db.recover(ctx) }

// batch is a batch's transaction: its prepared statements serve the
// committer's queries.
type batch struct {
	sqldb.Q
	tx *wtx
}

// Commit commits; SQLite announces nothing.
func (b batch) Commit(context.Context, *sqldb.Chain) error { return b.tx.Commit() }

// Rollback rolls back unless committed.
func (b batch) Rollback() { _ = b.tx.Rollback() }

// preparedSQL are the statements wtx prepares: the committer's, and
// those of this package's writes through it.
var preparedSQL = append(sqldb.CommitterSQL(), sqlSessionInsert)

// wtx is the committer's transaction: the statements it runs again and
// again are prepared once per connection rather than parsed each time
// (SQLite's parser was a third of a small batch's CPU).
type wtx struct {
	*sql.Tx
	stmts map[string]*sql.Stmt
}

// ExecContext runs q, prepared if it is one of preparedSQL.
func (t *wtx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if st, ok := t.stmts[q]; ok {
		return t.Tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, q, args...)
}

// QueryRowContext runs q, prepared if it is one of preparedSQL.
func (t *wtx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	if st, ok := t.stmts[q]; ok {
		return t.Tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, q, args...)
}

// QueryContext runs q, prepared if it is one of preparedSQL.
func (t *wtx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if st, ok := t.stmts[q]; ok {
		return t.Tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, q, args...)
}

// prepare prepares preparedSQL on pool once (committer goroutine only).
func (db *DB) prepare(ctx context.Context, pool *sql.DB) (map[string]*sql.Stmt, error) {
	if m, ok := db.prepared[pool]; ok {
		return m, nil
	}
	m := make(map[string]*sql.Stmt, len(preparedSQL))
	for _, q := range preparedSQL {
		st, err := pool.PrepareContext(ctx, q)
		if err != nil {
			for _, s := range m {
				s.Close()
			}
			return nil, fmt.Errorf("prepare the committer's statements: %w", err)
		}
		m[q] = st
	}
	db.prepared[pool] = m
	return m, nil
}

// CheckFile checks that the database file is still the one the store
// opened; if not, the store refuses all work from now on (Fault) and the
// error says why.
func (db *DB) CheckFile() error { return db.checkFile() }

// checkFile fails the store for good if its file is no longer the one
// it opened: deleted (writes would land in an unlinked inode and vanish
// with the last descriptor) or replaced by another file.
func (db *DB) checkFile() error {
	fi, err := os.Stat(db.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return db.fail(fmt.Errorf("%w: %w: %s was deleted while the host had it open; restore it and restart the host", store.ErrUnavailable, ErrFileGone, db.path), false)
	case err != nil:
		return fmt.Errorf("check database file: %w", err)
	case !os.SameFile(fi, db.ident):
		return db.fail(fmt.Errorf("%w: %w: %s was replaced by another file while the host had it open; restart the host", store.ErrUnavailable, ErrFileGone, db.path), false)
	}
	return nil
}

// classify turns a write error into a fault when it is the disk's (full,
// or failing I/O): the store then refuses work until it recovers. Other
// errors are returned as they are.
func (db *DB) classify(err error) error {
	if err == nil || errors.Is(err, store.ErrUnavailable) {
		return err
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR:
			return db.fail(fmt.Errorf("%w: %w: %w", store.ErrUnavailable, ErrDiskFull, err), true)
		}
	}
	return err
}

// fail records err as the store's fault (sqldb.Committer.Fail).
func (db *DB) fail(err error, transient bool) error { return db.c.Fail(err, transient) }

// recover tries to bring a store whose disk filled up back: checkpoint
// the WAL into the database and truncate it (giving its space back),
// which succeeds only once there is room. At most every recoverEvery.
func (db *DB) recover(ctx context.Context) bool {
	db.recoverMu.Lock()
	defer db.recoverMu.Unlock()
	if _, err := db.c.Fault(); err == nil {
		return true
	}
	if db.c.Refuse() != nil || time.Since(db.lastRecover) < recoverEvery {
		return false // a permanent fault, or too soon
	}
	db.lastRecover = time.Now()
	var busy, logPages, done int
	if err := db.w.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logPages, &done); err != nil || busy != 0 {
		return false
	}
	// A write proves there is room again: it rewrites a row as it is,
	// which still puts a page in the WAL.
	if err := db.probe(ctx); err != nil {
		return false
	}
	db.c.ClearTransient()
	return true
}

func (db *DB) probe(ctx context.Context) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET name = name WHERE version = (SELECT max(version) FROM schema_version)`); err != nil {
		return err
	}
	return tx.Commit()
}
