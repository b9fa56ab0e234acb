package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"
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

var migrations = mustLoad(migrationFiles, "migrations")

var migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

func mustLoad(fsys fs.FS, dir string) []migration {
	ms, err := loadMigrations(fsys, dir)
	if err != nil {
		panic(err)
	}
	return ms
}

// loadMigrations reads dir of fsys: files named NNNN_name.sql, numbered
// 1, 2, 3… without gaps or duplicates. The PostgreSQL schema has its
// own numbering, apart from the SQLite store's.
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
			return nil, fmt.Errorf("load migrations: %04d_%s.sql: want version %d", m.version, m.name, i+1)
		}
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("load migrations: none in %s", dir)
	}
	return ms, nil
}

// schemaVersion is the highest applied migration, 0 for a new schema.
func schemaVersion(ctx context.Context, q querier) (int, error) {
	var exists bool
	if err := q.QueryRow(ctx, `SELECT to_regclass('schema_version') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// migrate applies the migrations the schema has not seen, each with its
// schema_version row in one transaction, holding a session advisory
// lock (per schema) throughout: of several hosts starting at once, one
// migrates and the others wait, then find the work done. Each host
// checks the version and refuses a schema newer than it knows.
func (db *DB) migrate(ctx context.Context) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()
	key := "warden.migrate." + db.schema
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext($1))`, key); err != nil {
		return fmt.Errorf("migrate: take the migration lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtext($1))`, key)
	cur, err := schemaVersion(ctx, conn)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	latest := migrations[len(migrations)-1].version
	if cur > latest {
		return fmt.Errorf("%w: it is at version %d, this binary knows up to %d; use a newer warden", ErrSchemaTooNew, cur, latest)
	}
	if cur == 0 {
		if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
	version integer PRIMARY KEY,
	name    text NOT NULL,
	applied timestamptz NOT NULL DEFAULT now()
)`); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	}
	for _, m := range migrations[cur:] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_version (version, name) VALUES ($1, $2)`, m.version, m.name)
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate to %04d_%s: %w", m.version, m.name, err)
		}
	}
	return nil
}
