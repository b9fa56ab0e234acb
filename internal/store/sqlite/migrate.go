package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrSchemaTooNew is returned by Open for a database written by a newer
// warden: this binary does not know its schema and must not touch it.
var ErrSchemaTooNew = errors.New("database schema is newer than this warden")

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one numbered schema step, applied in one transaction.
type migration struct {
	version int
	name    string
	sql     string
}

var migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// loadMigrations reads dir of fsys: files named NNNN_name.sql, numbered
// 1, 2, 3… without gaps or duplicates.
func loadMigrations(fsys fs.FS, dir string) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	var ms []migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if e.IsDir() || m == nil {
			return nil, fmt.Errorf("load migrations: %s: want a file named NNNN_name.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("load migrations: %w", err)
		}
		ms = append(ms, migration{version: v, name: m[2], sql: string(b)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("load migrations: %04d_%s.sql: want version %d (numbers start at 1, without gaps or repeats)", m.version, m.name, i+1)
		}
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("load migrations: none in %s", dir)
	}
	return ms, nil
}

// schemaVersion is the highest applied migration, 0 for a new file.
func schemaVersion(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var v int
	if err := q.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// migrate applies the migrations db has not seen, each with its
// schema_version row in one immediate transaction, so a failed step
// leaves the previous version intact and two processes opening one new
// file apply each step once.
func migrate(ctx context.Context, db *sql.DB, ms []migration) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
	version INTEGER PRIMARY KEY,
	name    TEXT NOT NULL,
	applied TEXT NOT NULL
) STRICT`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	latest := ms[len(ms)-1].version
	cur, err := schemaVersion(ctx, db)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if cur > latest {
		return fmt.Errorf("%w: it is at version %d, this binary knows up to %d; use a newer warden", ErrSchemaTooNew, cur, latest)
	}
	for _, m := range ms[cur:] {
		if err := apply(ctx, db, m); err != nil {
			return fmt.Errorf("migrate to %04d_%s: %w", m.version, m.name, err)
		}
	}
	return nil
}

// rebuildMarker in a migration's text asks for SQLite's table rebuild
// procedure: foreign keys off around the transaction (a DROP TABLE would
// otherwise cascade into the rows that reference the table), and a
// foreign_key_check before commit. It is how a CHECK constraint changes.
const rebuildMarker = "-- warden:rebuild"

func apply(ctx context.Context, db *sql.DB, m migration) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	rebuild := strings.Contains(m.sql, rebuildMarker)
	if rebuild {
		if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
			return err
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA foreign_keys = ON`)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	cur, err := schemaVersion(ctx, tx)
	if err != nil {
		return err
	}
	if cur >= m.version {
		return nil // another process got here first
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return err
	}
	if rebuild {
		rows, err := tx.QueryContext(ctx, `PRAGMA foreign_key_check`)
		if err != nil {
			return err
		}
		bad := rows.Next()
		rows.Close()
		if bad {
			return errors.New("the rebuilt tables break a foreign key")
		}
	}
	at, err := encTime(time.Now())
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, name, applied) VALUES (?, ?, ?)`, m.version, m.name, at); err != nil {
		return err
	}
	return tx.Commit()
}
