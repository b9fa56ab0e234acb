// Package codec is how the SQL stores write Go values into text
// columns and read them back: times as fixed-width UTC text with
// nanoseconds (text order is time order, and a time reads back exactly,
// which the audit chain's hashes need), JSON as the exact bytes given or
// encoding/json's output. The SQLite and PostgreSQL stores share it, so
// a row reads the same from either.
package codec

import (
	"encoding/json"
	"fmt"
	"time"
)

// TimeLayout is how times are stored: UTC, fixed width, nanoseconds.
const TimeLayout = "2006-01-02T15:04:05.000000000Z"

// Time renders t for a NOT NULL time column.
func Time(t time.Time) (string, error) {
	u := t.UTC()
	if y := u.Year(); y < 0 || y > 9999 {
		return "", fmt.Errorf("time %v: year outside 0000-9999", t)
	}
	return u.Format(TimeLayout), nil
}

// OptTime renders t for a nullable time column: nil for the zero time.
func OptTime(t time.Time) (*string, error) {
	if t.IsZero() {
		return nil, nil
	}
	s, err := Time(t)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// ParseTime reads a stored time.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(TimeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", s, err)
	}
	return t, nil
}

// ParseOptTime reads a nullable stored time: nil is the zero time.
func ParseOptTime(s *string) (time.Time, error) {
	if s == nil {
		return time.Time{}, nil
	}
	return ParseTime(*s)
}

// Raw stores a caller's JSON as given; nil when empty. It refuses bytes
// that are not JSON, which could not be marshalled back.
func Raw(field string, b json.RawMessage) (*string, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("%s is not valid JSON", field)
	}
	s := string(b)
	return &s, nil
}

// ParseRaw reads a nullable JSON column as given.
func ParseRaw(s *string) json.RawMessage {
	if s == nil {
		return nil
	}
	return json.RawMessage(*s)
}

// JSON marshals v for a JSON column.
func JSON(field string, v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", field, err)
	}
	return string(b), nil
}

// ParseJSON unmarshals a JSON column into v. A nil slice was stored as
// null and comes back nil; an empty one as [] and comes back empty, so
// a record hashes the same after the round trip.
func ParseJSON(field, s string, v any) error {
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return fmt.Errorf("decode stored %s: %w", field, err)
	}
	return nil
}
