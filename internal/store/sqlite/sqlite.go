// Package sqlite implements store.Store on embedded SQLite
// (modernc.org/sqlite, pure Go) in WAL mode.
//
// A DB holds two pools on one file: a writer with exactly one connection
// whose transactions begin IMMEDIATE, so writers queue in Go instead of
// failing with SQLITE_BUSY when a deferred transaction tries to upgrade,
// and a pool of query-only readers that WAL lets run beside the writer.
// Every write, including each audit append, is committed with
// synchronous=FULL: a decision is on disk before AppendDecision returns
// (DESIGN.md invariant 8). Writes that carry audit records go through
// one committer goroutine that batches them (sqldb.Committer: group
// commit; SQLite's side in writer.go); a request's state change and its
// audit record share one transaction.
//
// The store keeps the audit chain's head outside the database too (the
// anchor: a sidecar file PATH.anchor, and any sinks in Options), checks
// the log against it when it opens, and refuses a log that lost records
// (ErrAuditLoss). It notices its file being deleted or replaced, and a
// full disk, and then refuses writes (Fault) until it can go on.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/wardenhq/warden/internal/anchor"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqldb"
)

// ErrAuditLoss is returned by Open when the audit log falls short of an
// anchor kept outside it: newest records missing, the database missing
// or replaced. The error also holds the *store.LossError. Nothing was
// written; restore the database, or, to accept the loss, move the
// anchor files aside (keep them: they are the evidence).
var ErrAuditLoss = sqldb.ErrAuditLoss

// AnchorSuffix names the sidecar anchor beside the database file.
const AnchorSuffix = ".anchor"

// busyTimeoutMS is how long a connection waits for a lock held by
// another process on the same file before failing with SQLITE_BUSY.
const busyTimeoutMS = 5000

// DB is a store.Store on one SQLite file. It is safe for concurrent use.
type DB struct {
	// Base is the SQL shared with the PostgreSQL store (internal/store/sqldb).
	sqldb.Base

	path string
	w    *sql.DB // one connection; BEGIN IMMEDIATE
	// q writes with synchronous=NORMAL: the agents' conversations, and
	// the committer's batches that hold no decision and no human answer
	// (writer.go, "Durability").
	q *sql.DB
	r *sql.DB // query-only readers

	o Options
	// ident is the database file as opened, to notice it deleted or
	// replaced.
	ident os.FileInfo
	// c is the committer (sqldb; SQLite's side in writer.go).
	c        *sqldb.Committer
	prepared map[*sql.DB]map[string]*sql.Stmt // the committer's statements, per pool
	// recoverMu guards lastRecover.
	recoverMu   sync.Mutex
	lastRecover time.Time
	// keeper writes the anchors; sources are those read back.
	keeper  *anchor.Keeper
	sources []anchor.Source

	closeOnce sync.Once
	closeErr  error
}

var _ store.Store = (*DB)(nil)

// Options configure a store.
type Options struct {
	// Anchors receive the audit head after each commit, besides the
	// sidecar file; those that are anchor.Sources are checked when the
	// store opens, and by VerifyChain.
	Anchors []anchor.Sink
	// MaxBatch bounds how many writes share one transaction (and one
	// fsync); 0 means 256. 1 turns group commit off.
	MaxBatch int
	// Committed, if set, is called on the committer's goroutine after
	// each commit that wrote audit records, with those records, before
	// any writer of the batch is answered.
	Committed func([]store.Decision)
	// Logger receives the store's faults and recoveries.
	Logger *slog.Logger

	// synchronous is the writer's PRAGMA synchronous: FULL by default,
	// NORMAL only for benchmarks to measure what durability costs.
	synchronous string
}

// Open opens the store at path with the default options.
func Open(ctx context.Context, path string) (*DB, error) {
	return OpenWith(ctx, path, Options{})
}

// OpenWith opens the store at path, creating the file (mode 0600) and
// any missing parent directories (mode 0700), and applies the
// migrations this binary knows. It refuses a database whose schema is
// newer than this binary (ErrSchemaTooNew), an in-memory database, which
// the connection pools could not share, and a log that lost records
// (ErrAuditLoss): a database file missing while an anchor knows of
// records, or one shorter than its anchor, or another one.
func OpenWith(ctx context.Context, path string, o Options) (*DB, error) {
	if o.synchronous == "" {
		o.synchronous = "FULL"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Logger = o.Logger.With("component", "store")
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("open store %q: want a file path (not empty, :memory: or a file: URI)", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	sources := anchorSources(abs, o.Anchors)
	if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
		// Do not create a fresh, empty log where one is known to have
		// been.
		if loss := sqldb.MissingLog(sources); loss != nil {
			return nil, fmt.Errorf("open store %s: %w: %w", abs, ErrAuditLoss, loss)
		}
	}
	if err := prepareFile(abs); err != nil {
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}

	w, err := sql.Open("sqlite", dsn(abs, url.Values{
		"_pragma": {
			fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS),
			"journal_mode(WAL)",
			"foreign_keys(1)",
			"synchronous(" + o.synchronous + ")",
			// After a checkpoint the WAL is cut back to this size, so a
			// burst (or a full disk) does not keep its space for good.
			"journal_size_limit(16777216)",
		},
		"_txlock": {"immediate"},
	}))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	db := &DB{path: abs, w: w, o: o, sources: sources}
	if db.ident, err = os.Stat(abs); err != nil {
		w.Close()
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	if err := db.init(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	relaxed := o.synchronous
	if relaxed == "FULL" {
		relaxed = "NORMAL"
	}
	q, err := sql.Open("sqlite", dsn(abs, url.Values{
		"_pragma": {
			fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS),
			"foreign_keys(1)",
			"synchronous(" + relaxed + ")",
		},
		"_txlock": {"immediate"},
	}))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	q.SetMaxOpenConns(1)
	q.SetMaxIdleConns(1)
	q.SetConnMaxLifetime(0)
	q.SetConnMaxIdleTime(0)
	db.q = q

	r, err := sql.Open("sqlite", dsn(abs, url.Values{
		"_pragma": {
			fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS),
			"foreign_keys(1)",
			"query_only(1)",
		},
	}))
	if err != nil {
		q.Close()
		w.Close()
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	n := max(4, runtime.NumCPU())
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	if err := r.PingContext(ctx); err != nil {
		r.Close()
		q.Close()
		w.Close()
		return nil, fmt.Errorf("open store %s: readers: %w", abs, err)
	}
	db.r = r
	db.c = sqldb.NewCommitter(engine{db}, sqldb.CommitOptions{
		MaxBatch: o.MaxBatch, Committed: o.Committed, Logger: o.Logger.With("path", abs),
		RecoverEvery: recoverEvery, Mine: "this process's last commit",
	})
	db.prepared = map[*sql.DB]map[string]*sql.Stmt{}
	db.Base = sqldb.NewBase(sqldb.Dialect{Name: "sqlite", Ord: "rowid"}, sqldb.Std(r), sqldb.Std(w), db.inTx, nil, db.c)
	lh, err := sqldb.CheckAnchors(ctx, db.inTx, sources)
	if err != nil {
		r.Close()
		q.Close()
		w.Close()
		return nil, fmt.Errorf("open store %s: %w", abs, err)
	}
	sinks := make([]anchor.Sink, 0, len(o.Anchors)+1)
	sinks = append(sinks, anchor.File{Path: abs + AnchorSuffix})
	db.keeper = anchor.NewKeeper(o.Logger, 0, append(sinks, o.Anchors...)...)
	db.c.Start(lh, db.keeper)
	return db, nil
}

// init checks the writer connection's journal mode and migrates.
func (db *DB) init(ctx context.Context) error {
	var mode string
	if err := db.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %q, want wal (is the file system able to share memory maps?)", mode)
	}
	ms, err := sqldb.LoadMigrations(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	return migrate(ctx, db.w, ms)
}

// prepareFile creates the database's directory (0700) and file (0600)
// before SQLite does, so neither is ever more open than that, and
// narrows an existing file (and its WAL and shared-memory files, which
// SQLite creates with the database file's mode) that is readable by
// others.
func prepareFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, fi.Mode().Perm()&0o700); err != nil {
				return err
			}
		}
	}
	return nil
}

// dsn is the modernc DSN for path: a file: URI, so that '?', '#' and '%'
// in the path are escaped rather than read as URI syntax.
func dsn(path string, params url.Values) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: params.Encode()}
	return u.String()
}

// inTx runs fn in a transaction (sqldb.TxFunc): writes on the writer
// connection (BEGIN IMMEDIATE), relaxed writes on the relaxed one,
// reads on a reader.
func (db *DB) inTx(ctx context.Context, kind sqldb.TxKind, fn func(tx sqldb.Q) error) error {
	pool, opts := db.w, (*sql.TxOptions)(nil)
	switch kind {
	case sqldb.TxRelaxed:
		pool = db.q
	case sqldb.TxRead:
		pool, opts = db.r, &sql.TxOptions{ReadOnly: true}
	}
	tx, err := pool.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(sqldb.Std(tx)); err != nil {
		return err
	}
	return tx.Commit()
}

// Path is the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Close stops the committer (writes still queued are refused), brings
// the anchors up to date, and closes the pools. The writer closes last,
// so the last connection to go checkpoints the WAL into the database
// file. Close is idempotent.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.c.Stop()
		defer func() {
			// The last connection to close checkpointed the WAL (synced):
			// the head is durable now, whatever the last batch's mode.
			if h := db.Head(); h.Seq > 0 && db.closeErr == nil {
				h.Time = time.Now().UTC()
				db.keeper.Post(h)
			}
			db.keeper.Close()
		}()
		var errs []error
		for _, m := range db.prepared {
			for _, st := range m {
				errs = append(errs, st.Close())
			}
		}
		if db.r != nil {
			errs = append(errs, db.r.Close())
		}
		if db.q != nil {
			errs = append(errs, db.q.Close())
		}
		errs = append(errs, db.w.Close())
		if err := errors.Join(errs...); err != nil {
			db.closeErr = fmt.Errorf("close store %s: %w", db.path, err)
		}
	})
	return db.closeErr
}
