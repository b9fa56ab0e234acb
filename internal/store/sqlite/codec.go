package sqlite

import (
	"time"

	"github.com/wardenhq/warden/internal/store/codec"
)

// The column encodings are internal/store/codec's, shared with the
// PostgreSQL store; these adapt them to database/sql's nullable types.

// encTime renders t for a NOT NULL time column.
func encTime(t time.Time) (string, error) { return codec.Time(t) }

func decTime(s string) (time.Time, error) { return codec.ParseTime(s) }

// scanner is a *sql.Row or *sql.Rows.
type scanner = codec.Scanner
