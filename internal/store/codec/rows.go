package codec

// Scanner is a row as both drivers give it (database/sql's *sql.Row and
// *sql.Rows, pgx's Row and Rows): its columns scanned into dest.
type Scanner interface {
	Scan(dest ...any) error
}

// Rows is a result set as both drivers give it.
type Rows interface {
	Scanner
	Next() bool
	Err() error
}

// Collect scans every row of rows with scan. No rows is an empty slice,
// not nil, so that a list marshals as [] rather than null. The caller
// closes rows.
func Collect[T any](rows Rows, scan func(Scanner) (T, error)) ([]T, error) {
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
