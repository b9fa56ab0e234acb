package sqlite

import (
	"database/sql"
	"encoding/json"
	"time"

	"github.com/wardenhq/warden/internal/store/codec"
)

// The column encodings are internal/store/codec's, shared with the
// PostgreSQL store; these adapt them to database/sql's nullable types.

// encTime renders t for a NOT NULL time column.
func encTime(t time.Time) (string, error) { return codec.Time(t) }

// encOptTime renders t for a nullable time column: NULL for the zero
// time.
func encOptTime(t time.Time) (any, error) {
	if t.IsZero() {
		return nil, nil
	}
	return encTime(t)
}

func decTime(s string) (time.Time, error) { return codec.ParseTime(s) }

func decOptTime(s sql.NullString) (time.Time, error) {
	if !s.Valid {
		return time.Time{}, nil
	}
	return decTime(s.String)
}

// encRaw stores a caller's JSON as given; NULL when empty. It refuses
// bytes that are not JSON, which could not be marshalled back.
func encRaw(field string, b json.RawMessage) (any, error) {
	s, err := codec.Raw(field, b)
	if err != nil || s == nil {
		return nil, err
	}
	return *s, nil
}

func decRaw(s sql.NullString) json.RawMessage {
	if !s.Valid {
		return nil
	}
	return json.RawMessage(s.String)
}

// encJSON marshals v for a JSON column.
func encJSON(field string, v any) (string, error) { return codec.JSON(field, v) }

// decJSON unmarshals a JSON column into v (codec.ParseJSON).
func decJSON(field, s string, v any) error { return codec.ParseJSON(field, s, v) }

// scanner is a *sql.Row or *sql.Rows.
type scanner = codec.Scanner
