package postgres

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wardenhq/warden/internal/store/sqldb"
)

// ErrSchemaTooNew is returned by Open for a database written by a newer
// warden: this binary does not know its schema and must not touch it.
var ErrSchemaTooNew = sqldb.ErrSchemaTooNew

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations are the PostgreSQL schema's steps; they have their own
// numbering, apart from the SQLite store's.
var migrations = func() []sqldb.Migration {
	ms, err := sqldb.LoadMigrations(migrationFiles, "migrations")
	if err != nil {
		panic(err)
	}
	return ms
}()

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
	if cur == 0 {
		if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
	version integer PRIMARY KEY,
	name    text NOT NULL,
	applied timestamptz NOT NULL DEFAULT now()
)`); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	}
	return sqldb.Migrate(migrations, cur, func(m sqldb.Migration) error {
		return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_version (version, name) VALUES ($1, $2)`, m.Version, m.Name)
			return err
		})
	})
}
