package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// timeLayout is how times are stored: UTC, fixed width, nanoseconds, so
// that comparing the text compares the times.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// encTime renders t for a NOT NULL time column.
func encTime(t time.Time) (string, error) {
	u := t.UTC()
	if y := u.Year(); y < 0 || y > 9999 {
		return "", fmt.Errorf("time %v: year outside 0000-9999", t)
	}
	return u.Format(timeLayout), nil
}

// encOptTime renders t for a nullable time column: NULL for the zero
// time.
func encOptTime(t time.Time) (any, error) {
	if t.IsZero() {
		return nil, nil
	}
	return encTime(t)
}

func decTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", s, err)
	}
	return t, nil
}

func decOptTime(s sql.NullString) (time.Time, error) {
	if !s.Valid {
		return time.Time{}, nil
	}
	return decTime(s.String)
}

// encRaw stores a caller's JSON as given; NULL when empty. It refuses
// bytes that are not JSON, which could not be marshalled back.
func encRaw(field string, b json.RawMessage) (any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("%s is not valid JSON", field)
	}
	return string(b), nil
}

func decRaw(s sql.NullString) json.RawMessage {
	if !s.Valid {
		return nil
	}
	return json.RawMessage(s.String)
}

// encJSON marshals v for a JSON column.
func encJSON(field string, v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", field, err)
	}
	return string(b), nil
}

// decJSON unmarshals a JSON column into v. A nil slice was stored as
// null and comes back nil; an empty one as [] and comes back empty, so
// a record hashes the same after the round trip.
func decJSON(field, s string, v any) error {
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return fmt.Errorf("decode stored %s: %w", field, err)
	}
	return nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}
