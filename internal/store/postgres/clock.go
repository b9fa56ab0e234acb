package postgres

import "time"

// serverLater is the server's clock d from now (sqldb.Dialect.Later),
// which PostgreSQL keeps leases by and SQLite does not: the hosts
// sharing a database share it, whatever their own clocks say.
func serverLater(d time.Duration) (string, []any, error) {
	if d == 0 {
		return `now()`, nil, nil
	}
	return `(now() + ?::bigint * interval '1 microsecond')`, []any{d.Microseconds()}, nil
}
