package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wardenhq/warden/internal/store/sqldb"
)

// ErrSchemaTooNew is returned by Open for a database written by a newer
// warden: this binary does not know its schema and must not touch it.
var ErrSchemaTooNew = sqldb.ErrSchemaTooNew

//go:embed migrations/*.sql
var migrationFiles embed.FS

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

// migrate applies the migrations db has not seen (sqldb.Migrate), each
// with its schema_version row in one immediate transaction, so a failed
// step leaves the previous version intact and two processes opening one
// new file apply each step once.
func migrate(ctx context.Context, db *sql.DB, ms []sqldb.Migration) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
	version INTEGER PRIMARY KEY,
	name    TEXT NOT NULL,
	applied TEXT NOT NULL
) STRICT`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	cur, err := schemaVersion(ctx, db)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return sqldb.Migrate(ms, cur, func(m sqldb.Migration) error { return apply(ctx, db, m) })
}

// rebuildMarker in a migration's text asks for SQLite's table rebuild
// procedure: foreign keys off around the transaction (a DROP TABLE would
// otherwise cascade into the rows that reference the table), and a
// foreign_key_check before commit. It is how a CHECK constraint changes.
const rebuildMarker = "-- warden:rebuild"

func apply(ctx context.Context, db *sql.DB, m sqldb.Migration) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	rebuild := strings.Contains(m.SQL, rebuildMarker)
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
	if cur >= m.Version {
		return nil // another process got here first
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
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
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, name, applied) VALUES (?, ?, ?)`, m.Version, m.Name, at); err != nil {
		return err
	}
	return tx.Commit()
}
