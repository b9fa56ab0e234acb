package postgres

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/postgres/pgtest"
	"github.com/wardenhq/warden/internal/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// openTest opens a store in a fresh schema; the caller closes it.
func openTest(t testing.TB) *DB {
	t.Helper()
	db, err := Open(context.Background(), pgtest.Schema(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// tamperDB lets the conformance suite edit the audit table as someone
// with the database's owner role could: it drops the append-only
// trigger first.
type tamperDB struct{ *DB }

var _ storetest.Tamperer = tamperDB{}

func (db tamperDB) dropTrigger(ctx context.Context) error {
	_, err := db.pool.Exec(ctx, `DROP TRIGGER IF EXISTS audit_append_only ON audit`)
	return err
}

func (db tamperDB) RewriteDecision(ctx context.Context, d store.Decision) error {
	if err := db.dropTrigger(ctx); err != nil {
		return err
	}
	return storetest.RewriteAudit(ctx, pgq{db.pool}, d)
}

func (db tamperDB) DeleteDecision(ctx context.Context, seq int64) error {
	if err := db.dropTrigger(ctx); err != nil {
		return err
	}
	return storetest.DeleteAudit(ctx, pgq{db.pool}, seq)
}

func TestConformance(t *testing.T) {
	storetest.RunBackend(t, func(t *testing.T) storetest.Backend { return tamperDB{openTest(t)} })
}
