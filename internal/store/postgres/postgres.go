// Package postgres implements warden's stores on PostgreSQL (pgx), so
// that several hosts can share one database: requests, grants, sessions,
// the audit chain, cron, the kanban board, credentials, conversations,
// and the hosts' leases. It passes the same conformance suite as the
// SQLite store (internal/store/storetest).
//
// # Across hosts
//
//   - Every request state change is one compare-and-swap (UPDATE …
//     WHERE state = 'pending'), committed with its audit record, and
//     announced with pg_notify in the same transaction (so only a
//     committed change is announced). WatchRequests delivers the
//     announcements of every host; a lost one only delays a wake until
//     the watcher's next poll: the committed row is the truth.
//   - The audit chain stays one chain: every transaction that appends
//     takes one advisory lock (per schema) before it reads the head.
//   - A cron slot is claimed once: due jobs are locked FOR UPDATE SKIP
//     LOCKED, advanced, and their runs inserted under UNIQUE (job,
//     slot). A kanban task is claimed once the same way.
//   - Leases (hosts, task runs) use the server's clock.
//
// # Writes
//
// Writes that carry audit records go through one committer goroutine
// that batches them (group commit), as in the SQLite store: one
// transaction, each op in its own savepoint, one commit. A batch with a
// decision or a human answer commits with synchronous_commit on; one of
// system transitions only (asks, expiries, withdrawals) with it off.
// Anchors (the sidecar file and the config's sinks) only receive heads
// of durable commits. The store checks the log against its anchors when
// it opens and refuses one that lost records (ErrAuditLoss); while the
// server cannot be reached it refuses work (Fault) and recovers by
// itself.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wardenhq/warden/internal/anchor"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
	"github.com/wardenhq/warden/internal/store/sqldb"
)

// ErrAuditLoss is returned by Open when the audit log falls short of an
// anchor kept outside it (the error also holds the *store.LossError).
var ErrAuditLoss = sqldb.ErrAuditLoss

// ErrNotPostgres: the store address is not a postgres:// URL.
var ErrNotPostgres = errors.New("not a PostgreSQL address")

// DB is every warden store on one PostgreSQL database (the schema the
// connection's search_path names first). It is safe for concurrent use.
type DB struct {
	// Base is the SQL shared with the SQLite store (internal/store/sqldb).
	sqldb.Base

	pool   *pgxpool.Pool
	cfg    *pgxpool.Config
	o      Options
	schema string
	// channel is the NOTIFY channel of this schema's request changes.
	channel string
	// c is the committer (sqldb; PostgreSQL's side in writer.go).
	c *sqldb.Committer

	// followed is the head Follow read last.
	followMu sync.Mutex
	followed anchor.Head

	keeper  *anchor.Keeper
	sources []anchor.Source

	closeOnce sync.Once
	closeErr  error
}

var (
	_ store.Store         = (*DB)(nil)
	_ store.CronStore     = (*DB)(nil)
	_ store.BoardStore    = (*DB)(nil)
	_ store.Credentials   = (*DB)(nil)
	_ store.Conversations = (*DB)(nil)
	_ store.Hosts         = (*DB)(nil)
	_ store.Processes     = (*DB)(nil)
	_ store.ChatPosts     = (*DB)(nil)
)

// Options configure a store.
type Options struct {
	// Anchor is this host's sidecar anchor file (the audit head as this
	// host last saw it); "" keeps none. Anchors are further sinks; those
	// that are anchor.Sources are checked at open and by VerifyChain.
	Anchor  string
	Anchors []anchor.Sink
	// Origin names this process in its change announcements, so that
	// WatchRequests can tell its own changes from other hosts'.
	Origin string
	// MaxBatch bounds how many writes share one transaction; 0 means
	// 256, 1 turns group commit off.
	MaxBatch int
	// MaxConns bounds the pool; 0 means 16.
	MaxConns int32
	// Committed, if set, is called on the committer's goroutine after
	// each commit that wrote audit records, with those records.
	Committed func([]store.Decision)
	// Logger receives faults and recoveries.
	Logger *slog.Logger
}

// IsURL reports whether s names a PostgreSQL database (postgres:// or
// postgresql://).
func IsURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql")
}

// Redact returns the URL without its password, for logs and banners.
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "postgres://(unparsable)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// Open connects to the database at dsn (a postgres:// URL; pgx reads
// the usual PG* variables and ~/.pgpass for what it leaves out), applies
// the migrations this binary knows under an advisory lock, refuses a
// schema newer than this binary (ErrSchemaTooNew), checks the audit log
// against the anchors (ErrAuditLoss), and starts the committer.
func Open(ctx context.Context, dsn string, o Options) (*DB, error) {
	if !IsURL(dsn) {
		return nil, fmt.Errorf("open store %s: %w: want postgres://…", Redact(dsn), ErrNotPostgres)
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 16
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Logger = o.Logger.With("component", "store")
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", Redact(dsn), err)
	}
	cfg.MaxConns = o.MaxConns
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "warden"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", Redact(dsn), err)
	}
	db := &DB{pool: pool, cfg: cfg, o: o}
	db.c = sqldb.NewCommitter(engine{db}, sqldb.CommitOptions{
		MaxBatch: o.MaxBatch, Committed: o.Committed, Logger: o.Logger, Timeout: commitTimeout,
		DurableHeads: true, Mine: "this host's last view of the log",
	})
	db.Base = sqldb.NewBase(dialect, pgq{pool}, pgq{pool}, db.sqlTx, db.noteConn, db.c)
	db.Base.SetRefuse(db.refuse)
	fail := func(err error) (*DB, error) {
		pool.Close()
		return nil, fmt.Errorf("open store %s: %w", Redact(dsn), err)
	}
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&db.schema); err != nil {
		return fail(err)
	}
	if db.schema == "" {
		return fail(errors.New("no schema: the search_path names none that exists"))
	}
	db.channel = "warden_requests." + db.schema
	if err := db.migrate(ctx); err != nil {
		return fail(err)
	}
	db.sources = sqldb.AnchorSources(o.Anchor, o.Anchors)
	lh, err := sqldb.CheckAnchors(ctx, db.sqlTx, db.sources)
	if err != nil {
		return fail(err)
	}
	var sinks []anchor.Sink
	if o.Anchor != "" {
		sinks = append(sinks, anchor.File{Path: o.Anchor})
	}
	db.keeper = anchor.NewKeeper(o.Logger, 0, append(sinks, o.Anchors...)...)
	db.c.Start(lh, db.keeper)
	return db, nil
}

// Schema is the schema the store lives in.
func (db *DB) Schema() string { return db.schema }

// Ping checks that the server answers and the schema is the one this
// binary knows: readiness.
func (db *DB) Ping(ctx context.Context) error {
	v, err := schemaVersion(ctx, db.pool)
	if err != nil {
		return db.noteConn(fmt.Errorf("ping store: %w", err))
	}
	if latest := len(migrations); v != latest {
		return fmt.Errorf("ping store: schema is at version %d, this binary wants %d", v, latest)
	}
	db.clearTransient()
	return nil
}

// Close stops the committer (writes still queued are refused), brings
// the anchors up to date, and closes the pool. Close is idempotent.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.c.Stop()
		db.keeper.Close()
		db.pool.Close()
	})
	return db.closeErr
}

// querier is a pool, a connection or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// scanner is a pgx.Row or pgx.Rows.
type scanner = codec.Scanner

// queryRows runs q and scans every row with scan; no rows is an empty
// slice, not nil, so that a list marshals as [] rather than null.
func queryRows[T any](ctx context.Context, q querier, scan func(scanner) (T, error), sql string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return codec.Collect(rows, scan)
}

// inTx runs fn in a transaction on the pool and commits it.
func (db *DB) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	if err := db.refuse(); err != nil {
		return err
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return db.noteConn(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := fn(tx); err != nil {
		return db.noteConn(err)
	}
	return db.noteConn(tx.Commit(ctx))
}

// dialect is PostgreSQL's for the shared SQL: row locks, and advisory
// locks where two hosts could otherwise write apart.
var dialect = sqldb.Dialect{
	Name:      "postgres",
	ForUpdate: " FOR UPDATE",
	Ord:       "ord",
	Lock: func(ctx context.Context, tx sqldb.Q, key string) error {
		_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(?))`, key)
		return err
	},
}

// sqlTx runs fn in a transaction on the pool (sqldb.TxFunc); a relaxed
// one commits without waiting for the disk (synchronous_commit off); a
// read is one snapshot (repeatable read), which a store with a fault
// still serves (it reads the log to tell what was lost).
func (db *DB) sqlTx(ctx context.Context, kind sqldb.TxKind, fn func(tx sqldb.Q) error) error {
	var opts pgx.TxOptions
	if kind == sqldb.TxRead {
		opts = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	} else if err := db.refuse(); err != nil {
		return err
	}
	tx, err := db.pool.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if kind == sqldb.TxRelaxed {
		if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
			return err
		}
	}
	if err := fn(pgq{tx}); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// noRows reports whether err is pgx's "no rows".
func noRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }
