package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqldb"
	"github.com/wardenhq/warden/internal/store/storetest"
)

// TestMain fails the package if a test leaves a goroutine behind, such
// as database/sql's connection opener of a DB that was never closed.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// openTest opens a store on a new file under t.TempDir(); the caller
// closes it.
func openTest(t testing.TB) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// openClosed is openTest with Close registered as cleanup.
func openClosed(t testing.TB) *DB {
	t.Helper()
	db := openTest(t)
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return db
}

// tamperDB lets the conformance suite edit the audit table the way
// someone with the file could: it drops the append-only triggers first.
type tamperDB struct{ *DB }

var _ storetest.Tamperer = tamperDB{}

func (db tamperDB) dropTriggers(ctx context.Context) error {
	_, err := db.w.ExecContext(ctx, `DROP TRIGGER IF EXISTS audit_no_update; DROP TRIGGER IF EXISTS audit_no_delete`)
	return err
}

func (db tamperDB) RewriteDecision(ctx context.Context, d store.Decision) error {
	if err := db.dropTriggers(ctx); err != nil {
		return err
	}
	return storetest.RewriteAudit(ctx, sqldb.Std(db.w), d)
}

func (db tamperDB) DeleteDecision(ctx context.Context, seq int64) error {
	if err := db.dropTriggers(ctx); err != nil {
		return err
	}
	return storetest.DeleteAudit(ctx, sqldb.Std(db.w), seq)
}

func TestConformance(t *testing.T) {
	storetest.RunBackend(t, func(t *testing.T) storetest.Backend { return tamperDB{openTest(t)} })
}

func TestOpenFileModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "warden")
	path := filepath.Join(dir, "warden.db")
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.AppendDecision(t.Context(), store.Decision{Verdict: "allow"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want os.FileMode
	}{
		{filepath.Dir(dir), 0o700},
		{dir, 0o700},
		{path, 0o600},
		{path + "-wal", 0o600},
		{path + "-shm", 0o600},
	} {
		fi, err := os.Stat(tc.path)
		if err != nil {
			t.Error(err)
			continue
		}
		if got := fi.Mode().Perm(); got != tc.want {
			t.Errorf("%s: mode %v, want %v", tc.path, got, tc.want)
		}
	}
	if db.Path() != path {
		t.Errorf("Path() = %q, want %q", db.Path(), path)
	}
}

func TestOpenNarrowsAnOpenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("mode %v, want 0600", got)
	}
}

func TestOpenPathNeedingEscapes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a b?c#d%20e", "warden.db")
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendDecision(t.Context(), store.Decision{Verdict: "allow"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the database is not where it was asked to be: %v", err)
	}
}

func TestOpenRefusesNonFiles(t *testing.T) {
	for _, p := range []string{"", ":memory:", "file:x.db?mode=memory"} {
		if db, err := Open(t.Context(), p); err == nil {
			db.Close()
			t.Errorf("Open(%q): no error", p)
		}
	}
}

func TestPragmas(t *testing.T) {
	db := openClosed(t)
	ctx := t.Context()
	for _, tc := range []struct {
		pool   *sql.DB
		pragma string
		want   string
	}{
		{db.w, "journal_mode", "wal"},
		{db.w, "synchronous", "2"}, // FULL
		{db.w, "foreign_keys", "1"},
		{db.w, "busy_timeout", "5000"},
		{db.r, "journal_mode", "wal"},
		{db.r, "query_only", "1"},
		{db.r, "busy_timeout", "5000"},
	} {
		var got string
		if err := tc.pool.QueryRowContext(ctx, "PRAGMA "+tc.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("PRAGMA %s = %q, want %q", tc.pragma, got, tc.want)
		}
	}
	if _, err := db.r.ExecContext(ctx, `DELETE FROM grants`); err == nil {
		t.Error("a reader connection could write")
	}
	if st := db.w.Stats(); st.MaxOpenConnections != 1 {
		t.Errorf("writer pool allows %d connections, want 1", st.MaxOpenConnections)
	}
}

func TestAuditIsAppendOnly(t *testing.T) {
	db := openClosed(t)
	ctx := t.Context()
	if _, err := db.AppendDecision(ctx, store.Decision{Verdict: "deny"}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`UPDATE audit SET verdict = 'allow'`, `DELETE FROM audit`} {
		if _, err := db.w.ExecContext(ctx, q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v, want the append-only trigger's error", q, err)
		}
	}
	if n, err := db.VerifyChain(ctx); n != 1 || err != nil {
		t.Errorf("VerifyChain = %d, %v", n, err)
	}
}

func TestReopenKeepsDataAndSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := db.AppendDecision(t.Context(), store.Decision{Verdict: "deny", Kind: action.Shell, Payload: "rm -rf /"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	db, err = Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.Decisions(t.Context(), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Hash != d.Hash {
		t.Errorf("after reopening: %+v, want the one record %s", got, d.Hash)
	}
	var versions, latest int
	if err := db.r.QueryRowContext(t.Context(), `SELECT count(*), max(version) FROM schema_version`).Scan(&versions, &latest); err != nil {
		t.Fatal(err)
	}
	ms, err := sqldb.LoadMigrations(migrationFiles, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	if versions != len(ms) || latest != len(ms) {
		t.Errorf("schema_version has %d rows up to %d, want %d", versions, latest, len(ms))
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.ExecContext(t.Context(), `INSERT INTO schema_version (version, name, applied) VALUES (999, 'future', 'x')`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(t.Context(), path)
	if err == nil {
		db.Close()
		t.Fatal("Open of a version-999 database: no error")
	}
	if !errors.Is(err, ErrSchemaTooNew) || !strings.Contains(err.Error(), "999") {
		t.Errorf("Open = %v, want ErrSchemaTooNew naming version 999", err)
	}
}

// TestEmbeddedMigrations: the migrations built in load (the loader's
// rules are sqldb's, tested there).
func TestEmbeddedMigrations(t *testing.T) {
	if _, err := sqldb.LoadMigrations(migrationFiles, "migrations"); err != nil {
		t.Errorf("embedded migrations: %v", err)
	}
}

// TestMigrateStepByStep upgrades a database one migration at a time and
// shows that a failing migration leaves the previous version intact.
func TestMigrateStepByStep(t *testing.T) {
	ctx := t.Context()
	w, err := sql.Open("sqlite", dsn(filepath.Join(t.TempDir(), "m.db"), map[string][]string{"_txlock": {"immediate"}}))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	v1 := sqldb.Migration{Version: 1, Name: "a", SQL: `CREATE TABLE a (x INTEGER); INSERT INTO a VALUES (1);`}
	v2 := sqldb.Migration{Version: 2, Name: "b", SQL: `ALTER TABLE a ADD COLUMN y TEXT; CREATE TABLE b (z INTEGER);`}
	bad := sqldb.Migration{Version: 3, Name: "bad", SQL: `CREATE TABLE c (z INTEGER); INSERT INTO nowhere VALUES (1);`}

	version := func() int {
		t.Helper()
		v, err := schemaVersion(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if err := migrate(ctx, w, []sqldb.Migration{v1}); err != nil {
		t.Fatal(err)
	}
	if v := version(); v != 1 {
		t.Fatalf("version %d after v1", v)
	}
	if err := migrate(ctx, w, []sqldb.Migration{v1, v2}); err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, w, []sqldb.Migration{v1, v2}); err != nil {
		t.Fatalf("migrating an up-to-date database: %v", err)
	}
	if v := version(); v != 2 {
		t.Fatalf("version %d after v2", v)
	}
	if err := migrate(ctx, w, []sqldb.Migration{v1, v2, bad}); err == nil || !strings.Contains(err.Error(), "0003_bad") {
		t.Errorf("failing migration: %v, want an error naming 0003_bad", err)
	}
	if v := version(); v != 2 {
		t.Errorf("version %d after a failed v3, want 2", v)
	}
	var n int
	if err := w.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = 'c'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("the failed migration's table: count %d, %v; want it rolled back", n, err)
	}
	if err := migrate(ctx, w, []sqldb.Migration{v1}); !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("binary knowing only v1 on a v2 database: %v, want ErrSchemaTooNew", err)
	}
}

// TestAppendIsVisibleToAnotherHandle shows an appended record is in the
// file, not in a cache of this handle, as soon as AppendDecision
// returns.
func TestAppendIsVisibleToAnotherHandle(t *testing.T) {
	a := openClosed(t)
	b, err := Open(t.Context(), a.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := range 3 {
		if _, err := a.AppendDecision(t.Context(), store.Decision{Verdict: "deny", Time: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if n, err := b.VerifyChain(t.Context()); n != i+1 || err != nil {
			t.Fatalf("other handle after append %d: %d, %v", i+1, n, err)
		}
	}
	// Two handles on one file append to one chain: the immediate
	// transaction serialises processes as well as goroutines.
	if _, err := b.AppendDecision(t.Context(), store.Decision{Verdict: "allow"}); err != nil {
		t.Fatal(err)
	}
	if n, err := a.VerifyChain(t.Context()); n != 4 || err != nil {
		t.Errorf("VerifyChain = %d, %v; want 4, nil", n, err)
	}
}

// TestRebuildKeepsReferencingRows: 0005 rebuilds cron_jobs to widen its
// kind constraint; the runs that reference the jobs must survive (with
// foreign keys on, a plain DROP TABLE would cascade into them).
func TestRebuildKeepsReferencingRows(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "m.db")
	w, err := sql.Open("sqlite", dsn(path, map[string][]string{"_txlock": {"immediate"}, "_pragma": {"foreign_keys(1)"}}))
	if err != nil {
		t.Fatal(err)
	}
	w.SetMaxOpenConns(1)
	ms, err := sqldb.LoadMigrations(migrationFiles, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, w, ms[:4]); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO cron_jobs (name, schedule, kind, steps, created) VALUES ('j', '@daily', 'script', '["true"]', '2026-01-01T00:00:00.000000000Z')`,
		`INSERT INTO cron_runs (id, job, started_by, started, status) VALUES ('r1', 'j', 'manual', '2026-01-01T00:00:00.000000000Z', 'running')`,
	} {
		if _, err := w.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := migrate(ctx, w, ms); err != nil {
		t.Fatal(err)
	}
	var runs int
	if err := w.QueryRowContext(ctx, `SELECT count(*) FROM cron_runs`).Scan(&runs); err != nil || runs != 1 {
		t.Fatalf("cron runs after the rebuild: %d (%v), want 1", runs, err)
	}
	if _, err := w.ExecContext(ctx, `INSERT INTO cron_jobs (name, schedule, kind, steps, created) VALUES ('p', '@daily', 'prompt', '["hi"]', '2026-01-01T00:00:00.000000000Z')`); err != nil {
		t.Fatalf("a prompt job after 0005: %v", err)
	}
	var fk int
	if err := w.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 1 {
		t.Fatalf("foreign_keys = %d (%v) after the rebuild, want 1", fk, err)
	}
	w.Close()
}
