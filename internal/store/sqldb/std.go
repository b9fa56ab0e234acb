package sqldb

import (
	"context"
	"database/sql"

	"github.com/wardenhq/warden/internal/store/codec"
)

// StdHandle is what database/sql's *sql.DB, *sql.Conn and *sql.Tx have
// in common.
type StdHandle interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Std adapts a database/sql handle to Q.
func Std(h StdHandle) Q { return std{h} }

type std struct{ h StdHandle }

func (s std) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := s.h.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (s std) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	rows, err := s.h.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return stdRows{rows}, nil
}

func (s std) QueryRow(ctx context.Context, query string, args ...any) codec.Scanner {
	return s.h.QueryRowContext(ctx, query, args...)
}

// stdRows drops Close's error: a read's error is reported by Err.
type stdRows struct{ *sql.Rows }

func (r stdRows) Close() { _ = r.Rows.Close() }
