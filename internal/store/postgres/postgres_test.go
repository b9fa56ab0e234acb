package postgres

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
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

// tamperDB lets the conformance suite edit the audit table as someone
// with the database's owner role could: it drops the append-only
// trigger first.
type tamperDB struct{ *DB }

var _ storetest.Tamperer = tamperDB{}

func (db tamperDB) RewriteDecision(ctx context.Context, d store.Decision) error {
	at, err := codecTime(d.Time)
	if err != nil {
		return err
	}
	var owner *string
	if d.Owner != nil {
		s := string(d.Owner)
		owner = &s
	}
	classes, err := codecJSON(d.Classes)
	if err != nil {
		return err
	}
	tag, err := db.pool.Exec(ctx, `DROP TRIGGER IF EXISTS audit_append_only ON audit;`)
	if err != nil {
		return err
	}
	_ = tag
	tag, err = db.pool.Exec(ctx, `UPDATE audit SET time = $1, session = $2, owner = $3, owner_text = $4, kind = $5,
		payload = $6, payload_hash = $7, classes = $8, verdict = $9, rule = $10, request_id = $11, answered_by = $12,
		surface = $13, reason = $14, sandbox = $15, prev = $16, hash = $17 WHERE seq = $18`,
		at, d.Session, owner, d.OwnerText, string(d.Kind), d.Payload, d.PayloadHash, classes, d.Verdict, d.Rule,
		d.RequestID, d.By, d.Surface, d.Reason, d.Sandbox, d.Prev, d.Hash, d.Seq)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

func (db tamperDB) DeleteDecision(ctx context.Context, seq int64) error {
	if _, err := db.pool.Exec(ctx, `DROP TRIGGER IF EXISTS audit_append_only ON audit;`); err != nil {
		return err
	}
	tag, err := db.pool.Exec(ctx, `DELETE FROM audit WHERE seq = $1`, seq)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return tamperDB{openTest(t)} })
}

func TestCronConformance(t *testing.T) {
	storetest.RunCron(t, func(t *testing.T) store.CronStore { return openTest(t) })
}

func TestBoardConformance(t *testing.T) {
	storetest.RunBoard(t, func(t *testing.T) store.BoardStore { return openTest(t) })
}

func TestCredentialsConformance(t *testing.T) {
	storetest.RunCredentials(t, func(t *testing.T) store.Credentials { return openTest(t) })
}

func TestConversationsConformance(t *testing.T) {
	storetest.RunConversations(t, func(t *testing.T) store.Conversations { return openClosed(t) })
}

func codecTime(t time.Time) (string, error) { return codec.Time(t) }
func codecJSON(v any) (string, error)       { return codec.JSON("classes", v) }

func TestHostsConformance(t *testing.T) {
	storetest.RunHosts(t, func(t *testing.T) storetest.HostStore { return openTest(t) })
}

func TestProcessesConformance(t *testing.T) {
	storetest.RunProcesses(t, func(t *testing.T) store.Processes { return openClosed(t) })
}

func TestChatPostsConformance(t *testing.T) {
	storetest.RunChatPosts(t, func(t *testing.T) store.ChatPosts { return openTest(t) })
}

func TestFencedRunsConformance(t *testing.T) {
	storetest.RunFencedRuns(t, func(t *testing.T) storetest.FencedStore { return openTest(t) })
}
