package postgres

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/wardenhq/warden/internal/store/codec"
	"github.com/wardenhq/warden/internal/store/sqldb"
)

// pgq adapts a pgx pool, connection or transaction to sqldb.Q: the
// shared queries' ? placeholders become $1, $2, …, and pgx's "no rows"
// becomes database/sql's.
type pgq struct{ q querier }

func (p pgq) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := p.q.Exec(ctx, rebind(query), args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (p pgq) Query(ctx context.Context, query string, args ...any) (sqldb.Rows, error) {
	return p.q.Query(ctx, rebind(query), args...)
}

func (p pgq) QueryRow(ctx context.Context, query string, args ...any) codec.Scanner {
	return pgRow{p.q.QueryRow(ctx, rebind(query), args...)}
}

type pgRow struct{ pgx.Row }

func (r pgRow) Scan(dest ...any) error {
	err := r.Row.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return sql.ErrNoRows
	}
	return err
}

// rebound caches rebind's answers: the shared queries are a fixed set
// of strings, built from constants.
var rebound sync.Map

// rebind numbers query's ? placeholders ($1, $2, …), leaving those in
// quoted strings and identifiers alone.
func rebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	if s, ok := rebound.Load(query); ok {
		return s.(string)
	}
	var b strings.Builder
	n := 0
	var quote byte
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	s := b.String()
	rebound.Store(query, s)
	return s
}
