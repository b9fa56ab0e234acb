package postgres

import (
	"context"
	"fmt"

	"github.com/wardenhq/warden/internal/store/sqldb"
)

// VerifyChain recomputes every hash in one repeatable-read transaction
// (seqs 1, 2, 3… without gaps, each Prev the previous Hash, each Hash
// store.ChainHash of its record), then checks that the log holds the
// head this store last saw and the heads its anchors keep. A shortfall
// is a *store.LossError, which matches store.ErrChainBroken.
func (db *DB) VerifyChain(ctx context.Context) (int, error) {
	n, err := sqldb.VerifyLog(ctx, db.sqlTx, db.sources, db.Head(), "this host's last view of the log")
	if err != nil {
		return n, fmt.Errorf("verify audit chain: %w", err)
	}
	return n, nil
}
