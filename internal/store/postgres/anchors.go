package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/wardenhq/warden/internal/anchor"
	"github.com/wardenhq/warden/internal/store/sqldb"
)

// Anchors with several hosts. Each host keeps its own sidecar file (the
// audit head as it last saw it: after its own durable commits, and as
// it follows the others' appends) and pushes to the config's sinks. The
// log is one chain, so every anchor, whichever host wrote it, must name
// a record the shared log still holds with that hash (sqldb's
// anchors.go).

// Follow moves this host's anchors up the shared log, which other
// hosts append to, so that its sidecar vouches for the whole chain and
// not only for its own appends. Each call reads the head and anchors the
// head the previous call read, if the log still holds it: by then it is
// durable whatever the commit that wrote it (the server flushes
// asynchronous commits within a fraction of a second). The host calls
// it about once a second.
func (db *DB) Follow(ctx context.Context) error {
	var cur, prev anchor.Head
	err := db.sqlTx(ctx, sqldb.TxRead, func(tx sqldb.Q) error {
		db.followMu.Lock()
		prev = db.followed
		db.followMu.Unlock()
		lh, err := sqldb.ReadLogHead(ctx, tx, []int64{prev.Seq})
		if err != nil {
			return err
		}
		cur = lh.Head()
		if prev.Seq > 0 && (lh.Hashes[prev.Seq] != prev.Hash || lh.First != prev.Store) {
			prev = anchor.Head{} // rolled back by a server crash, or worse: the committer and VerifyChain judge
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("follow the audit head: %w", db.noteConn(err))
	}
	db.followMu.Lock()
	db.followed = cur
	db.followMu.Unlock()
	if prev.Seq > 0 && prev.Seq > db.Head().Seq {
		prev.Time = time.Now().UTC()
		db.keeper.Post(prev)
	}
	return nil
}
