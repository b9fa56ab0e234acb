package storetest

import (
	"context"
	"testing"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
	"github.com/wardenhq/warden/internal/store/sqldb"
)

// Backend is a store that keeps everything warden keeps: what the SQL
// backends (internal/store/sqlite, internal/store/postgres) are.
type Backend interface {
	store.Store
	store.CronStore
	store.BoardStore
	store.Credentials
	store.Conversations
	store.Hosts
	store.Processes
	store.ChatPosts
}

// RunBackend runs every suite of this package on the stores open
// returns (a new, empty one for each subtest, closed when the subtest
// ends), one subtest per suite. A store that is also a Tamperer gets
// Run's tampering tests.
func RunBackend(t *testing.T, open func(t *testing.T) Backend) {
	t.Helper()
	for _, s := range []struct {
		name string
		run  func(t *testing.T, open func(t *testing.T) Backend)
	}{
		{"Store", suiteOf(Run)},
		{"Cron", suiteOf(RunCron)},
		{"Board", suiteOf(RunBoard)},
		{"Credentials", suiteOf(RunCredentials)},
		{"Conversations", suiteOf(RunConversations)},
		{"Hosts", suiteOf(RunHosts)},
		{"Processes", suiteOf(RunProcesses)},
		{"ChatPosts", suiteOf(RunChatPosts)},
		{"FencedRuns", suiteOf(RunFencedRuns)},
	} {
		t.Run(s.name, func(t *testing.T) { s.run(t, open) })
	}
}

// suiteOf adapts a suite on stores of type S (an interface a Backend
// has) to Backends.
func suiteOf[S any](run func(t *testing.T, open func(t *testing.T) S)) func(t *testing.T, open func(t *testing.T) Backend) {
	return func(t *testing.T, open func(t *testing.T) Backend) {
		run(t, func(t *testing.T) S { return any(open(t)).(S) })
	}
}

// RewriteAudit overwrites every stored field of audit record d.Seq with
// d's, on a SQL store's audit table (q is a handle on it, whose
// append-only triggers the caller dropped): Tamperer.RewriteDecision
// for the SQL backends' tests.
func RewriteAudit(ctx context.Context, q sqldb.Q, d store.Decision) error {
	at, err := codec.Time(d.Time)
	if err != nil {
		return err
	}
	classes, err := codec.JSON("classes", d.Classes)
	if err != nil {
		return err
	}
	var owner *string
	if d.Owner != nil {
		s := string(d.Owner)
		owner = &s
	}
	n, err := q.Exec(ctx, `UPDATE audit SET time = ?, session = ?, owner = ?, owner_text = ?, kind = ?,
		payload = ?, payload_hash = ?, classes = ?, verdict = ?, rule = ?, request_id = ?, answered_by = ?,
		surface = ?, reason = ?, sandbox = ?, prev = ?, hash = ? WHERE seq = ?`,
		at, d.Session, owner, d.OwnerText, string(d.Kind), d.Payload, d.PayloadHash, classes, d.Verdict, d.Rule,
		d.RequestID, d.By, d.Surface, d.Reason, d.Sandbox, d.Prev, d.Hash, d.Seq)
	return oneChanged(n, err)
}

// DeleteAudit removes audit record seq from a SQL store's audit table
// (q as RewriteAudit's): Tamperer.DeleteDecision for the SQL backends'
// tests.
func DeleteAudit(ctx context.Context, q sqldb.Q, seq int64) error {
	return oneChanged(q.Exec(ctx, `DELETE FROM audit WHERE seq = ?`, seq))
}

// oneChanged is store.ErrNotFound for a write that changed no row.
func oneChanged(n int64, err error) error {
	if err == nil && n == 0 {
		err = store.ErrNotFound
	}
	return err
}
