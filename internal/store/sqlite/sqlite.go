// Package sqlite implements store.Store on embedded SQLite
// (modernc.org/sqlite, pure Go) in WAL mode.
//
// A DB holds two pools on one file: a writer with exactly one connection
// whose transactions begin IMMEDIATE, so writers queue in Go instead of
// failing with SQLITE_BUSY when a deferred transaction tries to upgrade,
// and a pool of query-only readers that WAL lets run beside the writer.
// Every write, including each audit append, is committed with
// synchronous=FULL: a decision is on disk before AppendDecision returns
// (DESIGN.md invariant 8).
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/wardenhq/warden/internal/store"
)

// busyTimeoutMS is how long a connection waits for a lock held by
// another process on the same file before failing with SQLITE_BUSY.
const busyTimeoutMS = 5000

// DB is a store.Store on one SQLite file. It is safe for concurrent use.
type DB struct {
	path string
	w    *sql.DB // one connection; BEGIN IMMEDIATE
	// q writes the request lifecycle with synchronous=NORMAL: a request
	// that is lost in a crash had no waiter left anyway, and every action
	// a request lets run is preceded by an audit commit on w (FULL), whose
	// fsync of the WAL makes the request rows before it durable too.
	q *sql.DB
	r *sql.DB // query-only readers

	closeOnce sync.Once
	closeErr  error
}

var _ store.Store = (*DB)(nil)

// options are the knobs tests and benchmarks turn; Open uses the
// defaults.
type options struct {
	// synchronous is the writer's PRAGMA synchronous: FULL by default,
	// NORMAL only to measure what durability costs.
	synchronous string
}

// Open opens the store at path, creating the file (mode 0600) and any
// missing parent directories (mode 0700), and applies the migrations
// this binary knows. It refuses a database whose schema is newer than
// this binary (ErrSchemaTooNew) and an in-memory database, which the
// two connection pools could not share.
func Open(ctx context.Context, path string) (*DB, error) {
	return open(ctx, path, options{synchronous: "FULL"})
}

func open(ctx context.Context, path string, o options) (*DB, error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("open store %q: want a file path (not empty, :memory: or a file: URI)", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
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
	db := &DB{path: abs, w: w}
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
	ms, err := loadMigrations(migrationFiles, "migrations")
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

// Path is the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Close closes both pools. The writer closes last, so the last
// connection to go checkpoints the WAL into the database file. Close is
// idempotent.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		var errs []error
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
