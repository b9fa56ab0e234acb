package sqldb

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
)

// ErrSchemaTooNew is returned by Migrate for a database written by a
// newer warden: this binary does not know its schema and must not touch
// it.
var ErrSchemaTooNew = errors.New("database schema is newer than this warden")

// Migration is one numbered schema step, applied in one transaction
// together with its schema_version row. Each backend numbers its own
// (their schemas are written apart, in each engine's types).
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// String is the migration's file name without .sql (0003_board), for
// errors.
func (m Migration) String() string { return fmt.Sprintf("%04d_%s", m.Version, m.Name) }

var migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// LoadMigrations reads dir of fsys (a backend's embedded migrations):
// files named NNNN_name.sql, numbered 1, 2, 3… without gaps or
// duplicates.
func LoadMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	var ms []Migration
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
		ms = append(ms, Migration{Version: v, Name: m[2], SQL: string(b)})
	}
	slices.SortFunc(ms, func(a, b Migration) int { return a.Version - b.Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("load migrations: %s.sql: want version %d (numbers start at 1, without gaps or repeats)", m, i+1)
		}
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("load migrations: none in %s", dir)
	}
	return ms, nil
}

// Migrate brings a schema at version cur up to ms (LoadMigrations'): it
// refuses a schema newer than the last of ms (ErrSchemaTooNew), and
// runs apply on each migration after cur, in order, stopping at the
// first that fails. apply runs the step and records it in
// schema_version in one transaction, so a failed step leaves the
// previous version intact; how (locks, the engine's DDL rules) is the
// backend's.
func Migrate(ms []Migration, cur int, apply func(Migration) error) error {
	latest := ms[len(ms)-1].Version
	if cur > latest {
		return fmt.Errorf("%w: it is at version %d, this binary knows up to %d; use a newer warden", ErrSchemaTooNew, cur, latest)
	}
	for _, m := range ms[cur:] {
		if err := apply(m); err != nil {
			return fmt.Errorf("migrate to %s: %w", m, err)
		}
	}
	return nil
}
