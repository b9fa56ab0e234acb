package sqldb

import (
	"context"

	"github.com/wardenhq/warden/internal/store"
)

// SetRefuse makes the writes that check it (exec, exec1 and those that
// call refused) fail with refuse's error while it returns one: the
// PostgreSQL store refuses work once its log lost records. The SQLite
// store sets none; its faults stop the committer instead.
func (b *Base) SetRefuse(refuse func() error) { b.refuse = refuse }

// refused is why the store takes no writes now, or nil.
func (b *Base) refused() error {
	if b.refuse == nil {
		return nil
	}
	return b.refuse()
}

// exec runs one write on the write handle, unless the store refuses
// writes, and returns how many rows it changed.
func (b *Base) exec(ctx context.Context, query string, args ...any) (int64, error) {
	if err := b.refused(); err != nil {
		return 0, err
	}
	n, err := b.w.Exec(ctx, query, args...)
	if err != nil {
		return 0, b.note(err)
	}
	return n, nil
}

// exec1 is exec of a write that must change a row: none is
// store.ErrNotFound.
func (b *Base) exec1(ctx context.Context, query string, args ...any) error {
	n, err := b.exec(ctx, query, args...)
	if err == nil && n == 0 {
		err = store.ErrNotFound
	}
	return err
}
