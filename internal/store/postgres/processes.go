package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/internal/store"
)

// RecordProcess is sqldb.Base's, for records that name their machine:
// hosts on other machines share this table, and a pid or boot id means
// nothing away from its machine.
func (db *DB) RecordProcess(ctx context.Context, p store.Process) error {
	if p.Machine == "" {
		return fmt.Errorf("record process %s: %w", p.ID, errors.New("no machine (a shared store's records must say where their process runs)"))
	}
	return db.Base.RecordProcess(ctx, p)
}
